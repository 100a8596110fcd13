package release

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/clock"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// SyncREST serves POST releases/<name>/sync[?force=true][&render=<ref>]. RBAC sees it
// as create on releases/sync. It writes sync-requested-at (and with force
// sync-force-requested-at), and sync-requested-render for a request bound to a render
// (removed by a plain one), in one read-modify-write in storage, retried there on
// conflict, and answers with the Release as stored. Concurrent writes to one Release
// in this process take turns (locks) before the read-modify-write.
type SyncREST struct {
	store *genericregistry.Store
	clock clock.PassiveClock
	locks *keyLock
}

var _ rest.Connecter = &SyncREST{}
var _ rest.Storage = &SyncREST{}

// New returns empty SyncOptions: the kind of the subresource is the kind of its
// options, as pods/exec's is PodExecOptions. The API server gives admission the
// options of a /sync as its object, with this kind; a ValidatingAdmissionPolicy or a
// webhook matching CONNECT converts the object to the kind, which fails when the kind
// is another (Release). /sync still answers with the Release (Connect).
func (r *SyncREST) New() runtime.Object { return &convoyv1alpha1.SyncOptions{} }

// Destroy does nothing: the main resource's storage owns the store.
func (r *SyncREST) Destroy() {}

// ConnectMethods allows only POST.
func (r *SyncREST) ConnectMethods() []string { return []string{http.MethodPost} }

// NewConnectOptions returns the query parameters of /sync (force, render).
func (r *SyncREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &convoyv1alpha1.SyncOptions{}, false, ""
}

// Connect returns the handler of one /sync request.
func (r *SyncREST) Connect(ctx context.Context, name string, options runtime.Object, responder rest.Responder) (http.Handler, error) {
	opts, ok := options.(*convoyv1alpha1.SyncOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %T", options)
	}
	return http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		obj, err := r.Sync(ctx, name, *opts)
		if err != nil {
			responder.Error(err)
			return
		}
		responder.Object(http.StatusOK, obj)
	}), nil
}

// Sync records a sync request on the Release name in the namespace of ctx. With
// opts.Render the request approves that render only: it is accepted when the render is
// the Release's current render (status.render.ref) or, for a pinned Release, the
// pinned one, and then sync-requested-render holds its full ref; otherwise Sync
// answers 409 Conflict and writes nothing. The check and the write are one
// read-modify-write, so the render checked is the render of the Release written.
func (r *SyncREST) Sync(ctx context.Context, name string, opts convoyv1alpha1.SyncOptions) (*convoyv1alpha1.Release, error) {
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	// The transform runs inside the storage's GuaranteedUpdate with the object just
	// read; on a conflict the storage reads again and runs it again. Its error is the
	// answer as it is.
	update := rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		rel := old.(*convoyv1alpha1.Release).DeepCopy()
		var render string
		if opts.Render != "" {
			full, ok := boundRender(rel, convoyv1alpha1.RenderRef(opts.Render))
			if !ok {
				return nil, apierrors.NewConflict(convoyv1alpha1.Resource(convoyv1alpha1.ResourceReleases), name,
					errors.New(notCurrentRender(ns, name, rel, convoyv1alpha1.RenderRef(opts.Render))))
			}
			render = full
		}
		requestSync(rel, r.clock.Now(), opts.Force, render)
		return rel, nil
	})
	unlock, err := r.locks.lockRelease(ctx, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	obj, _, err := r.store.Update(ctx, name, update, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc,
		false, &metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*convoyv1alpha1.Release), nil
}

// keepStrategy is the strategy of the store /sync writes through: the transform
// above already made the new object from the stored one, so nothing else changes.
type keepStrategy struct {
	strategy
}

func (keepStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
