package controller

import (
	"context"
	"fmt"
	"testing"

	"encoding/json"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Deleting a Release with deletionPolicy Delete deletes what it applied, its hook Jobs,
// its Renders and its ReleaseInventory; with Orphan the applied objects and the hook
// Jobs stay.
func TestDeletionPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy   v1.DeletionPolicy
		keepsApp bool
	}{
		{policy: v1.DeletionPolicyDelete, keepsApp: false},
		{policy: v1.DeletionPolicyOrphan, keepsApp: true},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.createRelease("web", automatic(), func(r *v1.Release) { r.Spec.DeletionPolicy = tc.policy },
				hook("migrate", v1.HookPreApply, 0))
			ref := renderRefOf(e.waitHooksWaiting("web", "web-migrate-"))
			e.waitJobComplete("web", "migrate", ref)
			e.sync("web", false) // as the observer does when the batch completes
			rel := e.waitApplied("web", "True", v1.ReasonApplied)
			if !containsString(rel.Finalizers, v1.Finalizer) {
				t.Fatalf("finalizers %v, want %s (set at create)", rel.Finalizers, v1.Finalizer)
			}
			if e.configMap("web-config") == nil {
				t.Fatal("web-config was not applied")
			}

			if err := e.client.Delete(e.ctx, rel); err != nil {
				t.Fatal(err)
			}
			e.eventually("the Release gone", func() (bool, string) {
				err := e.client.Get(e.ctx, client.ObjectKeyFromObject(rel), &v1.Release{})
				return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("get: %v", err)
			})
			if got := e.configMap("web-config") != nil; got != tc.keepsApp {
				t.Errorf("web-config exists = %v after the deletion, want %v", got, tc.keepsApp)
			}
			// The hook Jobs go with the objects (Delete) or stay with them (Orphan).
			job := e.hookJob("web", "migrate", ref)
			if got := job != nil && job.DeletionTimestamp == nil; got != tc.keepsApp {
				t.Errorf("hook Job %s exists = %v after the deletion, want %v", jobName("web", "migrate", ref), got, tc.keepsApp)
			}
			var renders v1.RenderList
			if err := e.client.List(e.ctx, &renders, client.InNamespace(e.ns)); err != nil {
				t.Fatal(err)
			}
			if len(renders.Items) != 0 {
				t.Errorf("%d Renders left, want none", len(renders.Items))
			}
			err := e.client.Get(e.ctx, client.ObjectKeyFromObject(rel), &v1.ReleaseInventory{})
			if client.IgnoreNotFound(err) != nil || err == nil {
				t.Errorf("the ReleaseInventory is left (err %v)", err)
			}
		})
	}
}

