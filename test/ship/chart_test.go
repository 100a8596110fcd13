package ship_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/test/convoychart"
)

// nonDefaultValues exercise every switch of the chart: an image by digest, pull
// secrets, other replicas and resources, an external etcd, two shards, extra flags,
// no host RBAC, no user roles, and the monitoring objects.
func nonDefaultValues() map[string]any {
	return map[string]any{
		"image": map[string]any{
			"repository": "registry.example.com/platform/convoy",
			"digest":     "sha256:" + strings.Repeat("ab", 32),
			"pullPolicy": "Always",
		},
		"imagePullSecrets": []any{map[string]any{"name": "regcred"}},
		"apiserver":        map[string]any{"replicas": 3, "extraArgs": []any{"--audit-log-maxage=7"}},
		"etcd": map[string]any{
			"enabled": false, "servers": []any{"https://etcd-0.example:2379", "https://etcd-1.example:2379"},
			"prefix": "/convoy",
		},
		"controller": map[string]any{
			"replicas": 1, "extraArgs": []any{"--concurrency=8"}, "applyRBAC": false,
			"resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}},
		},
		"observer":  map[string]any{"replicas": 1, "targetRBAC": map[string]any{"read": false, "drift": false}},
		"shards":    []any{"blue", "green"},
		"userRoles": false,
		"monitoring": map[string]any{
			"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}},
			"prometheusRule": map[string]any{"enabled": true},
			"dashboard":      map[string]any{"enabled": true},
		},
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	return testenv.RepoRoot(t)
}

// render renders the chart with values into namespace and decodes the objects.
func render(t *testing.T, values map[string]any, namespace string) []*unstructured.Unstructured {
	t.Helper()
	c := convoychart.Load(t)
	objs := convoychart.Render(t, c, values, namespace)
	return objs
}

func keys(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

func findObj(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s in the render", kind, name)
	return nil
}

func deployment(t *testing.T, objs []*unstructured.Unstructured, name string) appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(findObj(t, objs, "Deployment", name).Object, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// The chart passes Helm's linter (`helm lint`: Chart.yaml, values against
// values.schema.json, every template rendered and parsed as Kubernetes YAML) with
// its default values and with the non-default ones, without errors or warnings.
func TestChartLint(t *testing.T) {
	dir := filepath.Join(repoRoot(t), chart.Dir)
	for name, values := range map[string]map[string]any{"default": {}, "non-default": nonDefaultValues()} {
		t.Run(name, func(t *testing.T) {
			res := lint.RunAll(dir, values, "convoy-system")
			for _, m := range res.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m.Error())
				}
			}
		})
	}
}

// values.schema.json rejects bad values with a message naming the field, before
// anything renders.
func TestChartValuesSchema(t *testing.T) {
	c := convoychart.Load(t)
	cases := map[string]struct {
		values map[string]any
		want   string
	}{
		"replicas not a number":    {map[string]any{"controller": map[string]any{"replicas": "two"}}, "controller/replicas"},
		"no replicas":              {map[string]any{"observer": map[string]any{"replicas": 0}}, "observer/replicas"},
		"digest without sha256":    {map[string]any{"image": map[string]any{"digest": "latest"}}, "image/digest"},
		"unknown value":            {map[string]any{"controler": map[string]any{}}, "controler"},
		"shard not a label value":  {map[string]any{"shards": []any{"Blue Team"}}, "shards/0"},
		"extra flag without --":    {map[string]any{"observer": map[string]any{"extraArgs": []any{"concurrency=2"}}}, "observer/extraArgs/0"},
		"extra env without a name": {map[string]any{"controller": map[string]any{"extraEnv": []any{map[string]any{"value": "100"}}}}, "controller/extraEnv/0"},
		"etcd server not a URL":    {map[string]any{"etcd": map[string]any{"enabled": false, "servers": []any{"etcd:2379"}}}, "etcd/servers/0"},
		"bad pull policy":          {map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "image/pullPolicy"},
		"storage without a unit":   {map[string]any{"etcd": map[string]any{"storage": "8"}}, "etcd/storage"},
		"external etcd, no server": {map[string]any{"etcd": map[string]any{"enabled": false}}, "etcd.servers"},
		"an even etcd":             {map[string]any{"etcd": map[string]any{"replicas": 2}}, "etcd/replicas"},
		"unknown certificates":     {map[string]any{"etcd": map[string]any{"tls": map[string]any{"certificates": "vault"}}}, "etcd/tls/certificates"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := chart.Render(c, tc.values, "convoy-system")
			if err == nil {
				t.Fatalf("values %v rendered", tc.values)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %s", err, tc.want)
			}
		})
	}
}

