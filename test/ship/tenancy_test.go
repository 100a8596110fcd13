package ship_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/test/convoychart"
)

// Under lockdown (controller.defaultServiceAccount) both processes get
// --default-service-account, the controller loses convoy-controller-apply and the
// observer convoy-observer-drift with its policy, and each may impersonate
// ServiceAccounts (and read them) instead; the observer keeps its read-only
// convoy-observer-read for health. observer.defaultServiceAccount overrides the
// observer's flag.
func TestChartRendersLockdown(t *testing.T) {
	cases := map[string]struct {
		values               map[string]any
		controller, observer string
	}{
		"controller's value for both": {
			values:     map[string]any{"controller": map[string]any{"defaultServiceAccount": "convoy-deployer"}},
			controller: "convoy-deployer", observer: "convoy-deployer",
		},
		"observer's own": {
			values: map[string]any{
				"controller": map[string]any{"defaultServiceAccount": "convoy-deployer"},
				"observer":   map[string]any{"defaultServiceAccount": "drift-reader"},
			},
			controller: "convoy-deployer", observer: "drift-reader",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := render(t, tc.values, "convoy")
			got := keys(objs)
			for _, k := range []string{
				"ClusterRole /convoy-controller-impersonate", "ClusterRoleBinding /convoy-controller-impersonate",
				"ClusterRole /convoy-observer-impersonate", "ClusterRoleBinding /convoy-observer-impersonate",
				"ClusterRole /convoy-observer-read",
			} {
				if !slices.Contains(got, k) {
					t.Errorf("no %s in the render", k)
				}
			}
			for _, k := range []string{
				"ClusterRole /convoy-controller-apply", "ClusterRoleBinding /convoy-controller-apply",
				"ClusterRole /convoy-observer-drift", "ValidatingAdmissionPolicy /convoy-observer-dry-run-only",
			} {
				if slices.Contains(got, k) {
					t.Errorf("%s is rendered under lockdown", k)
				}
			}
			role := toYAML(t, findObj(t, objs, "ClusterRole", "convoy-controller-impersonate"))
			if !strings.Contains(role, "serviceaccounts") || !strings.Contains(role, "impersonate") {
				t.Errorf("convoy-controller-impersonate does not grant impersonate on serviceaccounts:\n%s", role)
			}
			for p, sa := range map[string]string{"controller": tc.controller, "observer": tc.observer} {
				args := deployment(t, objs, "convoy-"+p).Spec.Template.Spec.Containers[0].Args
				var flags []string
				for _, a := range args {
					if strings.HasPrefix(a, "--default-service-account") {
						flags = append(flags, a)
					}
				}
				if diff := cmp.Diff([]string{"--default-service-account=" + sa}, flags); diff != "" {
					t.Errorf("%s's lockdown flag (-want +got):\n%s", p, diff)
				}
			}
		})
	}
}

// A lockdown ServiceAccount that is not a name fails the install with the value's path.
func TestChartLockdownValueIsAName(t *testing.T) {
	c := convoychart.Load(t)
	_, err := chart.Render(c, map[string]any{"controller": map[string]any{"defaultServiceAccount": "Team A"}}, "convoy")
	if err == nil || !strings.Contains(err.Error(), "controller/defaultServiceAccount") {
		t.Errorf("error %v, want one naming controller/defaultServiceAccount", err)
	}
}
