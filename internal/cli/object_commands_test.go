package cli

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// A list, or a Release's history, with nothing in it says so on stderr, naming where
// it looked, and prints nothing on stdout; -o prints the empty list.
func TestEmptyListsSayWhereTheyLooked(t *testing.T) {
	needCluster(t)
	for name, tc := range map[string]struct {
		// args are the command's, in the empty namespace ns.
		args       func(t *testing.T, ns string) []string
		wantStderr string // with NAMESPACE for ns
	}{
		"releases": {
			args:       func(_ *testing.T, ns string) []string { return []string{"release", "list", "-n", ns} },
			wantStderr: "No Releases found in namespace NAMESPACE.\n",
		},
		"releasesets": {
			args:       func(_ *testing.T, ns string) []string { return []string{"releaseset", "list", "-n", ns} },
			wantStderr: "No ReleaseSets found in namespace NAMESPACE.\n",
		},
		"renders": {
			args: func(t *testing.T, ns string) []string {
				createRelease(t, ns, "podinfo")
				return []string{"release", "history", "podinfo", "-n", ns}
			},
			wantStderr: "Release NAMESPACE/podinfo has no Renders yet.\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			ns := namespace(t)
			args := tc.args(t, ns)
			want := strings.ReplaceAll(tc.wantStderr, "NAMESPACE", ns)
			res := plugin(t, nil, args...)
			if res.code != 0 || res.stdout != "" || res.stderr != want {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0, nothing, %q", args, res.code, res.stdout, res.stderr, want)
			}
			res = plugin(t, nil, append(args, "-o", "json")...)
			if res.code != 0 || !strings.Contains(res.stdout, `"items": []`) || res.stderr != "" {
				t.Errorf("%v -o json: exit %d, stdout %q, stderr %q; want an empty list", args, res.code, res.stdout, res.stderr)
			}
		})
	}
}

// The first argument of a command on a ReleaseSet or a Cluster completes with their
// names; nothing completes after it.
func TestCompletionListsReleaseSetAndClusterNames(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createReleaseSet(t, ns, "podinfo")
	createReleaseSet(t, ns, "redis")
	cluster := "completion-" + testenv.RandomSuffix()
	createCluster(t, &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec:       v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: "convoy-system", Name: "prod-kubeconfig"}}},
	})
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"releasesets":     {args: []string{"__complete", "releaseset", "status", "-n", ns, ""}, want: "podinfo\nredis\n:4\n"},
		"a prefix":        {args: []string{"__complete", "releaseset", "promote", "-n", ns, "re"}, want: "redis\n:4\n"},
		"clusters":        {args: []string{"__complete", "cluster", "status", cluster[:len("completion-")+3]}, want: cluster + "\n:4\n"},
		"a second arg":    {args: []string{"__complete", "releaseset", "status", "-n", ns, "podinfo", ""}, want: ":4\n"},
		"unknown context": {args: []string{"__complete", "releaseset", "status", "--context", "nowhere", ""}, want: ":1\n"},
	} {
		t.Run(name, func(t *testing.T) {
			res := plugin(t, nil, tc.args...)
			if res.code != 0 || !strings.HasPrefix(res.stdout, tc.want) {
				t.Errorf("%v: exit %d, stdout %q, want it to start with %q (stderr %s)", tc.args, res.code, res.stdout, tc.want, res.stderr)
			}
		})
	}
}
