package fleet_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/dev/inprocess"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/releaseset"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/testenv/convoytest"
)

// The ReleaseSet tests of a real fleet start what they need in the test itself (no
// TestMain: the package's other tests have theirs): a host control plane with convoy
// apiserver, three target control planes on the host's etcd with workloads (a
// kube-controller-manager, a scheduler and a kwok node each, so that a Deployment
// becomes available), a chart repository of testdata/releaseset, and the release
// controller (with the ReleaseSet controller) and the observer, each a manager of its
// own as `convoy controller` and `convoy observer` are processes of their own.

// rsTargets is the number of target control planes.
const rsTargets = 3

// rsResync is the informer resync period of the tests' processes.
const rsResync = 5 * time.Second

// rsFleet is the environment of a ReleaseSet test on a real fleet.
type rsFleet struct {
	t       *testing.T
	ctx     context.Context
	host    *localcluster.Cluster
	targets *localcluster.Clusters
	charts  string
	c       client.WithWatch
	ns, id  string
	// clusters are the Cluster names, the i-th registering the i-th target.
	clusters []string
	// kube are the target clusters' clients, by Cluster name (not through links).
	kube map[string]kubernetes.Interface
	// links are in front of the targets: the i-th Cluster's kubeconfig names the i-th
	// (Hang makes the target unreachable for convoy, not for the test's kube clients).
	links []*testenv.Link
}

// startRSFleet starts the environment and registers target i (from 1) as the Cluster
// "rs-<i>-<id>" with labels[i-1] (its kubeconfig, through a testenv.Link, in a Secret
// of the test's namespace, which is also made on each target).
func startRSFleet(t *testing.T, labels ...map[string]string) *rsFleet {
	t.Helper()
	testenv.Integration(t)
	testenv.QuietLogs()
	ctx := testenv.Context(t, 12*time.Minute)
	host, err := localcluster.Start(ctx, localcluster.Options{})
	if err != nil {
		t.Fatalf("start the host control plane: %v", err)
	}
	t.Cleanup(func() { _ = host.Stop() })
	stop, err := apiservertest.Start(ctx, host, apiservertest.Options{
		Namespace: "convoy-rsfleet", ServiceName: "convoy-apiserver-rsfleet", EtcdPrefix: "/convoy-rsfleet",
		RegistrationTimeout: 2 * time.Minute, WaitForDiscovery: true,
	})
	if err != nil {
		t.Fatalf("start convoy's API server: %v", err)
	}
	t.Cleanup(stop)
	targets, err := localcluster.StartClusters(ctx, localcluster.ClustersOptions{
		Clusters: rsTargets, Etcd: host.EtcdURL(), Workloads: true, Nodes: 1,
		Name: func(i int) string { return fmt.Sprintf("rs-target-%d", i) },
	})
	if err != nil {
		t.Fatalf("start the target fleet: %v", err)
	}
	t.Cleanup(func() { _ = targets.Stop() })
	repo, err := chartrepo.Build("testdata/releaseset")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(repo)
	t.Cleanup(srv.Close)
	c := convoytest.Client(t, host.RestConfig())
	f := &rsFleet{t: t, ctx: ctx, host: host, targets: targets, charts: srv.URL, c: c,
		ns: testenv.Namespace(t, ctx, c, "rsfleet", nil), id: testenv.RandomSuffix(), kube: map[string]kubernetes.Interface{}}
	for i := 1; i <= rsTargets; i++ {
		target := targets.Cluster(targets.Name(i - 1))
		if target == nil {
			t.Fatalf("no target cluster %s", targets.Name(i-1))
		}
		kube, err := kubernetes.NewForConfig(target.RestConfig())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("namespace %s on %s: %v", f.ns, target.Host(), err)
		}
		link, err := testenv.LinkTo(target)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = link.Close() })
		f.links = append(f.links, link)
		kubeconfig, err := testenv.Kubeconfig(target, link.URL())
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("rs-%d-%s", i, f.id)
		var clusterLabels map[string]string
		if i <= len(labels) {
			clusterLabels = labels[i-1]
		}
		testenv.RegisterCluster(t, ctx, c, name, clusterLabels, f.ns, name, kubeconfig)
		f.clusters = append(f.clusters, name)
		f.kube[name] = kube
	}
	f.startConvoy()
	return f
}

