package controller

import (
	"fmt"
	"testing"

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

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