// Deleting a Release's namespace deletes the Release like a direct delete, although
// the namespace controller deletes everything in it at once, the ReleaseInventory
// too: the inventory's finalizer keeps it until the controller has deleted what the
// Release applied elsewhere. A finalizer of the test's holds web-elsewhere (in another
// namespace) while it is deleted, so that the namespace controller has certainly
// reached the inventory while the Release still needs it. The namespace controller
// finds the convoy resources through the metadata client, which asks for protobuf first.
func TestNamespaceDeletionDeletesItsReleases(t *testing.T) {
	const hold = "test.convoy.kumodo.io/hold"
	e := newEnv(t, envOptions{})
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other-" + e.ns}}
	if err := e.client.Create(e.ctx, other); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), other) })
	e.createRelease("web", automatic(), values(fmt.Sprintf(`{"extraNamespace":%q}`, other.Name)))
	e.waitApplied("web", "True", v1.ReasonApplied)
	elsewhere := &corev1.ConfigMap{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: other.Name, Name: "web-elsewhere"}, elsewhere); err != nil {
		t.Fatalf("web-elsewhere not applied: %v", err)
	}
	setFinalizers(t, e, elsewhere, hold)
	t.Cleanup(func() {
		_ = e.client.Patch(context.Background(), elsewhere, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
	})

	if err := e.client.Delete(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		t.Fatal(err)
	}
	invKey := client.ObjectKey{Namespace: e.ns, Name: "web"}
	e.eventually("the namespace controller deletes the ReleaseInventory, the controller web-elsewhere", func() (bool, string) {
		inv := &v1.ReleaseInventory{}
		if err := e.client.Get(e.ctx, invKey, inv); err != nil {
			return false, fmt.Sprintf("the ReleaseInventory: %v", err)
		}
		if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(elsewhere), elsewhere); err != nil {
			return false, fmt.Sprintf("web-elsewhere: %v", err)
		}
		return inv.DeletionTimestamp != nil && elsewhere.DeletionTimestamp != nil,
			fmt.Sprintf("inventory deletionTimestamp %v, web-elsewhere deletionTimestamp %v", inv.DeletionTimestamp, elsewhere.DeletionTimestamp)
	})
	// The Release waits for web-elsewhere (the controller looks every two seconds).
	e.consistently("the Release and its ReleaseInventory wait for web-elsewhere", 5*time.Second, func() (bool, string) {
		rel := &v1.Release{}
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, rel); err != nil {
			return false, fmt.Sprintf("the Release: %v", err)
		}
		if err := e.client.Get(e.ctx, invKey, &v1.ReleaseInventory{}); err != nil {
			return false, fmt.Sprintf("the ReleaseInventory: %v", err)
		}
		return true, ""
	})

	setFinalizers(t, e, elsewhere)
	e.eventually("namespace "+e.ns+" gone", func() (bool, string) {
		ns := &corev1.Namespace{}
		err := e.client.Get(e.ctx, client.ObjectKey{Name: e.ns}, ns)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("phase %s, conditions %+v", ns.Status.Phase, ns.Status.Conditions)
	})
	err := e.client.Get(e.ctx, client.ObjectKeyFromObject(elsewhere), &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("web-elsewhere after the namespace was deleted: err %v, want NotFound", err)
	}
}

// A ReleaseInventory whose Release is gone without the controller's deletion (its
// finalizer removed by hand) loses its finalizer once it is deleted, and is gone. The
// garbage collector deletes such an inventory, as its owner does not exist; the test
// deletes it the same way (in the background) rather than wait for the garbage
// collector's next resync, which is not what is under test.
func TestInventoryOfAGoneReleaseIsLetGo(t *testing.T) {
	e := newEnv(t, envOptions{})
	yes := true
	inv := &v1.ReleaseInventory{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "gone", Finalizers: []string{v1.Finalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1.SchemeGroupVersion.String(), Kind: "Release",
				Name: "gone", UID: uuid.NewUUID(), Controller: &yes}}},
	}
	if err := e.client.Create(e.ctx, inv); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Delete(e.ctx, inv, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	e.eventually("the ReleaseInventory gone", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKeyFromObject(inv), inv)
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v, finalizers %v", err, inv.Finalizers)
	})
}

// An inventory without the finalizer (written by a convoy before it set one) gets it at
// its Release's next apply, even when the list of objects stays the same.
func TestInventoryWithoutTheFinalizerGetsItAtTheNextApply(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic())
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	inv := &v1.ReleaseInventory{}
	if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(rel), inv); err != nil {
		t.Fatal(err)
	}
	if !containsString(inv.Finalizers, v1.Finalizer) {
		t.Fatalf("a new ReleaseInventory has finalizers %v, want %s", inv.Finalizers, v1.Finalizer)
	}
	objects := inv.Objects
	setFinalizers(t, e, inv)
	e.sync("web", false)
	e.eventually("the finalizer back on the ReleaseInventory", func() (bool, string) {
		if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(rel), inv); err != nil {
			return false, err.Error()
		}
		return containsString(inv.Finalizers, v1.Finalizer), fmt.Sprintf("finalizers %v", inv.Finalizers)
	})
	if diff := cmp.Diff(objects, inv.Objects); diff != "" {
		t.Errorf("the objects changed (-before +after):\n%s", diff)
	}
}

// setFinalizers sets obj's finalizers to exactly finalizers.
func setFinalizers(t *testing.T, e *env, obj client.Object, finalizers ...string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": finalizers}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.Patch(e.ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("setting the finalizers of %s to %v: %v", obj.GetName(), finalizers, err)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
