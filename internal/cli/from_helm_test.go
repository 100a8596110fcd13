package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/fromhelm"
)

// helmConfig is Helm's action configuration for namespace ns of the local control
// plane, with Helm's default Secrets storage.
func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	return helmConfigWith(t, ns, "secret")
}

// helmConfigWith is Helm's action configuration for namespace ns of the local control
// plane, with Helm's storage driver (HELM_DRIVER) helmDriver.
func helmConfigWith(t *testing.T, ns, helmDriver string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig := env.kubeconfig
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, ns, helmDriver); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// helmInstall installs the chart in dir as Helm does, as release name in ns.
func helmInstall(ctx context.Context, t *testing.T, dir, name, ns string, values map[string]any) *releasev1.Release {
	t.Helper()
	return helmInstallWith(ctx, t, "secret", dir, name, ns, values)
}

// helmInstallWith is helmInstall with Helm's storage driver helmDriver.
func helmInstallWith(ctx context.Context, t *testing.T, helmDriver, dir, name, ns string, values map[string]any) *releasev1.Release {
	t.Helper()
	c, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(helmConfigWith(t, ns, helmDriver))
	in.ReleaseName, in.Namespace = name, ns
	in.WaitStrategy = kube.HookOnlyStrategy
	in.Timeout = time.Minute
	r, err := in.RunWithContext(ctx, c, values)
	if err != nil {
		t.Fatalf("helm install %s: %v", name, err)
	}
	return r.(*releasev1.Release)
}