// startConvoy runs the release controller (with the ReleaseSet controller) and the
// observer on the test's namespace until the end of the test.
func (f *rsFleet) startConvoy() {
	startInProcess(f.t, f.ctx, f.host.RestConfig(), inprocess.Options{
		Manager:       hostmanager.Options{Resync: rsResync, Namespaces: []string{f.ns}},
		ChartCacheDir: f.t.TempDir(),
		Controller:    controller.Options{Metrics: prometheus.NewRegistry(), AssessmentOverdueAfter: -1},
		Observer:      observer.Options{Metrics: prometheus.NewRegistry()},
	})
}

func (f *rsFleet) create(obj client.Object) {
	f.t.Helper()
	testenv.Create(f.t, f.ctx, f.c, obj)
}

// release is the name of the Release of set on the i-th Cluster (from 1).
func (f *rsFleet) release(set string, i int) string {
	return releaseset.ReleaseName(set, f.clusters[i-1])
}

// set is a ReleaseSet of the chart rsweb over the Clusters of selector, with values,
// automatic sync and the stages given.
func (f *rsFleet) set(name string, selector map[string]string, values string, stages ...v1.Stage) *v1.ReleaseSet {
	return &v1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: v1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: selector},
			Template: v1.ReleaseTemplate{Spec: v1.ReleaseSpec{
				Chart:      v1.ChartSource{Repository: f.charts, Name: "rsweb", Version: "0.1.0"},
				Values:     &runtime.RawExtension{Raw: []byte(values)},
				SyncPolicy: v1.SyncPolicy{Automatic: rsPtr(true)},
			}},
			Strategy: v1.ReleaseSetStrategy{Stages: stages},
		},
	}
}

// getSet reads the ReleaseSet name.
func (f *rsFleet) getSet(name string) *v1.ReleaseSet {
	f.t.Helper()
	return testenv.ReleaseSet(f.t, f.ctx, f.c, f.ns, name)
}

// releases are the Releases of set, by name.
func (f *rsFleet) releases(set string) map[string]v1.Release {
	f.t.Helper()
	return testenv.SetReleases(f.t, f.ctx, f.c, f.ns, set)
}

// updateTemplate changes the template of set name.
func (f *rsFleet) updateTemplate(name string, change func(*v1.ReleaseTemplate)) {
	f.t.Helper()
	testenv.UpdateTemplate(f.t, f.ctx, f.c, f.ns, name, change)
}

// labelCluster sets label key=value on the i-th Cluster.
func (f *rsFleet) labelCluster(i int, key, value string) {
	f.t.Helper()
	cl := &v1.Cluster{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: f.clusters[i-1]}, cl); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(cl.DeepCopy())
	if cl.Labels == nil {
		cl.Labels = map[string]string{}
	}
	cl.Labels[key] = value
	if err := f.c.Patch(f.ctx, cl, patch); err != nil {
		f.t.Fatal(err)
	}
}

// waitPhases waits until the status of set name describes its generation, at another
// revision than not, with the stage phases want ("canary Complete, rest Waiting"), and
// returns the set.
func (f *rsFleet) waitPhases(name, not, want string) *v1.ReleaseSet {
	f.t.Helper()
	return testenv.WaitPhases(f.t, f.ctx, f.c, f.ns, name, not, want, 3*time.Minute)
}

func rsConditions(cs []metav1.Condition) string {
	return testenv.Conditions(cs)
}

// rsReadyAt says whether rel is Ready at revision rev, as the ReleaseSet contract
// defines it.
func rsReadyAt(rel *v1.Release, rev string) bool {
	return testenv.ReadyAt(rel, rev)
}

// deployed is the test value of the Deployment that Release name applied on the i-th
// Cluster's target; "" when there is none.
func (f *rsFleet) deployed(i int, name string) string {
	f.t.Helper()
	d, err := f.kube[f.clusters[i-1]].AppsV1().Deployments(f.ns).Get(f.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		f.t.Fatalf("get Deployment %s on %s: %v", name, f.clusters[i-1], err)
	}
	return d.Annotations["convoy.kumodo.io/test-value"]
}

