package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fluxcd/pkg/ssa"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// Taking over from Helm: an object that `helm install` or `helm upgrade` made has
// its fields owned by Helm's field manager. Once convoy applies the same chart, both
// managers own them, and a field the chart later drops stays on the object, owned by
// Helm alone: server-side apply only removes the fields nobody else owns. At the
// first apply of an object that exists and that the Release did not apply before
// (not in its previous inventory), convoy moves the fields of HelmFieldManagers to
// its own Apply entry, as Flux's helm-controller and kubectl's csaupgrade do: one
// JSON patch of metadata.managedFields, sent only when one of those managers owns
// fields of the object.

// HelmFieldManagers are the field managers whose fields convoy takes over: Helm's
// CLI and SDK name their requests after the binary ("helm"), with server-side
// apply (Helm 4: an Apply entry) or client-side creates, updates and patches
// (Helm 3, and Helm 4 with --server-side=false: an Update entry). Names match
// exactly, so that other tools whose name starts with "helm" (helm-controller,
// helmfile's own requests) keep theirs. Entries of subresources (status) are left.
var HelmFieldManagers = []ssa.FieldManager{
	{Name: "helm", ExactMatch: true, OperationType: metav1.ManagedFieldsOperationApply},
	{Name: "helm", ExactMatch: true, OperationType: metav1.ManagedFieldsOperationUpdate},
}

// managedFieldsOf reads metadata.managedFields of a server's answer, without
// decoding the rest.
func managedFieldsOf(raw []byte) ([]metav1.ManagedFieldsEntry, error) {
	var head struct {
		Metadata struct {
			ManagedFields []metav1.ManagedFieldsEntry `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	return head.Metadata.ManagedFields, nil
}

// takeOverPatch is the JSON patch that moves the fields of HelmFieldManagers in
// managed to convoy's Apply entry; nil when none of them owns fields.
func takeOverPatch(managed []metav1.ManagedFieldsEntry) ([]byte, error) {
	// convoy's Apply entry first: PatchReplaceFieldsManagers keeps an entry of its
	// own after one it merged into it (a second convoy/Apply entry), as the API
	// server lists helm's Apply entry first when it is older.
	ordered := slices.Clone(managed)
	slices.SortStableFunc(ordered, func(x, y metav1.ManagedFieldsEntry) int {
		return cmpBool(isConvoysApply(y), isConvoysApply(x))
	})
	u := &unstructured.Unstructured{}
	u.SetManagedFields(ordered)
	patches, err := ssa.PatchReplaceFieldsManagers(u, HelmFieldManagers, v1alpha1.FieldManager)
	if err != nil || len(patches) == 0 {
		return nil, err
	}
	return json.Marshal(patches)
}

// takeOver sends the take-over patch of o (takeOverPatch of managed, its live
// managedFields) and returns the object's resourceVersion after it; "" when no
// patch was needed.
func (a *Applier) takeOver(ctx context.Context, o *planned, managed []metav1.ManagedFieldsEntry) (string, error) {
	ref := Describe(o.entry.ObjectReference)
	patch, err := takeOverPatch(managed)
	if err != nil {
		return "", fmt.Errorf("take over the fields of Helm's field managers of %s: %w", ref, err)
	}
	if patch == nil {
		return "", nil
	}
	target := objectFor(o.entry.ObjectReference)
	if err := a.client.Patch(ctx, target, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return "", fmt.Errorf("take over the fields of Helm's field managers of %s: %w", ref, err)
	}
	return target.GetResourceVersion(), nil
}

// takeOverLive is takeOver of an object the apply did not write (its dry run found
// it unchanged): its managedFields are read first (metadata only).
func (a *Applier) takeOverLive(ctx context.Context, o *planned) (string, error) {
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(gvkOf(o.entry.ObjectReference))
	if err := a.client.Get(ctx, client.ObjectKeyFromObject(o.Object.Object), live); err != nil {
		return "", fmt.Errorf("read the field managers of %s: %w", Describe(o.entry.ObjectReference), err)
	}
	return a.takeOver(ctx, o, live.ManagedFields)
}

func isConvoysApply(e metav1.ManagedFieldsEntry) bool {
	return e.Manager == v1alpha1.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
}

// cmpBool orders false before true.
func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	default:
		return 1
	}
}
