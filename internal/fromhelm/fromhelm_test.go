package fromhelm

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// helmRecord is a Helm release record of podinfo 6.7.1 in namespace apps.
func helmRecord(revision int, status common.Status, opts ...func(*helmrelease.Release)) *helmrelease.Release {
	h := &helmrelease.Release{Name: "podinfo", Namespace: "apps", Version: revision,
		Info:  &helmrelease.Info{Status: status},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "podinfo", Version: "6.7.1"}, Values: map[string]any{"replicaCount": 1, "ui": map[string]any{"color": "#34577c"}}},
	}
	for _, o := range opts {
		o(h)
	}
	return h
}

func config(c map[string]any) func(*helmrelease.Release) {
	return func(h *helmrelease.Release) { h.Config = c }
}

func labelled(k, v string) func(*helmrelease.Release) {
	return func(h *helmrelease.Release) { h.Labels = map[string]string{k: v} }
}

func TestPick(t *testing.T) {
	cases := map[string]struct {
		history []*helmrelease.Release
		want    int    // revision picked
		err     string // part of the refusal
	}{
		"the only revision, deployed": {history: []*helmrelease.Release{helmRecord(1, common.StatusDeployed)}, want: 1},
		"the latest of several, in any order": {history: []*helmrelease.Release{
			helmRecord(2, common.StatusSuperseded), helmRecord(3, common.StatusDeployed), helmRecord(1, common.StatusSuperseded)}, want: 3},
		"a failed upgrade after a deployed revision: roll back": {history: []*helmrelease.Release{
			helmRecord(1, common.StatusDeployed), helmRecord(2, common.StatusFailed)},
			err: "is failed at revision 2: roll back to the deployed revision 1 with helm rollback podinfo 1 -n apps"},
		"a failed install": {history: []*helmrelease.Release{helmRecord(1, common.StatusFailed)},
			err: "is failed at revision 1 and was never deployed"},
		"pending-upgrade": {history: []*helmrelease.Release{helmRecord(1, common.StatusDeployed), helmRecord(2, common.StatusPendingUpgrade)},
			err: "is pending-upgrade at revision 2: a Helm operation is running or was interrupted; wait for it to finish, or roll back with helm rollback podinfo -n apps"},
		"pending-install": {history: []*helmrelease.Release{helmRecord(1, common.StatusPendingInstall)}, err: "is pending-install at revision 1"},
		"uninstalled": {history: []*helmrelease.Release{helmRecord(1, common.StatusUninstalled)},
			err: "is uninstalled at revision 1, not deployed: only a deployed Helm release can be taken over"},
		"already taken over": {history: []*helmrelease.Release{helmRecord(1, common.StatusSuperseded, labelled(v1.LabelTakenOverBy, "team.podinfo"))},
			err: "already taken over by the convoy Release team.podinfo"},
		"no chart metadata": {history: []*helmrelease.Release{helmRecord(1, common.StatusDeployed, func(h *helmrelease.Release) { h.Chart = nil })},
			err: "records no chart metadata"},
		"no revision": {err: "no revision recorded"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Pick(tc.history)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Pick: error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != tc.want {
				t.Errorf("Pick: revision %d, want %d", got.Version, tc.want)
			}
		})
	}
}

