package apply

import (
	"errors"
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

func TestDryRunRejectsAsUnappliable(t *testing.T) {
	e := integration(t)
	immutable := with(configMap(e.ns, "frozen", map[string]string{"k": "v1"}), func(u *unstructured.Unstructured) {
		u.Object["immutable"] = true
	})
	e.create(t, immutable)

	cases := map[string]struct {
		bad     *unstructured.Unstructured
		wantMsg string
	}{
		"invalid object": {
			bad:     configMap(e.ns, "bad", map[string]string{"not a valid key!": "x"}),
			wantMsg: `ConfigMap ` + e.ns + `/bad rejected: ConfigMap "bad" is invalid`,
		},
		"unknown kind": {
			bad:     obj("example.com/v1", "Gadget", e.ns, "g"),
			wantMsg: "Gadget.example.com " + e.ns + "/g rejected: no matches for kind",
		},
		"immutable field changed": {
			bad: with(configMap(e.ns, "frozen", map[string]string{"k": "v2"}), func(u *unstructured.Unstructured) {
				u.Object["immutable"] = true
			}),
			wantMsg: "field is immutable",
		},
		"namespace that does not exist": {
			bad:     configMap("no-such-namespace", "c", nil),
			wantMsg: `namespaces "no-such-namespace" not found`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			good := configMap(e.ns, "good-"+testenv.DNSName(name), map[string]string{"k": "v"})
			_, err := e.applier.DryRun(e.ctx, []Object{{Wave: 0, Object: good}, {Wave: 1, Object: tc.bad}}, nil)
			if got := reasons.Of(err, ""); got != v1alpha1.ReasonUnappliable {
				t.Fatalf("Reason = %q (error %v), want %q", got, err, v1alpha1.ReasonUnappliable)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("message %q does not contain %q", err.Error(), tc.wantMsg)
			}
			ae, _ := errors.AsType[*Error](err)
			if diff := cmp.Diff([]v1alpha1.ObjectReference{Object{Object: tc.bad}.Entry().ObjectReference}, ae.Objects); diff != "" {
				t.Errorf("failed objects (-want +got):\n%s", diff)
			}
			e.mustNotExist(t, good)
		})
	}
	live, _ := e.get(t, immutable)
	if got, _, _ := unstructured.NestedString(live.Object, "data", "k"); got != "v1" {
		t.Errorf("the immutable ConfigMap changed: data.k = %q", got)
	}
}

func TestDryRunTransientFailureIsDeployFailed(t *testing.T) {
	e := integration(t)
	// A user who may read ConfigMaps but not patch them: the dry run is
	// refused by authorization, which a permission fixes without a new render.
	applier := e.userApplier(t, "reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}})
	cm := configMap(e.ns, "c", map[string]string{"k": "v"})
	var err error
	eventually(t, 10*time.Second, func() error {
		_, err = applier.DryRun(e.ctx, []Object{{Object: cm}}, nil)
		if reasons.Of(err, "") != v1alpha1.ReasonDeployFailed {
			return fmt.Errorf("reason %q, error %w", reasons.Of(err, ""), err)
		}
		return nil
	})
	if !strings.Contains(err.Error(), `cannot patch resource "configmaps"`) {
		t.Errorf("message %q does not carry the server's message", err)
	}
	e.mustNotExist(t, cm)
}

func TestDryRunSkipsKindsOfTheRendersCRDs(t *testing.T) {
	e := integration(t)
	group := testenv.DNSName(t.Name()) + ".example.com"
	definition := crd(group, "Widget")
	widget := obj(group+"/v1", "Widget", e.ns, "w")
	widget.Object["spec"] = map[string]any{"size": int64(3)}
	newNS := obj("v1", "Namespace", "", e.ns+"-new")
	inNewNS := configMap(e.ns+"-new", "c", map[string]string{"k": "v"})
	objs := []Object{{Object: definition}, {Object: widget}, {Object: newNS}, {Object: inNewNS}}

	plan, err := e.applier.DryRun(e.ctx, objs, nil)
	if err != nil {
		t.Fatalf("DryRun: %v", err)
	}
	want := []v1alpha1.ObjectReference{Object{Object: widget}.Entry().ObjectReference, Object{Object: inNewNS}.Entry().ObjectReference}
	if diff := cmp.Diff(want, plan.Unchecked()); diff != "" {
		t.Errorf("Unchecked (-want +got):\n%s", diff)
	}
	e.mustNotExist(t, definition, widget, newNS, inNewNS)

	res, err := e.applier.ApplyWave(e.ctx, plan, 0)
	if err != nil {
		t.Fatalf("ApplyWave: %v", err)
	}
	e.mustExist(t, definition, widget, newNS, inNewNS)
	for _, c := range res.Changes {
		if c.Action != Created {
			t.Errorf("%s: %s, want %s", Describe(c.Object), c.Action, Created)
		}
	}
	if len(res.Changes) != 4 {
		t.Errorf("got %d changes, want 4: %v", len(res.Changes), res.Changes)
	}

	// Once the CRD is there, the dry run checks its objects, and an
	// unchanged render changes nothing.
	plan, err = e.applier.DryRun(e.ctx, objs, nil, Entries(objs)...)
	if err != nil {
		t.Fatalf("second DryRun: %v", err)
	}
	if got := plan.Unchecked(); len(got) != 0 {
		t.Errorf("second DryRun left %v unchecked", got)
	}
	res, err = e.applier.ApplyWave(e.ctx, plan, 0)
	if err != nil {
		t.Fatalf("second ApplyWave: %v", err)
	}
	if res.Changed() {
		t.Errorf("second apply changed something: %v", res.Changes)
	}

	// Without an inventory the dry run finds the Namespace existing too, and
	// checks what the render puts in it.
	plan, err = e.applier.DryRun(e.ctx, objs, nil)
	if err != nil {
		t.Fatalf("DryRun without an inventory: %v", err)
	}
	if got := plan.Unchecked(); len(got) != 0 {
		t.Errorf("DryRun without an inventory left %v unchecked", got)
	}
}
