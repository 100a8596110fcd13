package restore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/cli"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/wiring"
)

// startConvoy runs the release controller and the observer on namespace ns, each a
// manager of its own with their default options, and returns what stops both and
// waits until they are stopped (also run at the end of the test, once).
func startConvoy(t *testing.T, ctx context.Context, ns string) (stop func()) {
	t.Helper()
	opts := hostmanager.Options{
		Resync:                 10 * time.Minute,
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		Namespaces:             []string{ns},
	}
	ctlMgr, err := controller.NewManager(host.RestConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	fetcher := testenv.Fetcher(t)
	// A registry of each start's own: the controller and the observer start twice.
	if _, err := wiring.Setup(ctx, ctlMgr, wiring.Options{Release: controller.Options{Source: fetcher, SkipNameValidation: true, Metrics: prometheus.NewRegistry()}}); err != nil {
		t.Fatal(err)
	}
	obsMgr, err := observer.NewManager(host.RestConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := observer.Setup(obsMgr, observer.Options{SkipNameValidation: true, Metrics: prometheus.NewRegistry()}); err != nil {
		t.Fatal(err)
	}
	var stops []func()
	for _, m := range []manager.Manager{ctlMgr, obsMgr} {
		stops = append(stops, run(t, ctx, m))
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		for _, s := range stops {
			s()
		}
	}
	t.Cleanup(stop)
	return stop
}

// run starts mgr and returns what stops it and waits for its end.
func run(t *testing.T, ctx context.Context, mgr manager.Manager) func() {
	t.Helper()
	stop := testenv.RunManager(t, ctx, "manager", mgr)
	testenv.WaitForCacheSync(t, ctx, "a manager", mgr)
	return stop
}

// target is a cluster Releases deliver to: the host ("") or a Cluster.
type target struct {
	cluster string
	kube    kubernetes.Interface
	client  client.Client
}

// registerRemote makes namespace ns on the remote cluster, registers it as the Cluster
// name (its kubeconfig in a Secret of ns on the host) and waits until it is Ready.
func registerRemote(t *testing.T, ctx context.Context, ns, name string) target {
	t.Helper()
	tg := newTarget(t, name, remote)
	if _, err := tg.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s on the remote cluster: %v", ns, err)
	}
	kubeconfig, err := testenv.Kubeconfig(remote, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.RegisterCluster(ctx, host.RestConfig(), name, nil, kubeconfig); err != nil {
		t.Fatal(err)
	}
	if err := dev.WaitClusterReady(ctx, host.RestConfig(), name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	return tg
}

func newTarget(t *testing.T, name string, c *localcluster.Cluster) target {
	t.Helper()
	kube, err := kubernetes.NewForConfig(c.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	return target{cluster: name, kube: kube, client: testenv.Client(t, c.RestConfig(), k8sruntime.NewScheme())}
}

// values are the app chart's values.
type values struct {
	Greeting string `json:"greeting"`
	Legacy   bool   `json:"legacy"`
	Cache    bool   `json:"cache"`
	KeepData bool   `json:"keepData"`
}

func (v values) raw() []byte {
	b, _ := json.Marshal(v)
	return b
}

// createRelease creates the Release name of the app chart as r says; a manual one is
// synced at once.
func createRelease(t *testing.T, ctx context.Context, c client.Client, ns, name string, r release) {
	t.Helper()
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.ReleaseSpec{
			Cluster:    r.cluster,
			Chart:      v1.ChartSource{Repository: charts, Name: "app", Version: "0.1.0"},
			Values:     &k8sruntime.RawExtension{Raw: r.values.raw()},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(!r.manual)},
		},
	}
	if err := c.Create(ctx, rel); err != nil {
		t.Fatalf("create Release %s: %v", name, err)
	}
	if r.manual {
		testenv.PostSync(t, ctx, host.RestConfig(), ns, name, false)
	}
}

// setValues replaces the Release's values (a merge patch: the controller writes its
// status meanwhile).
func setValues(t *testing.T, ctx context.Context, c client.Client, ns, name string, v values) {
	t.Helper()
	rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := fmt.Appendf(nil, `{"spec":{"values":%s}}`, v.raw())
	if err := c.Patch(ctx, rel, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("upgrade Release %s: %v", name, err)
	}
}

// readyAt says whether the Release is Ready at its generation with its values v (its
// status observed it, and its last applied render is the one the observer assessed),
// and what it is.
func ready(ctx context.Context, c client.Client, ns, name string, v values) (bool, string) {
	key := types.NamespacedName{Namespace: ns, Name: name}
	rel, inv := &v1.Release{}, &v1.ReleaseInventory{}
	if err := c.Get(ctx, key, rel); err != nil {
		return false, err.Error()
	}
	if err := c.Get(ctx, key, inv); err != nil {
		return false, err.Error()
	}
	cond := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionReady)
	last := ""
	if rel.Status.LastSuccessful != nil {
		last = rel.Status.LastSuccessful.RenderRef
	}
	var got values
	if rel.Spec.Values != nil {
		if err := json.Unmarshal(rel.Spec.Values.Raw, &got); err != nil {
			return false, fmt.Sprintf("%s: values: %v", name, err)
		}
	}
	ok := cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == rel.Generation &&
		rel.Status.ObservedGeneration == rel.Generation && last != "" && inv.Status.RenderRef == last && got == v
	return ok, fmt.Sprintf("%s: Ready %v, generation %d observed %d, last applied %q, assessed %q, values %+v",
		name, cond, rel.Generation, rel.Status.ObservedGeneration, last, inv.Status.RenderRef, got)
}

// waitReady waits until every Release of want is Ready with its values.
func waitReady(t *testing.T, ctx context.Context, c client.Client, ns string, want map[string]release, timeout time.Duration) {
	t.Helper()
	testenv.Eventually(t, ctx, fmt.Sprintf("%d Releases Ready", len(want)), timeout, func() (bool, string) {
		for name, r := range want {
			if ok, state := ready(ctx, c, ns, name, r.values); !ok {
				return false, state
			}
		}
		return true, ""
	})
}

// release is what the test knows of a Release: its Cluster, values and whether it is
// in manual mode.
type release struct {
	cluster string
	values  values
	manual  bool
}

// object names an object on a target: its Cluster ("" the host), kind, namespace and
// name.
type object struct {
	Cluster, Kind, Namespace, Name string
}

func (o object) String() string {
	return fmt.Sprintf("%s %s %s/%s", clusterName(o.Cluster), o.Kind, o.Namespace, o.Name)
}

func clusterName(c string) string {
	if c == "" {
		return "(host)"
	}
	return c
}

// live is what a target holds of an object: the Release its labels name, its UID and,
// for ConfigMaps, its data.
type live struct {
	Release string
	UID     types.UID
	Data    map[string]string
}

// rendered is what the app chart renders for Release name of namespace ns with v on
// cluster, with the data of its ConfigMaps.
func rendered(cluster, ns, name string, v values) map[object]map[string]string {
	out := map[object]map[string]string{
		{cluster, "ConfigMap", ns, name + "-config"}: {"greeting": v.Greeting},
		{cluster, "Service", ns, name}:               nil,
		{cluster, "ServiceAccount", ns, name}:        nil,
	}
	if v.Legacy {
		out[object{cluster, "ConfigMap", ns, name + "-legacy"}] = map[string]string{"greeting.properties": "greeting=" + v.Greeting}
	}
	if v.Cache {
		out[object{cluster, "ConfigMap", ns, name + "-cache"}] = map[string]string{"size": "64Mi"}
		out[object{cluster, "Secret", ns, name + "-cache"}] = nil
		out[object{cluster, "ClusterRole", "", ns + "-" + name + "-cache-reader"}] = nil
	}
	if v.KeepData {
		out[object{cluster, "ConfigMap", ns, name + "-data"}] = map[string]string{"seed": "1"}
	}
	return out
}

// kinds are the kinds the app chart renders.
var kinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
}

