package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Deleting a Release's namespace deletes the Release like a direct delete: the
// namespace controller finds the convoy resources through the metadata client (which
// asks for protobuf first), the controller deletes what the Release applied elsewhere
// and lets go of its finalizer, and the namespace goes away.
func TestNamespaceDeletionDeletesItsReleases(t *testing.T) {
	e := newEnv(t, envOptions{})
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other-" + e.ns}}
	if err := e.client.Create(e.ctx, other); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), other) })
	e.createRelease("web", automatic(), values(fmt.Sprintf(`{"extraNamespace":%q}`, other.Name)))
	e.waitApplied("web", "True", v1.ReasonApplied)
	elsewhere := client.ObjectKey{Namespace: other.Name, Name: "web-elsewhere"}
	if err := e.client.Get(e.ctx, elsewhere, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("web-elsewhere not applied: %v", err)
	}

	if err := e.client.Delete(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		t.Fatal(err)
	}
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
	err := e.client.Get(e.ctx, elsewhere, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("web-elsewhere in namespace %s after the Release's namespace was deleted: err %v, want NotFound", other.Name, err)
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