// release from-helm reads a release that Helm's SDK installed from Helm's Secrets on
// the local control plane: --dry-run prints the equivalent Release, without it the
// Release is created; a release whose latest revision failed is refused with the
// rollback to do; --supersede waits for the Release's first successful apply, then
// marks Helm's record superseded and labelled, keeping it in Helm's history.
func TestReleaseFromHelm(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := testCtx(t)
	helmInstall(ctx, t, "testdata/charts/settings", "web", ns, map[string]any{"greeting": "bonjour"})

	res := plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--repository", "https://charts.example.com", "--dry-run")
	if res.code != 0 {
		t.Fatalf("from-helm --dry-run: exit %d\nstderr:\n%s", res.code, res.stderr)
	}
	var printed v1.Release
	if err := yaml.UnmarshalStrict([]byte(res.stdout), &printed); err != nil {
		t.Fatalf("from-helm --dry-run printed no Release: %v\n%s", err, res.stdout)
	}
	want := v1.Release{
		TypeMeta: metav1.TypeMeta{APIVersion: "convoy.kumodo.io/v1alpha1", Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web",
			Annotations: map[string]string{v1.AnnotationHelmRelease: ns + "/web.v1"}},
		Spec: v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: "settings", Version: "0.1.0"},
			Values: &runtime.RawExtension{Raw: []byte(`{"greeting":"bonjour"}`)}},
	}
	if d := cmp.Diff(want, printed); d != "" {
		t.Errorf("from-helm --dry-run (-want +got):\n%s", d)
	}
	if _, err := admin(t).GetRelease(ctx, ns, "web"); err == nil {
		t.Errorf("from-helm --dry-run created the Release")
	}

	res = plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--repository", "https://charts.example.com")
	if res.code != 0 || !strings.Contains(res.stdout, "release.convoy.kumodo.io/web created from Helm release "+ns+"/web.v1") ||
		!strings.Contains(res.stdout, "kubectl convoy release from-helm web -n "+ns+" --supersede") {
		t.Fatalf("from-helm: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	got := getRelease(t, ns, "web")
	if got.Annotations[v1.AnnotationHelmRelease] != ns+"/web.v1" || got.Spec.Chart.Name != "settings" || got.Spec.SyncPolicy.Automatic != nil {
		t.Errorf("the Release created: annotations %v, chart %+v, automatic %v", got.Annotations, got.Spec.Chart, got.Spec.SyncPolicy.Automatic)
	}

	// Before the first apply, Helm's record stays as it is.
	res = plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--supersede")
	if res.code != 1 || !strings.Contains(res.stderr, "not applied successfully yet") || !strings.Contains(res.stderr, "kubectl convoy release sync web --wait") {
		t.Errorf("--supersede before the first apply: exit %d, stderr %q", res.code, res.stderr)
	}
	writeStatus(t, ns, "web", func(r *v1.Release) {
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: refB}
	})
	res = plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--supersede")
	if res.code != 0 || !strings.Contains(res.stdout, "marked superseded") {
		t.Fatalf("--supersede: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	secret, err := kubernetes.NewForConfigOrDie(env.admin).CoreV1().Secrets(ns).Get(ctx, "sh.helm.release.v1.web.v1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Helm's record is gone: %v", err)
	}
	if d := cmp.Diff(map[string]string{"status": "superseded", v1.LabelTakenOverBy: ns + ".web"},
		map[string]string{"status": secret.Labels["status"], v1.LabelTakenOverBy: secret.Labels[v1.LabelTakenOverBy]}); d != "" {
		t.Errorf("the labels of Helm's record (-want +got):\n%s", d)
	}
	list := action.NewList(helmConfig(t, ns))
	list.StateMask = action.ListDeployed
	if deployed, err := list.Run(); err != nil || len(deployed) != 0 {
		t.Errorf("helm list after --supersede: %d deployed, %v; want none", len(deployed), err)
	}
	if history, err := action.NewHistory(helmConfig(t, ns)).Run("web"); err != nil || len(history) != 1 {
		t.Errorf("helm history after --supersede: %d revisions, %v; want 1", len(history), err)
	}
	res = plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--supersede")
	if res.code != 0 || !strings.Contains(res.stdout, "already marked superseded") {
		t.Errorf("--supersede again: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	res = plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--repository", "https://charts.example.com", "--name", "web2", "--dry-run")
	if res.code != 1 || !strings.Contains(res.stderr, "already taken over by the convoy Release "+ns+".web") {
		t.Errorf("from-helm of a release taken over: exit %d, stderr %q", res.code, res.stderr)
	}

	// A failed upgrade after revision 1: Helm's record of revision 2 is failed.
	h := helmInstall(ctx, t, "testdata/charts/settings", "api", ns, nil)
	failed := *h
	failed.Version, failed.Info = 2, &releasev1.Info{Status: common.StatusFailed, Description: "Upgrade failed"}
	if err := driver.NewSecrets(kubernetes.NewForConfigOrDie(env.admin).CoreV1().Secrets(ns)).Create("sh.helm.release.v1.api.v2", &failed); err != nil {
		t.Fatal(err)
	}
	res = plugin(t, nil, "release", "from-helm", "api", "-n", ns, "--repository", "https://charts.example.com")
	if res.code != 1 || !strings.Contains(res.stderr, "is failed at revision 2: roll back to the deployed revision 1 with helm rollback api 1 -n "+ns) {
		t.Errorf("from-helm of a failed release: exit %d, stderr %q", res.code, res.stderr)
	}
	res = plugin(t, nil, "release", "from-helm", "nope", "-n", ns, "--repository", "https://charts.example.com")
	if res.code != 1 || !strings.Contains(res.stderr, `no Helm release "nope" in namespace `+ns) {
		t.Errorf("from-helm of no release: exit %d, stderr %q", res.code, res.stderr)
	}
	res = plugin(t, nil, "release", "from-helm", "api", "-n", ns)
	if res.code != 2 || !strings.Contains(res.stderr, "--repository is required: Helm does not record where a chart came from") {
		t.Errorf("from-helm without --repository: exit %d, stderr %q", res.code, res.stderr)
	}
}

// With HELM_DRIVER=configmap, Helm keeps its records in ConfigMaps: release from-helm
// reads them with --helm-driver configmap, or with HELM_DRIVER set as for helm, and
// --supersede marks the ConfigMap; the default (secret) does not find the release and
// says how to read ConfigMaps; a driver other than secret or configmap is refused.
func TestReleaseFromHelmConfigMapDriver(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := testCtx(t)
	helmInstallWith(ctx, t, "configmap", "testdata/charts/settings", "web", ns, map[string]any{"greeting": "hola"})

	res := plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--repository", "https://charts.example.com", "--dry-run")
	if res.code != 1 || !strings.Contains(res.stderr, `no Helm release "web" in namespace `+ns+" (no Secret sh.helm.release.v1.web.v<revision>)") ||
		!strings.Contains(res.stderr, "give --helm-driver configmap") {
		t.Errorf("from-helm of a release in ConfigMaps, reading Secrets: exit %d, stderr %q", res.code, res.stderr)
	}
	res = plugin(t, map[string]string{"HELM_DRIVER": "sql"}, "release", "from-helm", "web", "-n", ns, "--repository", "https://charts.example.com", "--dry-run")
	if res.code != 1 || !strings.Contains(res.stderr, `HELM_DRIVER: storage driver "sql": only Helm's secret and configmap drivers are read; give --helm-driver secret or --helm-driver configmap`) {
		t.Errorf("from-helm with HELM_DRIVER=sql: exit %d, stderr %q", res.code, res.stderr)
	}
	res = plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--repository", "https://charts.example.com", "--helm-driver", "memory")
	if res.code != 2 || !strings.Contains(res.stderr, `--helm-driver: storage driver "memory": only Helm's secret and configmap drivers are read`) {
		t.Errorf("from-helm --helm-driver memory: exit %d, stderr %q", res.code, res.stderr)
	}

	res = plugin(t, nil, "release", "from-helm", "web", "-n", ns, "--repository", "https://charts.example.com", "--helm-driver", "configmap")
	if res.code != 0 || !strings.Contains(res.stdout, "release.convoy.kumodo.io/web created from Helm release "+ns+"/web.v1") ||
		!strings.Contains(res.stdout, "kubectl convoy release from-helm web -n "+ns+" --supersede --helm-driver configmap") {
		t.Fatalf("from-helm --helm-driver configmap: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	got := getRelease(t, ns, "web")
	if got.Annotations[v1.AnnotationHelmRelease] != ns+"/web.v1" || string(got.Spec.Values.Raw) != `{"greeting":"hola"}` {
		t.Errorf("the Release created: annotations %v, values %s", got.Annotations, got.Spec.Values.Raw)
	}
	writeStatus(t, ns, "web", func(r *v1.Release) {
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: refB}
	})
	// HELM_DRIVER as helm reads it, without the flag.
	res = plugin(t, map[string]string{"HELM_DRIVER": "configmaps"}, "release", "from-helm", "web", "-n", ns, "--supersede")
	if res.code != 0 || !strings.Contains(res.stdout, "marked superseded") {
		t.Fatalf("--supersede with HELM_DRIVER=configmaps: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	cm, err := kubernetes.NewForConfigOrDie(env.admin).CoreV1().ConfigMaps(ns).Get(ctx, "sh.helm.release.v1.web.v1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Helm's record is gone: %v", err)
	}
	if d := cmp.Diff(map[string]string{"status": "superseded", v1.LabelTakenOverBy: ns + ".web"},
		map[string]string{"status": cm.Labels["status"], v1.LabelTakenOverBy: cm.Labels[v1.LabelTakenOverBy]}); d != "" {
		t.Errorf("the labels of Helm's record (-want +got):\n%s", d)
	}
	list := action.NewList(helmConfigWith(t, ns, "configmap"))
	list.StateMask = action.ListDeployed
	if deployed, err := list.Run(); err != nil || len(deployed) != 0 {
		t.Errorf("helm list after --supersede: %d deployed, %v; want none", len(deployed), err)
	}
	if history, err := action.NewHistory(helmConfigWith(t, ns, "configmap")).Run("web"); err != nil || len(history) != 1 {
		t.Errorf("helm history after --supersede: %d revisions, %v; want 1", len(history), err)
	}
}

func TestHelmDriverOf(t *testing.T) {
	cases := map[string]struct {
		flag string
		set  bool
		env  string
		want fromhelm.Driver
		err  string // part of the error
		// usage: the error is a usage error (exit 2).
		usage bool
	}{
		"neither: Helm's default":              {want: fromhelm.DriverSecret},
		"HELM_DRIVER=configmap":                {env: "configmap", want: fromhelm.DriverConfigMap},
		"HELM_DRIVER=configmaps, as helm":      {env: "configmaps", want: fromhelm.DriverConfigMap},
		"HELM_DRIVER=secrets":                  {env: "secrets", want: fromhelm.DriverSecret},
		"the flag before HELM_DRIVER":          {flag: "secret", set: true, env: "configmap", want: fromhelm.DriverSecret},
		"the flag alone":                       {flag: "configmap", set: true, want: fromhelm.DriverConfigMap},
		"the flag given empty: Helm's default": {flag: "", set: true, env: "configmap", want: fromhelm.DriverSecret},
		"the flag sql": {flag: "sql", set: true, usage: true,
			err: `--helm-driver: storage driver "sql": only Helm's secret and configmap drivers are read`},
		"HELM_DRIVER=memory": {env: "memory",
			err: `HELM_DRIVER: storage driver "memory": only Helm's secret and configmap drivers are read; give --helm-driver secret or --helm-driver configmap`},
		"HELM_DRIVER=sql, the flag right": {flag: "configmap", set: true, env: "sql", want: fromhelm.DriverConfigMap},
		"case matters, as for helm":       {env: "ConfigMap", err: `storage driver "ConfigMap"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := helmDriverOf(tc.flag, tc.set, tc.env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				if code, want := ExitCode(err), map[bool]int{true: ExitUsage, false: ExitFailure}[tc.usage]; code != want {
					t.Errorf("exit code %d, want %d", code, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("driver %q, want %q", got, tc.want)
			}
		})
	}
}
