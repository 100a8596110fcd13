package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

func TestSP42_TransientFailureWithoutInitialGoesToTheWorkQueue(t *testing.T) {
	// seed: "Without retryBackoff.initial, the work queue retries with its default rate
	// limiter." The Cluster does not exist: ClusterNotReady, transient.
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), cluster("nowhere"))
	rel := e.waitApplied("web", "False", v1.ReasonClusterNotReady)
	if c := rel.Status.Conditions[0]; !strings.Contains(c.Message, `"nowhere"`) {
		t.Errorf("message %q, want it to name the Cluster", c.Message)
	}
	// The rate limiter retries quickly at first (5 ms, doubling): several reconciles
	// come without any event.
	e.waitReconciled("web", 4)
	r, _ := e.lastResult("web")
	if r.err == nil || !strings.HasPrefix(r.err.Error(), v1.ReasonClusterNotReady+":") || r.res.RequeueAfter != 0 {
		t.Errorf("last result %+v, want the ClusterNotReady error returned to the work queue", r)
	}
	// The work queue that retries is convoy's limiter (newRetryLimiter, whose delays
	// TestSP42_DefaultRateLimiterStartsAt5msAndDoublesTo1000s pins): it counts them.
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "web"}}
	if n := e.reconciler.retries.NumRequeues(req); n < 3 {
		t.Errorf("the controller's retry limiter counts %d retries of web after 4 failed reconciles, want at least 3", n)
	}
}

func TestSP41_RestartResetsTheCount(t *testing.T) {
	// seed: "convoy counts the failures in memory. [...] A restart of the controller
	// also resets it." The controller is stopped and started again as the process
	// builds it (a new manager and Setup): the first retry after the restart waits
	// initial again, not the next step of the backoff.
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), cluster("nowhere"), func(r *v1.Release) {
		r.Spec.SyncPolicy.RetryBackoff = &v1.RetryBackoff{
			Initial: &metav1.Duration{Duration: 500 * time.Millisecond}, Factor: v1.NewFactor(10),
		}
	})
	e.eventually("two failures", func() (bool, string) {
		d := e.requeueDelays("web")
		return len(d) >= 2, fmt.Sprintf("delays %v", d)
	})
	if d := e.requeueDelays("web"); d[0] != 500*time.Millisecond || d[1] != 5*time.Second {
		t.Fatalf("delays %v, want 500ms then 5s", d)
	}
	if n := e.reconciler.failures.Get(policy.Key{Namespace: e.ns, Name: "web"}); n != 2 {
		t.Fatalf("the controller counts %d failures, want 2", n)
	}

	// Restarted while the next retry (5 s) waits; without the reset it would wait 50 s.
	n := len(e.requeueDelays("web"))
	e.restartController()
	e.eventually("the first reconcile after the restart", func() (bool, string) {
		d := e.requeueDelays("web")
		return len(d) > n, fmt.Sprintf("delays %v", d)
	})
	if d := e.requeueDelays("web"); d[n] != 500*time.Millisecond {
		t.Errorf("delays %v: the first failure after the restart waits %v, want initial (500ms): the count starts again", d, d[n])
	}
	if got := e.reconciler.failures.Get(policy.Key{Namespace: e.ns, Name: "web"}); got < 1 || got > 2 {
		t.Errorf("the restarted controller counts %d failures, want the failures since its start", got)
	}
}

func TestSP38_SP41_RetryBackoffAndResetAfterSuccess(t *testing.T) {
	e := newEnv(t, envOptions{})
	target := "target-" + e.ns
	e.createRelease("web", automatic(), interval(time.Hour), cluster(target), func(r *v1.Release) {
		r.Spec.SyncPolicy.RetryBackoff = &v1.RetryBackoff{
			Initial: &metav1.Duration{Duration: time.Second}, Factor: v1.NewFactor(3),
		}
	})
	e.waitApplied("web", "False", v1.ReasonClusterNotReady)
	// Retries n = 1, 2: initial × factor^(n−1) = 1 s, 3 s; returned as RequeueAfter.
	e.eventually("two retries", func() (bool, string) {
		return len(e.requeueDelays("web")) >= 2, fmt.Sprintf("delays %v", e.requeueDelays("web"))
	})
	delays := e.requeueDelays("web")
	if len(delays) < 2 || delays[0] != time.Second || delays[1] != 3*time.Second {
		t.Fatalf("delays %v, want 1s then 3s", delays)
	}

	// The cause goes away: a Cluster whose kubeconfig reaches the local control plane.
	secret := e.kubeconfigSecret("kubeconfig-" + target)
	c := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: target},
		Spec: v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{
			Namespace: e.ns, Name: secret.Name,
		}}},
	}
	if err := e.client.Create(e.ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(e.ctx, c) })
	e.waitApplied("web", "True", v1.ReasonApplied)

	// The reconcile's result is recorded after its status write: poll.
	e.eventually("the interval after the success", func() (bool, string) {
		d := e.requeueDelays("web")
		return len(d) > 0 && d[len(d)-1] == time.Hour, fmt.Sprintf("delays %v", d)
	})

	// A success reset the count: the next failure waits initial again. (The /sync
	// only starts a reconcile in automatic mode.)
	if err := e.client.Delete(e.ctx, secret); err != nil {
		t.Fatal(err)
	}
	e.sync("web", false)
	e.waitApplied("web", "False", v1.ReasonClusterNotReady)
	var d []time.Duration
	e.eventually("the first retry of the new failures", func() (bool, string) {
		d = e.requeueDelays("web")
		return len(d) >= 2 && d[len(d)-1] != time.Hour, fmt.Sprintf("delays %v", d)
	})
	if d[len(d)-2] != time.Hour || d[len(d)-1] != time.Second {
		t.Errorf("delays %v, want the interval then 1s: the count starts again after a success", d)
	}
}

// requeueDelays lists the RequeueAfter of every reconcile of name, in order.
func (e *env) requeueDelays(name string) []time.Duration {
	e.calls.mu.Lock()
	defer e.calls.mu.Unlock()
	var out []time.Duration
	for _, r := range e.calls.results[types.NamespacedName{Namespace: e.ns, Name: name}] {
		out = append(out, r.res.RequeueAfter)
	}
	return out
}

// kubeconfigSecret stores a kubeconfig of the local control plane's admin in a Secret
// of the test's namespace, under the default key.
func (e *env) kubeconfigSecret(name string) *corev1.Secret {
	e.t.Helper()
	cfg := hostConfig()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin"}
	kc.CurrentContext = "local"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		e.t.Fatal(err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Data:       map[string][]byte{v1.DefaultKubeconfigKey: data},
	}
	if err := e.client.Create(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
	return s
}
