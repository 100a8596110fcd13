package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fluxcd/pkg/ssa"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kumodo.io/convoy/api/v1alpha1"
)

// Taking over from Helm: an object that `helm install` or `helm upgrade` made has
// its fields owned by Helm's field manager. Once convoy applies the same chart, both
// managers own them, and a field the chart later drops stays on the object, owned by
// Helm alone: server-side apply only removes the fields nobody else owns. At an
// apply of an object whose managedFields list an entry of HelmFieldManagers, convoy
// moves their fields to its own Apply entry, as Flux's helm-controller and kubectl's
// csaupgrade do: one JSON patch of metadata.managedFields. What decides is the
// object's managedFields (the answer of the dry run, or of the apply), not the
// Release's inventory: the controller lists objects in the inventory before it
// applies them, so a take-over an error or a restart cut short (the patch failed,
// convoy was killed between the inventory's write and the patch), or an object
// adopted after a restore, is taken over at the next apply. An object the dry run
// found unchanged is applied for it when the dry run's answer lists such an entry;
// one without costs nothing more. When they owned fields that the render lacks
// (Helm's own markers, app.kubernetes.io/managed-by and the meta.helm.sh
// annotations, in every chart; a value the Release's values leave out), the object
// is applied once more, which removes them: the apply that takes an object over
// leaves it as rendered.

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

// helmManages says whether raw, a server's answer (an object's JSON), lists an entry
// of HelmFieldManagers in its metadata.managedFields. An answer without the JSON
// string "helm" (an object Helm never wrote, or one taken over) is only scanned, not
// decoded: the steady state pays no decoding for it.
func helmManages(raw []byte) (bool, error) {
	if !bytes.Contains(raw, []byte(`"helm"`)) {
		return false, nil
	}
	managed, err := managedFieldsOf(raw)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(managed, isHelms), nil
}

// takeOverPatch is the JSON patch that moves the fields of HelmFieldManagers in
// managed to convoy's Apply entry; nil when none of them owns fields. lacks says
// whether they own fields that convoy's Apply entry does not (fields the render
// lacks, which an apply removes once convoy owns them); true when that cannot be
// told.
func takeOverPatch(managed []metav1.ManagedFieldsEntry) (patch []byte, lacks bool, err error) {
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
		return nil, false, err
	}
	if patch, err = json.Marshal(patches); err != nil {
		return nil, false, err
	}
	return patch, helmOwnsMore(managed), nil
}

// helmOwnsMore says whether the entries of HelmFieldManagers in managed own a field
// that convoy's Apply entry does not; true when an entry cannot be decoded or is of
// another API version than convoy's.
func helmOwnsMore(managed []metav1.ManagedFieldsEntry) bool {
	set := func(e metav1.ManagedFieldsEntry) (*fieldpath.Set, bool) {
		s := &fieldpath.Set{}
		if e.FieldsV1 == nil {
			return s, true
		}
		return s, s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)) == nil
	}
	convoys, version := &fieldpath.Set{}, ""
	for _, e := range managed {
		if isConvoysApply(e) {
			s, ok := set(e)
			if !ok {
				return true
			}
			convoys, version = s, e.APIVersion
		}
	}
	for _, e := range managed {
		if !isHelms(e) {
			continue
		}
		s, ok := set(e)
		if !ok || e.APIVersion != version || !s.Difference(convoys).Empty() {
			return true
		}
	}
	return false
}

// isHelms says whether e is an entry of HelmFieldManagers (the main resource's).
func isHelms(e metav1.ManagedFieldsEntry) bool {
	return e.Subresource == "" && slices.ContainsFunc(HelmFieldManagers, func(m ssa.FieldManager) bool {
		return e.Manager == m.Name && e.Operation == m.OperationType
	})
}

// takeOver sends the take-over patch of o, from the managedFields of applied (the
// answer of its apply), and records the object's resourceVersion after it in o.
// When Helm's managers owned fields that the render lacks, o is applied again (with
// opts), which removes them now that convoy owns them, and takeOver returns that
// apply's answer; nil when there was no second apply.
func (a *Applier) takeOver(ctx context.Context, o *planned, applied *answer, opts ...client.PatchOption) (*answer, error) {
	ref := Describe(o.entry.ObjectReference)
	managed, err := managedFieldsOf(applied.raw)
	if err != nil {
		return nil, fmt.Errorf("read the field managers of %s: %w", ref, err)
	}
	patch, lacks, err := takeOverPatch(managed)
	if err != nil {
		return nil, fmt.Errorf("take over the fields of Helm's field managers of %s: %w", ref, err)
	}
	if patch == nil {
		return nil, nil
	}
	target := objectFor(o.entry.ObjectReference)
	if err := a.client.Patch(ctx, target, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return nil, fmt.Errorf("take over the fields of Helm's field managers of %s: %w", ref, err)
	}
	o.liveVersion = target.GetResourceVersion()
	if !lacks {
		return nil, nil
	}
	again, err := a.send(ctx, o, opts...)
	if err != nil {
		return nil, fmt.Errorf("apply %s again once its fields were taken over from Helm: %w", ref, err)
	}
	return again, nil
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
