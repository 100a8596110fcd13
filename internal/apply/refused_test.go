package apply

import (
	"strings"
	"testing"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

// An object the API server refuses with 422 at the apply itself (no dry run before
// it: a forced sync, or an object in a Namespace the render creates) is Unappliable,
// not DeployFailed: the message names the object, the field and the server's message.
func TestRefusedApplyIsUnappliable(t *testing.T) {
	e := integration(t)
	cases := map[string]struct {
		objects   []Object
		wantField string
	}{
		"an invalid data key, forced": {
			objects:   []Object{{Object: configMap(e.ns, "bad-key", map[string]string{"not a valid key!": "x"})}},
			wantField: `data[not a valid key!]: Invalid value`,
		},
		"a label value that is no label value, forced": {
			objects:   []Object{{Object: with(configMap(e.ns, "bad-label", nil), label("example.com/role", "web:create-cert"))}},
			wantField: `metadata.labels: Invalid value: "web:create-cert"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			bad := tc.objects[len(tc.objects)-1].Object
			plan, err := NewPlan(tc.objects)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range plan.Waves() {
				if _, err = e.applier.ApplyWave(e.ctx, plan, w); err != nil {
					break
				}
			}
			if got := reasons.Of(err, ""); got != v1alpha1.ReasonUnappliable {
				t.Fatalf("Reason = %q (error %v), want %q", got, err, v1alpha1.ReasonUnappliable)
			}
			for _, want := range []string{"apply of " + describeObject(bad) + " failed", tc.wantField, "no retry of this render can succeed"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not contain %q", err, want)
				}
			}
			if _, ok := e.get(t, bad); ok {
				t.Error("the object was applied")
			}
		})
	}
}