func TestReleaseFrom(t *testing.T) {
	yes := true
	annotated := func(ref string) map[string]string { return map[string]string{v1.AnnotationHelmRelease: ref} }
	cases := map[string]struct {
		helm *helmrelease.Release
		opts Options
		want *v1.Release
	}{
		"same namespace, no values: manual mode, no targetNamespace": {
			helm: helmRecord(1, common.StatusDeployed),
			opts: Options{Namespace: "apps", Repository: "https://stefanprodan.github.io/podinfo"},
			want: &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo", Annotations: annotated("apps/podinfo.v1")},
				Spec: v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "https://stefanprodan.github.io/podinfo", Name: "podinfo", Version: "6.7.1"}}},
		},
		"the user's values only, not the chart's defaults": {
			helm: helmRecord(4, common.StatusDeployed, config(map[string]any{"replicaCount": 3, "ui": map[string]any{"message": "hi"}})),
			opts: Options{Namespace: "apps", Repository: "oci://ghcr.io/stefanprodan/charts"},
			want: &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo", Annotations: annotated("apps/podinfo.v4")},
				Spec: v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "oci://ghcr.io/stefanprodan/charts", Name: "podinfo", Version: "6.7.1"},
					Values: &runtime.RawExtension{Raw: []byte(`{"replicaCount":3,"ui":{"message":"hi"}}`)}}},
		},
		"another namespace, name, Cluster, automatic": {
			helm: helmRecord(2, common.StatusDeployed),
			opts: Options{Namespace: "team", Name: "web", Cluster: "prod-eu", Automatic: true, Repository: "https://charts.example.com"},
			want: &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", Annotations: annotated("apps/podinfo.v2")},
				Spec: v1.ReleaseSpec{Cluster: "prod-eu", TargetNamespace: "apps",
					Chart:      v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"},
					SyncPolicy: v1.SyncPolicy{Automatic: &yes}}},
		},
		"empty user values": {
			helm: helmRecord(1, common.StatusDeployed, config(map[string]any{})),
			opts: Options{Namespace: "apps", Repository: "https://charts.example.com"},
			want: &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo", Annotations: annotated("apps/podinfo.v1")},
				Spec: v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReleaseFrom(tc.helm, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.TypeMeta = metav1.TypeMeta{APIVersion: "convoy.kumodo.io/v1alpha1", Kind: "Release"}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ReleaseFrom (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseRef(t *testing.T) {
	cases := map[string]struct {
		in   string
		want Ref
		err  bool
	}{
		"plain":             {in: "apps/podinfo.v3", want: Ref{Namespace: "apps", Name: "podinfo", Revision: 3}},
		"a name with dots":  {in: "apps/my.app.v12", want: Ref{Namespace: "apps", Name: "my.app", Revision: 12}},
		"no revision":       {in: "apps/podinfo", err: true},
		"no namespace":      {in: "podinfo.v1", err: true},
		"revision 0":        {in: "apps/podinfo.v0", err: true},
		"round trip of Ref": {in: Ref{Namespace: "a", Name: "b", Revision: 7}.String(), want: Ref{Namespace: "a", Name: "b", Revision: 7}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRef(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("ParseRef(%q): error %v, want error %v", tc.in, err, tc.err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ParseRef(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

func TestCheckSupersede(t *testing.T) {
	release := func(annotation string, applied bool) *v1.Release {
		r := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}}
		if annotation != "" {
			r.Annotations = map[string]string{v1.AnnotationHelmRelease: annotation}
		}
		if applied {
			r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: "sha256:" + strings.Repeat("a", 64)}
		}
		return r
	}
	cases := map[string]struct {
		rel  *v1.Release
		helm *helmrelease.Release
		err  string // "" ok
	}{
		"applied, Helm's revision still deployed": {rel: release("apps/podinfo.v2", true), helm: helmRecord(2, common.StatusDeployed)},
		"not applied yet": {rel: release("apps/podinfo.v2", false), helm: helmRecord(2, common.StatusDeployed),
			err: "was not applied successfully yet (no status.lastSuccessful): sync it first (kubectl convoy release sync web --wait)"},
		"not taken from Helm": {rel: release("", true), helm: helmRecord(2, common.StatusDeployed), err: "has no annotation convoy.kumodo.io/helm-release"},
		"Helm upgraded since": {rel: release("apps/podinfo.v2", true), helm: helmRecord(3, common.StatusDeployed),
			err: "took over apps/podinfo.v2, but Helm's latest record is apps/podinfo.v3"},
		"already marked for this Release": {rel: release("apps/podinfo.v2", true),
			helm: helmRecord(2, common.StatusSuperseded, labelled(v1.LabelTakenOverBy, "team.web")), err: ErrAlreadySuperseded.Error()},
		"superseded by someone else": {rel: release("apps/podinfo.v2", true),
			helm: helmRecord(2, common.StatusSuperseded), err: "is superseded, not deployed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckSupersede(tc.rel, tc.helm)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("CheckSupersede: error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// TestParseDriver reads HELM_DRIVER's values as helm does; only secret and configmap.
func TestParseDriver(t *testing.T) {
	for name, want := range map[string]Driver{
		"": DriverSecret, "secret": DriverSecret, "secrets": DriverSecret,
		"configmap": DriverConfigMap, "configmaps": DriverConfigMap,
		"sql": "", "memory": "", "Secret": "", "cfgmap": "",
	} {
		got, err := ParseDriver(name)
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "only Helm's secret and configmap drivers are read") {
				t.Errorf("ParseDriver(%q): %q, %v; want the refusal", name, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseDriver(%q): %q, %v; want %q", name, got, err, want)
		}
	}
}
