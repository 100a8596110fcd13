package registry

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// KeepGenerationOnDelete is the etcd storage of a kind whose generation changes only
// with its spec (Releases, ReleaseSets), except that the write that marks an object
// as being deleted (sets metadata.deletionTimestamp) keeps its metadata.generation. The generic registry raises the generation of an object with
// finalizers when it marks it (markAsDeleting, as it does for CRDs), but a Release's
// generation changes only with its spec (the sync policy: "Only a change to spec
// changes the generation"), and the Releases of higher cluster waves compare it with
// the observedGeneration of its conditions: a raised one held them until the deletion
// ended, for good when a pre-delete hook failed (decision 0161). The deletion is seen
// through metadata.deletionTimestamp.
type KeepGenerationOnDelete struct {
	storage.Interface
}

// GuaranteedUpdate keeps the generation of the write that sets deletionTimestamp.
func (s KeepGenerationOnDelete) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	keep := func(input runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		before, err := meta.Accessor(input)
		if err != nil {
			return tryUpdate(input, res)
		}
		generation, deleting := before.GetGeneration(), before.GetDeletionTimestamp() != nil
		out, ttl, err := tryUpdate(input, res)
		if err != nil || out == nil || deleting {
			return out, ttl, err
		}
		if after, aerr := meta.Accessor(out); aerr == nil && after.GetDeletionTimestamp() != nil {
			// Only a deletion sets deletionTimestamp: an update keeps the stored one
			// (rest.BeforeUpdate), and it does not change the spec.
			after.SetGeneration(generation)
		}
		return out, ttl, err
	}
	return s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, keep, cachedExistingObject)
}
