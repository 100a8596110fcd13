package controller

import (
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

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
			e.createRelease("web", automatic(), func(r *v1.Release) { r.Spec.DeletionPolicy = tc.policy })
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
