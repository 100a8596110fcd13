package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// createCluster creates a Cluster through convoy apiserver and deletes it after the
// test.
func createCluster(t *testing.T, c *v1.Cluster) *v1.Cluster {
	t.Helper()
	created := &v1.Cluster{}
	if err := admin(t).rest.Post().Resource(v1.ResourceClusters).Body(c).Do(testCtx(t)).Into(created); err != nil {
		t.Fatalf("creating Cluster %s: %v", c.Name, err)
	}
	t.Cleanup(func() {
		_ = admin(t).rest.Delete().Resource(v1.ResourceClusters).Name(c.Name).Do(context.Background()).Error()
	})
	return created
}

// cluster list and cluster status read Clusters from convoy apiserver and print what
// the formatting tests show (golden files), with ages counted from a fixed time after
// the Clusters' creation.
func TestClusterListAndStatusFromAPIServer(t *testing.T) {
	needCluster(t)
	suffix := testenv.RandomSuffix()
	ready, down := "golden-prod-"+suffix, "golden-staging-"+suffix
	created := createCluster(t, &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: ready},
		Spec:       v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: "convoy-system", Name: "prod-kubeconfig"}}},
	}).CreationTimestamp.Time
	downCreated := createCluster(t, &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: down},
		Spec: v1.ClusterSpec{
			Kubeconfig:        v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: "convoy-system", Name: "staging", Key: "kubeconfig"}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "staging"}},
		},
	}).CreationTimestamp.Time
	// The statuses the controller would write, their times relative to the first
	// Cluster's creation so that SINCE is stable.
	writeClusterStatus(t, down, v1.ClusterStatus{Conditions: []metav1.Condition{{
		Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Unreachable",
		Message:            "Connection refused; check the kubeconfig Secret.",
		LastTransitionTime: metav1.NewTime(created.Add(50 * time.Minute)),
	}}})
	writeClusterStatus(t, ready, v1.ClusterStatus{KubernetesVersion: "v1.37.2", Conditions: []metav1.Condition{{
		Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Reachable", Message: "Version v1.37.2.",
		LastTransitionTime: metav1.NewTime(created),
	}}})

	// 90 minutes and a half after the second creation: every age is a whole number
	// of minutes, whatever second each Cluster was created in.
	later := func() time.Time { return downCreated.Add(90*time.Minute + 30*time.Second) }
	res := pluginAt(t, later, "cluster", "list")
	if res.code != 0 {
		t.Fatalf("cluster list: exit %d, stderr %s", res.code, res.stderr)
	}
	// Other tests of the package may have Clusters too: keep the header and ours.
	var lines []string
	for i, line := range strings.SplitAfter(res.stdout, "\n") {
		if i == 0 || strings.HasPrefix(line, ready+" ") || strings.HasPrefix(line, down+" ") {
			lines = append(lines, line)
		}
	}
	unsuffix := strings.NewReplacer(suffix, "XXXXXXXX")
	golden(t, "cluster_list_apiserver", unsuffix.Replace(strings.Join(lines, "")))

	res = pluginAt(t, later, "cluster", "status", down)
	if res.code != 0 {
		t.Fatalf("cluster status: exit %d, stderr %s", res.code, res.stderr)
	}
	golden(t, "cluster_status_apiserver", unsuffix.Replace(res.stdout))

	res = pluginAt(t, later, "cluster", "status", down, "-o", "json")
	var got v1.Cluster
	if err := json.Unmarshal([]byte(res.stdout), &got); res.code != 0 || err != nil {
		t.Fatalf("cluster status -o json: exit %d, %v\n%s", res.code, err, res.stdout)
	}
	if got.Kind != "Cluster" || got.Name != down || len(got.Status.Conditions) != 1 {
		t.Errorf("cluster status -o json: kind %q name %q conditions %v", got.Kind, got.Name, got.Status.Conditions)
	}

	res = pluginAt(t, later, "cluster", "status", "golden-prod")
	if res.code != ExitFailure || !strings.Contains(res.stderr, "golden-prod") {
		t.Errorf("cluster status of an unknown Cluster: exit %d, stderr %q", res.code, res.stderr)
	}
}

func writeClusterStatus(t *testing.T, name string, status v1.ClusterStatus) {
	t.Helper()
	c, err := admin(t).GetCluster(testCtx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	c.Status = status
	if err := admin(t).rest.Put().Resource(v1.ResourceClusters).Name(name).SubResource("status").Body(c).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("writing the status of Cluster %s: %v", name, err)
	}
}

// pluginAt runs the plugin as plugin does, with now as its clock.
func pluginAt(t *testing.T, now func() time.Time, args ...string) result {
	t.Helper()
	var out, errOut strings.Builder
	o := testOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, nil)
	o.Now = now
	code := o.Execute(testCtx(t), withKubeconfig(args))
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}
