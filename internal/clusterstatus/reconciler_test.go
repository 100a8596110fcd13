package clusterstatus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/targets"
	"kumodo.io/convoy/internal/testenv"
)

// env is one test's Cluster status reconciler on the local control plane, with a
// namespace for its kubeconfig Secrets.
type env struct {
	t      *testing.T
	ctx    context.Context
	ns     string
	client client.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	scheme, err := hostmanager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Client(t, controlPlane.RestConfig(), scheme)
	e := &env{t: t, ctx: ctx, client: c}
	e.ns = testenv.Namespace(t, ctx, c, "cst", nil)
	mgr, err := hostmanager.New(controlPlane.RestConfig(), hostmanager.Process{Name: "convoy-controller", DefaultResync: 10 * time.Minute,
		Uncached: []client.Object{&corev1.Secret{}}}, hostmanager.Options{
		MetricsBindAddress: "0", HealthProbeBindAddress: "0", Namespaces: []string{e.ns},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Setup(mgr, Options{SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(mctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { stop(); <-done })
	return e
}

func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	testenv.Eventually(e.t, e.ctx, what, 90*time.Second, cond)
}

// TestClusterStatus: a Cluster whose kubeconfig reaches a second local cluster is
// Ready/Reachable with its version; a Cluster whose Secret is missing is
// KubeconfigNotReady until the Secret is created.
func TestClusterStatus(t *testing.T) {
	e := newEnv(t)
	second, err := localcluster.Start(e.ctx, localcluster.Options{})
	if err != nil {
		t.Fatalf("start a second local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := second.Stop(); err != nil {
			t.Errorf("stop the second local cluster: %v", err)
		}
	})
	kubeconfig, err := os.ReadFile(second.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}

	e.createSecret("second-kubeconfig", kubeconfig)
	reachable := e.createCluster(e.ns+"-second", "second-kubeconfig")
	got := e.waitCluster(reachable, metav1.ConditionTrue, v1.ReasonReachable)
	if got.Status.KubernetesVersion != "v1.37.2" {
		t.Errorf("kubernetesVersion %q, want v1.37.2", got.Status.KubernetesVersion)
	}
	c := apimeta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady)
	if !strings.Contains(c.Message, "v1.37.2") {
		t.Errorf("Ready message %q does not name the version", c.Message)
	}
	if got.Status.ObservedGeneration != got.Generation || c.ObservedGeneration != got.Generation {
		t.Errorf("observedGeneration %d (condition %d), want %d", got.Status.ObservedGeneration, c.ObservedGeneration, got.Generation)
	}

	missing := e.createCluster(e.ns+"-missing", "missing-kubeconfig")
	got = e.waitCluster(missing, metav1.ConditionFalse, v1.ReasonKubeconfigNotReady)
	c = apimeta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady)
	if !strings.Contains(c.Message, "missing-kubeconfig") || !strings.Contains(c.Message, "create it") {
		t.Errorf("Ready message %q does not say which Secret to create", c.Message)
	}
	if got.Status.KubernetesVersion != "" {
		t.Errorf("kubernetesVersion %q of an unusable Cluster, want none", got.Status.KubernetesVersion)
	}

	// The fix: the Secret appears (watched, so well before the next minute's recheck).
	e.createSecret("missing-kubeconfig", kubeconfig)
	got = e.waitCluster(missing, metav1.ConditionTrue, v1.ReasonReachable)
	if got.Status.KubernetesVersion != "v1.37.2" {
		t.Errorf("kubernetesVersion %q after the fix, want v1.37.2", got.Status.KubernetesVersion)
	}

	// A spec change of the first Cluster (a new generation) is reconciled at once; its
	// Ready condition stays True, so its lastTransitionTime is kept (it was set seconds
	// ago, before the second Cluster's checks).
	before := e.cluster(reachable)
	ltt := apimeta.FindStatusCondition(before.Status.Conditions, v1.ConditionReady).LastTransitionTime
	changed := before.DeepCopy()
	changed.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"convoy-test": "x"}}
	if err := e.client.Patch(e.ctx, changed, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	e.eventually("the new generation observed", func() (bool, string) {
		c := e.cluster(reachable)
		return c.Generation > before.Generation && c.Status.ObservedGeneration == c.Generation,
			fmt.Sprintf("generation %d, observed %d", c.Generation, c.Status.ObservedGeneration)
	})
	after := apimeta.FindStatusCondition(e.cluster(reachable).Status.Conditions, v1.ConditionReady)
	if after.Reason != v1.ReasonReachable || !after.LastTransitionTime.Equal(&ltt) {
		t.Errorf("Ready %s/%s at %v after a spec change, want Reachable at %v (unchanged)", after.Status, after.Reason, after.LastTransitionTime, ltt)
	}
}