// labelled is every object of the app chart's kinds on the targets that carries the
// label convoy.kumodo.io/release-namespace: ns, that is that a Release of ns applied.
func labelled(t *testing.T, ctx context.Context, ns string, targets ...target) map[object]live {
	t.Helper()
	out := map[object]live{}
	for _, tg := range targets {
		for _, gvk := range kinds {
			var l metav1.PartialObjectMetadataList
			l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := tg.client.List(ctx, &l, client.MatchingLabels{v1.LabelReleaseNamespace: ns}); err != nil {
				t.Fatalf("list %s on %s: %v", gvk.Kind, clusterName(tg.cluster), err)
			}
			for _, o := range l.Items {
				if o.DeletionTimestamp != nil {
					continue
				}
				out[object{tg.cluster, gvk.Kind, o.Namespace, o.Name}] = live{Release: o.Labels[v1.LabelReleaseName], UID: o.UID}
			}
		}
		cms, err := tg.kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: v1.LabelReleaseNamespace + "=" + ns})
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range cms.Items {
			key := object{tg.cluster, "ConfigMap", cm.Namespace, cm.Name}
			if l, ok := out[key]; ok {
				l.Data = cm.Data
				out[key] = l
			}
		}
	}
	return out
}

// convoyBinary builds cmd/convoy into a temporary folder.
func convoyBinary(t *testing.T) string {
	t.Helper()
	bin, err := localcluster.BuildConvoy(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// convoy runs the convoy binary with args and returns its output.
func convoy(t *testing.T, ctx context.Context, bin string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("convoy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlConvoy runs kubectl convoy with args as the host's admin and returns its
// exit code, stdout and stderr.
func kubectlConvoy(ctx context.Context, args ...string) (int, string, string) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = ptr.To(host.KubeconfigPath())
	o := &cli.Options{ConfigFlags: flags, Streams: streams, Getenv: func(string) string { return "" }, Now: time.Now, PollInterval: time.Second}
	code := o.Execute(ctx, args)
	return code, out.String(), errOut.String()
}

// gone says whether the Release ns/name does not exist.
func gone(ctx context.Context, c client.Client, ns, name string) (bool, string) {
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &v1.Release{})
	return apierrors.IsNotFound(err), fmt.Sprintf("Release %s: %v", name, err)
}
