package apply

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// answer is the server's answer to a dry run or an apply, kept as the server sent it:
// what the applier reads of most answers is the object's uid, resourceVersion and
// generation (head), and only a dry run that finds an object written since it was seen
// needs the whole object (object). Decoding every answer into an unstructured object
// was half of what the controller allocated in a resync of 10,000 Releases (decision 0140).
//
// It is the object given to the client's Patch: a runtime.Unstructured (the embedded
// object names the kind, namespace and name the request is for), which the client's
// JSON decoder fills through UnmarshalJSON, as it fills an unstructured.Unstructured.
type answer struct {
	unstructured.Unstructured
	// raw is the answer's JSON; nil before the answer.
	raw []byte
	// head is its metadata that the applier reads.
	head answerHead
}

type answerHead struct {
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
	Generation      int64  `json:"generation"`
}

// UnmarshalJSON keeps b and reads its metadata. The embedded object keeps the kind
// and name of the request, which the decoder checks.
func (a *answer) UnmarshalJSON(b []byte) error {
	var head struct {
		Metadata answerHead `json:"metadata"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	a.raw, a.head = b, head.Metadata
	return nil
}

// object decodes the whole answer.
func (a *answer) object() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(a.raw); err != nil {
		return nil, err
	}
	return u, nil
}

// send makes the server-side apply of o's rendered object (convoy's field manager,
// forced) with opts (a dry run, a field validation) and returns the server's answer.
func (a *Applier) send(ctx context.Context, o *planned, opts ...client.PatchOption) (*answer, error) {
	u := o.Object.Object
	data, err := o.bodyOf()
	if err != nil {
		return nil, err
	}
	ans := &answer{}
	ans.SetGroupVersionKind(u.GroupVersionKind())
	ans.SetNamespace(u.GetNamespace())
	ans.SetName(u.GetName())
	opts = append(opts, client.ForceOwnership, client.FieldOwner(v1alpha1.FieldManager))
	if err := a.client.Patch(ctx, ans, client.RawPatch(types.ApplyPatchType, data), opts...); err != nil {
		return nil, err
	}
	if ans.raw == nil {
		return nil, fmt.Errorf("apply of %s %s/%s: the client did not decode the server's answer", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	return ans, nil
}
