package apply

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/testenv"
)

func TestPruneDeletesWhatTheRenderDropped(t *testing.T) {
	e := integration(t)
	group := testenv.DNSName(t.Name()) + ".example.com"
	kept := configMap(e.ns, "kept", nil)
	dropped := configMap(e.ns, "dropped", nil)
	droppedLater := configMap(e.ns, "dropped-later", nil)
	disabled := with(configMap(e.ns, "disabled", nil), annotate(v1alpha1.AnnotationPrune, v1alpha1.PruneDisabled))
	takenOver := configMap(e.ns, "taken-over", nil)
	definition := with(crd(group, "Widget"), label(v1alpha1.LabelReleaseName, release.Name))
	definition = with(definition, label(v1alpha1.LabelReleaseNamespace, release.Namespace))
	old := []Object{
		{Wave: 0, Object: kept}, {Wave: 0, Object: dropped}, {Wave: 2, Object: droppedLater},
		{Wave: 1, Object: disabled}, {Wave: 1, Object: takenOver}, {Wave: 0, Object: definition},
	}
	e.applyAll(t, old...)
	// Another Release takes takenOver over.
	relabelled := with(configMap(e.ns, "taken-over", nil), label(v1alpha1.LabelReleaseName, "other"))
	if err := e.client.Update(e.ctx, withVersion(t, e, relabelled)); err != nil {
		t.Fatal(err)
	}
	gone := entry("v1", "ConfigMap", e.ns, "already-gone", 0)
	unserved := entry("nowhere.example.com/v1", "Gadget", e.ns, "g", 3)

	inventory := Merge(Entries(old), []v1alpha1.InventoryObject{gone, unserved})
	render := Entries([]Object{{Wave: 0, Object: kept}})
	res, err := e.applier.Prune(e.ctx, PruneInput{Release: release, Inventory: inventory, Render: render})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}

	e.mustExist(t, kept, disabled, takenOver, definition)
	e.mustNotExist(t, dropped, droppedLater)
	want := &PruneResult{
		Deleted:   []v1alpha1.InventoryObject{unserved, entryOf(droppedLater, 2), entryOf(dropped, 0), gone},
		Skipped:   []v1alpha1.InventoryObject{entryOf(takenOver, 1), entryOf(disabled, 1), entryOf(definition, 0)},
		Inventory: render,
	}
	if diff := cmp.Diff(want, res, equateEmpty); diff != "" {
		t.Errorf("PruneResult (-want +got):\n%s", diff)
	}
}

func TestPruneDisabledDeletesNothing(t *testing.T) {
	e := integration(t)
	kept, dropped := configMap(e.ns, "kept", nil), configMap(e.ns, "dropped", nil)
	old := []Object{{Object: kept}, {Object: dropped}}
	e.applyAll(t, old...)
	render := Entries([]Object{{Object: kept}})
	res, err := e.applier.Prune(e.ctx, PruneInput{Release: release, Inventory: Entries(old), Render: render, Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	e.mustExist(t, kept, dropped)
	want := &PruneResult{Skipped: []v1alpha1.InventoryObject{entryOf(dropped, 0)}, Inventory: render}
	if diff := cmp.Diff(want, res, equateEmpty); diff != "" {
		t.Errorf("PruneResult (-want +got):\n%s", diff)
	}
}

func TestPruneFailureStaysInTheInventory(t *testing.T) {
	e := integration(t)
	kept := configMap(e.ns, "kept", nil)
	cm := configMap(e.ns, "dropped", nil)
	secret := with(obj("v1", "Secret", e.ns, "dropped"), func(u *unstructured.Unstructured) {
		u.SetLabels(configMap("", "", nil).GetLabels())
	})
	old := []Object{{Wave: 0, Object: kept}, {Wave: 0, Object: cm}, {Wave: 1, Object: secret}}
	e.applyAll(t, old...)

	// The user may delete ConfigMaps but only read Secrets.
	applier := e.userApplier(t, "pruner",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}})
	eventually(t, 10*time.Second, func() error { // until RBAC has the binding
		_, err := applier.get(e.ctx, entryOf(secret, 1).ObjectReference)
		return err
	})

	render := Entries([]Object{{Object: kept}})
	res, err := applier.Prune(e.ctx, PruneInput{Release: release, Inventory: Entries(old), Render: render})
	if got := reasons.Of(err, ""); got != v1alpha1.ReasonPruneFailed {
		t.Fatalf("Reason = %q (error %v), want %q", got, err, v1alpha1.ReasonPruneFailed)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf(`delete Secret %s/dropped: `, e.ns)) || !strings.Contains(err.Error(), "cannot delete resource") {
		t.Errorf("message %q does not name the object and the server's message", err)
	}
	// The Secret (wave 1) failed, so the ConfigMap (wave 0) waits for it.
	e.mustExist(t, kept, cm, secret)
	want := &PruneResult{
		Failed:    []v1alpha1.InventoryObject{entryOf(secret, 1)},
		Pending:   []v1alpha1.InventoryObject{entryOf(cm, 0)},
		Inventory: Entries(old),
	}
	if diff := cmp.Diff(want, res, equateEmpty); diff != "" {
		t.Errorf("PruneResult (-want +got):\n%s", diff)
	}

	// With the permission, the next prune finishes the job.
	res, err = e.applier.Prune(e.ctx, PruneInput{Release: release, Inventory: res.Inventory, Render: render})
	if err != nil {
		t.Fatal(err)
	}
	e.mustNotExist(t, cm, secret)
	if diff := cmp.Diff(render, res.Inventory); diff != "" {
		t.Errorf("inventory (-want +got):\n%s", diff)
	}
}

func entryOf(u *unstructured.Unstructured, wave int32) v1alpha1.InventoryObject {
	return Object{Wave: wave, Object: u}.Entry()
}

// withVersion sets u's resourceVersion to the live object's, for an Update.
func withVersion(t *testing.T, e *env, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	live, ok := e.get(t, u)
	if !ok {
		t.Fatalf("%s does not exist", describeObject(u))
	}
	u.SetResourceVersion(live.GetResourceVersion())
	return u
}