// TestClusterStatusFromNotReadyKind: the Cluster status reconciler tells the
// failures of internal/targets apart by their kind, never by their message.
func TestClusterStatusFromNotReadyKind(t *testing.T) {
	const msg = "cannot read something" // a message that once meant "the host"
	cases := map[string]struct {
		err        error
		wantReason string // empty: no condition, the error goes back to the work queue
		wantMsg    string // default: the error's message, capitalised
	}{
		"unreachable": {err: &targets.NotReadyError{Kind: targets.Unreachable, Message: msg}, wantReason: v1.ReasonUnreachable},
		"kubeconfig not ready": {
			err: &targets.NotReadyError{Kind: targets.KubeconfigNotReady, Message: msg}, wantReason: v1.ReasonKubeconfigNotReady,
		},
		"wrapped": {
			err:        fmt.Errorf("resolve: %w", &targets.NotReadyError{Kind: targets.Unreachable, Message: "x"}),
			wantReason: v1.ReasonUnreachable, wantMsg: "X",
		},
		"host read failed":     {err: &targets.NotReadyError{Kind: targets.HostReadFailed, Message: "cannot reach x"}},
		"cluster missing":      {err: &targets.NotReadyError{Kind: targets.ClusterMissing, Message: msg}},
		"not admitted (a bug)": {err: &targets.NotReadyError{Kind: targets.NotAdmitted, Message: msg}},
		"no kind (a bug)":      {err: &targets.NotReadyError{Message: "cannot reach x"}},
		"not a NotReadyError":  {err: errors.New("cannot reach x")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cond, err := notReadyCondition(tc.err)
			if tc.wantReason == "" {
				if err == nil || !errors.Is(err, tc.err) {
					t.Fatalf("got condition %+v, error %v; want the error %v back", cond, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v, want a condition", err)
			}
			if tc.wantMsg == "" {
				tc.wantMsg = capitalize(tc.err.Error())
			}
			want := metav1.Condition{Status: metav1.ConditionFalse, Reason: tc.wantReason, Message: tc.wantMsg}
			if diff := cmp.Diff(want, cond); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}

// createSecret stores a kubeconfig in a Secret of the test's namespace, default key.
func (e *env) createSecret(name string, kubeconfig []byte) {
	e.t.Helper()
	testenv.Create(e.t, e.ctx, e.client, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Data:       map[string][]byte{v1.DefaultKubeconfigKey: kubeconfig},
	})
}

// createCluster creates a Cluster whose kubeconfig is the Secret secret of the test's
// namespace, and deletes it at the end of the test.
func (e *env) createCluster(name, secret string) string {
	e.t.Helper()
	return testenv.RegisterCluster(e.t, e.ctx, e.client, name, nil, e.ns, secret, nil).Name
}

// cluster reads the Cluster name.
func (e *env) cluster(name string) *v1.Cluster {
	e.t.Helper()
	c := &v1.Cluster{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Name: name}, c); err != nil {
		e.t.Fatalf("get Cluster %s: %v", name, err)
	}
	return c
}

// waitCluster waits until the Ready condition of the Cluster name has status and
// reason, and returns the Cluster.
func (e *env) waitCluster(name string, status metav1.ConditionStatus, reason string) *v1.Cluster {
	e.t.Helper()
	var c *v1.Cluster
	e.eventually(fmt.Sprintf("Cluster %s Ready=%s/%s", name, status, reason), func() (bool, string) {
		c = e.cluster(name)
		cond := apimeta.FindStatusCondition(c.Status.Conditions, v1.ConditionReady)
		if cond == nil {
			return false, "no Ready condition"
		}
		return cond.Status == status && cond.Reason == reason, fmt.Sprintf("Ready=%s/%s: %s", cond.Status, cond.Reason, cond.Message)
	})
	return c
}