// With its default values the chart installs what deploy/ README lists: the
// apiserver with its etcd, APIService and PDB, the controller and observer with
// their RBAC, PDBs and metrics Services, and the user roles; no monitoring object.
func TestChartRendersDefaults(t *testing.T) {
	objs := render(t, nil, "convoy")
	want := []string{
		"APIService /v1alpha1.convoy.kumodo.io",
		"ClusterRole /convoy-apiserver", "ClusterRole /convoy-controller", "ClusterRole /convoy-controller-apply",
		"ClusterRole /convoy-controller-impersonate", "ClusterRole /convoy-edit",
		"ClusterRole /convoy-observer", "ClusterRole /convoy-observer-drift", "ClusterRole /convoy-observer-impersonate", "ClusterRole /convoy-observer-read",
		"ClusterRole /convoy-promote", "ClusterRole /convoy-sync", "ClusterRole /convoy-view",
		"ClusterRoleBinding /convoy-apiserver", "ClusterRoleBinding /convoy-apiserver:system:auth-delegator",
		"ClusterRoleBinding /convoy-controller", "ClusterRoleBinding /convoy-controller-apply", "ClusterRoleBinding /convoy-controller-impersonate",
		"ClusterRoleBinding /convoy-observer", "ClusterRoleBinding /convoy-observer-drift", "ClusterRoleBinding /convoy-observer-impersonate",
		"ClusterRoleBinding /convoy-observer-read",
		"CronJob convoy/convoy-backup", "CronJob convoy/convoy-etcd-defrag",
		"Deployment convoy/convoy-apiserver", "Deployment convoy/convoy-controller", "Deployment convoy/convoy-observer",
		"PersistentVolumeClaim convoy/convoy-backup",
		"PodDisruptionBudget convoy/convoy-apiserver", "PodDisruptionBudget convoy/convoy-controller", "PodDisruptionBudget convoy/convoy-etcd",
		"PodDisruptionBudget convoy/convoy-observer",
		"Role convoy/convoy-controller-leader-election", "Role convoy/convoy-observer-leader-election",
		"RoleBinding convoy/convoy-controller-leader-election", "RoleBinding convoy/convoy-observer-leader-election",
		"RoleBinding kube-system/convoy-apiserver:extension-apiserver-authentication-reader",
		"Secret convoy/convoy-etcd-client-tls", "Secret convoy/convoy-etcd-server-tls",
		"Service convoy/convoy-apiserver", "Service convoy/convoy-controller-metrics", "Service convoy/convoy-etcd", "Service convoy/convoy-observer-metrics",
		"ServiceAccount convoy/convoy-apiserver", "ServiceAccount convoy/convoy-controller", "ServiceAccount convoy/convoy-observer",
		"StatefulSet convoy/convoy-etcd",
		"ValidatingAdmissionPolicy /convoy-observer-dry-run-only", "ValidatingAdmissionPolicyBinding /convoy-observer-dry-run-only",
	}
	if diff := cmp.Diff(want, keys(objs)); diff != "" {
		t.Errorf("objects of the default render in namespace convoy (-want +got):\n%s", diff)
	}
	// The release namespace reaches every reference to it, not only metadata.
	api := deployment(t, objs, "convoy-apiserver").Spec.Template.Spec.Containers[0].Args
	for _, a := range []string{
		"--etcd-servers=https://convoy-etcd-0.convoy-etcd.convoy.svc:2379,https://convoy-etcd-1.convoy-etcd.convoy.svc:2379,https://convoy-etcd-2.convoy-etcd.convoy.svc:2379",
		"--etcd-certfile=/etc/convoy/etcd-tls/tls.crt", "--tls-alternate-dns=convoy-apiserver.convoy.svc",
	} {
		if !slices.Contains(api, a) {
			t.Errorf("apiserver args %v lack %s", api, a)
		}
	}
	for _, p := range []string{"controller", "observer"} {
		args := deployment(t, objs, "convoy-"+p).Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(args, "--leader-election-namespace=convoy") {
			t.Errorf("%s args %v: the Lease is not in the release namespace, where its Role is", p, args)
		}
	}
	vap := findObj(t, objs, "ValidatingAdmissionPolicy", "convoy-observer-dry-run-only")
	if !strings.Contains(toYAML(t, vap), "system:serviceaccount:convoy:convoy-observer") {
		t.Errorf("the dry-run-only policy does not match the observer's ServiceAccount in namespace convoy")
	}
	if img := deployment(t, objs, "convoy-controller").Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/kumodo/convoy:latest" {
		t.Errorf("default image %q", img)
	}
}