// rsAvailable says whether the Deployment d is available.
func rsAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// waitDeployed waits until the Deployment of Release name on the i-th target carries
// value and is available.
func (f *rsFleet) waitDeployed(i int, name, value string) {
	f.t.Helper()
	start := time.Now()
	defer func() {
		f.t.Logf("Deployment %s on %s at %q and available after %s", name, f.clusters[i-1], value, time.Since(start).Round(time.Millisecond))
	}()
	testenv.Eventually(f.t, f.ctx, fmt.Sprintf("Deployment %s on %s at %q", name, f.clusters[i-1], value), 2*time.Minute, func() (bool, string) {
		d, err := f.kube[f.clusters[i-1]].AppsV1().Deployments(f.ns).Get(f.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got := d.Annotations["convoy.kumodo.io/test-value"]
		return got == value && rsAvailable(d), fmt.Sprintf("value %q, available %t", got, rsAvailable(d))
	})
}

// grantPromote binds the ClusterRole convoy-promote as deploy/rbac ships it to user in
// the test's namespace.
func (f *rsFleet) grantPromote(user string) {
	f.t.Helper()
	raw, err := os.ReadFile("../../deploy/rbac/convoy-promote.yaml")
	if err != nil {
		f.t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(raw, role); err != nil {
		f.t.Fatal(err)
	}
	if err := f.c.Create(f.ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		f.t.Fatal(err)
	}
	f.create(&rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: user + "-convoy-promote"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})
	testenv.WaitAllowed(f.t, f.ctx, f.c, f.ns, user, rbacv1.PolicyRule{
		APIGroups: []string{v1.SchemeGroupVersion.Group}, Resources: []string{v1.ResourceReleaseSets + "/" + v1.SubresourcePromote}, Verbs: []string{"create"},
	})
}

// promoteAs POSTs releasesets/<name>/promote as user and returns the HTTP status and
// body.
func (f *rsFleet) promoteAs(user, name string) (int, string) {
	f.t.Helper()
	cfg, err := f.host.UserConfig(user)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.post(cfg, fmt.Sprintf("%s/%s/%s", v1.ResourceReleaseSets, name, v1.SubresourcePromote))
}

// post POSTs path of the test's namespace in convoy's API as cfg.
func (f *rsFleet) post(cfg *rest.Config, path string) (int, string) {
	f.t.Helper()
	return testenv.Post(f.t, f.ctx, cfg, f.ns, path)
}

// rsStageOrder watches the Releases of a set and records every violation of the
// rollout's order: a Release of a later stage that gets a revision (is created with
// it, or updated to it) while a Release of an earlier stage, as the watch has shown it
// so far, is not Ready at it (one resource's watch is in resourceVersion order).
type rsStageOrder struct {
	mu         sync.Mutex
	violations []string
	got        map[string][]string // Release → revisions in the order it got them
}

// watchStageOrder starts a rsStageOrder on the Releases of set; stage says which stage
// (0, 1, …) a Release name is in.
func (f *rsFleet) watchStageOrder(set string, stage func(release string) int) *rsStageOrder {
	f.t.Helper()
	o := &rsStageOrder{got: map[string][]string{}}
	testenv.WatchRevisions(f.t, f.ctx, f.c, f.ns, set, func(rel *v1.Release, latest map[string]*v1.Release, changed bool) {
		if !changed {
			return
		}
		rev := rel.Annotations[v1.AnnotationReleaseSetRevision]
		o.mu.Lock()
		defer o.mu.Unlock()
		o.got[rel.Name] = append(o.got[rel.Name], rev)
		for name, earlier := range latest {
			if stage(name) < stage(rel.Name) && !rsReadyAt(earlier, rev) {
				o.violations = append(o.violations, fmt.Sprintf("Release %s got revision %s while Release %s of an earlier stage was not Ready at it",
					rel.Name, rev, name))
			}
		}
	})
	return o
}

// check fails the test with the violations seen so far, and unless release got the
// revisions want, in order.
func (o *rsStageOrder) check(t *testing.T, release string, want ...string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, v := range o.violations {
		t.Error(v)
	}
	if got := o.got[release]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Release %s got the revisions %v, want %v", release, got, want)
	}
}

func rsPtr[T any](v T) *T { return testenv.Ptr(v) }