// Non-default values reach the objects: the image by digest, pull secrets,
// replicas, an external etcd instead of the StatefulSet, a controller and an
// observer Deployment per shard with --shard and their own PDBs, extra flags,
// resources, no host RBAC or user roles, and the ServiceMonitors, PrometheusRule
// and dashboard.
func TestChartRendersNonDefaults(t *testing.T) {
	objs := render(t, nonDefaultValues(), "platform")
	got := keys(objs)
	for _, k := range []string{
		"Deployment platform/convoy-controller-blue", "Deployment platform/convoy-controller-green",
		"Deployment platform/convoy-observer-blue", "Deployment platform/convoy-observer-green",
		"PodDisruptionBudget platform/convoy-controller-blue", "PodDisruptionBudget platform/convoy-observer-green",
		"ServiceMonitor platform/convoy-controller", "ServiceMonitor platform/convoy-observer", "ServiceMonitor platform/convoy-apiserver",
		"ClusterRole /convoy-metrics-reader", "PrometheusRule platform/convoy", "ConfigMap platform/convoy-dashboard",
	} {
		if !slices.Contains(got, k) {
			t.Errorf("no %s in the render", k)
		}
	}
	for _, k := range []string{
		"Deployment platform/convoy-controller", "Deployment platform/convoy-observer", "StatefulSet platform/convoy-etcd",
		"ClusterRole /convoy-controller-apply", "ClusterRole /convoy-observer-read", "ClusterRole /convoy-observer-drift",
		"ValidatingAdmissionPolicy /convoy-observer-dry-run-only", "ClusterRole /convoy-sync", "ClusterRole /convoy-view", "ClusterRole /convoy-edit",
		"ClusterRole /convoy-promote",
	} {
		if slices.Contains(got, k) {
			t.Errorf("%s is rendered though the values turn it off", k)
		}
	}
	api := deployment(t, objs, "convoy-apiserver")
	if *api.Spec.Replicas != 3 {
		t.Errorf("apiserver replicas %d, want 3", *api.Spec.Replicas)
	}
	c := api.Spec.Template.Spec.Containers[0]
	if want := "registry.example.com/platform/convoy@sha256:" + strings.Repeat("ab", 32); c.Image != want || c.ImagePullPolicy != "Always" {
		t.Errorf("apiserver image %s (%s), want %s (Always)", c.Image, c.ImagePullPolicy, want)
	}
	for _, a := range []string{"--etcd-servers=https://etcd-0.example:2379,https://etcd-1.example:2379", "--etcd-prefix=/convoy", "--audit-log-maxage=7"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("apiserver args %v lack %s", c.Args, a)
		}
	}
	if ps := api.Spec.Template.Spec.ImagePullSecrets; len(ps) != 1 || ps[0].Name != "regcred" {
		t.Errorf("imagePullSecrets %v, want regcred", ps)
	}
	for _, shard := range []string{"blue", "green"} {
		d := deployment(t, objs, "convoy-controller-"+shard)
		c := d.Spec.Template.Spec.Containers[0]
		for _, a := range []string{"--shard=" + shard, "--concurrency=8"} {
			if !slices.Contains(c.Args, a) {
				t.Errorf("controller %s args %v lack %s", shard, c.Args, a)
			}
		}
		if d.Spec.Selector.MatchLabels["convoy.kumodo.io/shard"] != shard || *d.Spec.Replicas != 1 {
			t.Errorf("controller %s: selector %v, replicas %d", shard, d.Spec.Selector.MatchLabels, *d.Spec.Replicas)
		}
		if m := c.Resources.Limits.Memory().String(); m != "1Gi" {
			t.Errorf("controller %s memory limit %s, want 1Gi", shard, m)
		}
		if o := deployment(t, objs, "convoy-observer-"+shard).Spec.Template.Spec.Containers[0]; !slices.Contains(o.Args, "--shard="+shard) {
			t.Errorf("observer %s args %v lack --shard=%s", shard, o.Args, shard)
		}
	}
	sm := findObj(t, objs, "ServiceMonitor", "convoy-controller")
	if sm.GetLabels()["release"] != "prom" {
		t.Errorf("ServiceMonitor labels %v, want release=prom", sm.GetLabels())
	}
	rules := toYAML(t, findObj(t, objs, "PrometheusRule", "convoy"))
	if !strings.Contains(rules, "ConvoyControllerDown") || !strings.Contains(rules, "{{ $labels.reason }}") {
		t.Errorf("the PrometheusRule does not carry alerts/convoy.rules.yaml verbatim:\n%s", rules)
	}
	dash, _, _ := unstructured.NestedString(findObj(t, objs, "ConfigMap", "convoy-dashboard").Object, "data", "convoy.json")
	file, err := os.ReadFile(filepath.Join(repoRoot(t), chart.Dir, "dashboards", "convoy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if dash != string(file) {
		t.Errorf("the dashboard ConfigMap does not hold dashboards/convoy.json")
	}
}

// deploy/ is the chart rendered with its default values (hack/gen-deploy): one
// source of truth. Run make generate after changing the chart.
func TestDeployIsGeneratedFromChart(t *testing.T) {
	root := repoRoot(t)
	c, err := chart.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := chart.Deploy(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("the chart renders %d files for deploy/", len(files))
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(root, "deploy", f.Path))
		if err != nil {
			t.Errorf("deploy/%s: %v (run make generate)", f.Path, err)
			continue
		}
		if !bytes.Equal(got, f.Content) {
			t.Errorf("deploy/%s differs from the chart's render; run make generate:\n%s", f.Path, cmp.Diff(string(f.Content), string(got)))
		}
	}
}
