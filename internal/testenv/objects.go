package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/source"
)

// Context is a context for t that ends after timeout or with the test.
func Context(t testing.TB, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// Create creates obj and fails t if it cannot.
func Create(t testing.TB, ctx context.Context, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// Release reads the Release ns/name and fails t if it cannot.
func Release(t testing.TB, ctx context.Context, c client.Client, ns, name string) *v1.Release {
	t.Helper()
	rel := &v1.Release{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rel); err != nil {
		t.Fatalf("get Release %s: %v", name, err)
	}
	return rel
}

// WaitApplied waits, for at most timeout, until the Applied condition of the Release
// ns/name has status and reason, and returns the Release.
func WaitApplied(t testing.TB, ctx context.Context, c client.Client, ns, name, status, reason string, timeout time.Duration) *v1.Release {
	t.Helper()
	var rel *v1.Release
	Eventually(t, ctx, fmt.Sprintf("Release %s Applied=%s/%s", name, status, reason), timeout, func() (bool, string) {
		rel = Release(t, ctx, c, ns, name)
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		if c == nil {
			return false, "no Applied condition"
		}
		return string(c.Status) == status && c.Reason == reason, fmt.Sprintf("Applied=%s/%s: %s", c.Status, c.Reason, c.Message)
	})
	return rel
}

// ConfigMap reads the ConfigMap ns/name; nil when there is none.
func ConfigMap(t testing.TB, ctx context.Context, c client.Client, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatalf("get ConfigMap %s: %v", name, err)
	}
	return cm
}

// RegisterCluster creates the Cluster name with labels, whose kubeconfig is the key
// "value" of the Secret ns/secret, and deletes it at the end of the test (Clusters are
// not namespaced). With kubeconfig, it creates that Secret too.
func RegisterCluster(t testing.TB, ctx context.Context, c client.Client, name string, labels map[string]string, ns, secret string, kubeconfig []byte) *v1.Cluster {
	t.Helper()
	if kubeconfig != nil {
		Create(t, ctx, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secret}, Data: map[string][]byte{"value": kubeconfig}})
	}
	cl := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Spec:       v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: ns, Name: secret}}},
	}
	for k, v := range labels {
		cl.Labels[k] = v
	}
	Create(t, ctx, c, cl)
	t.Cleanup(func() { _ = c.Delete(context.Background(), cl) })
	return cl
}

// StartManager runs mgr until ctx ends or the test does (then it waits until mgr has
// stopped); the channel it returns is closed once mgr has stopped. An error of mgr's
// (but context.Canceled) fails t, named what.
func StartManager(t testing.TB, ctx context.Context, what string, mgr manager.Manager) <-chan struct{} {
	t.Helper()
	_, done := runManager(t, ctx, what, mgr)
	return done
}

// RunManager runs mgr until ctx ends, stop is called or the test ends; stop waits
// until mgr has stopped, and may be called more than once. An error of mgr's (but
// context.Canceled) fails t, named what.
func RunManager(t testing.TB, ctx context.Context, what string, mgr manager.Manager) (stop func()) {
	t.Helper()
	stop, _ = runManager(t, ctx, what, mgr)
	return stop
}

func runManager(t testing.TB, ctx context.Context, what string, mgr manager.Manager) (func(), <-chan struct{}) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", what, err)
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop, done
}

// WaitForCacheSync waits until the cache of mgr has synced, or fails t.
func WaitForCacheSync(t testing.TB, ctx context.Context, what string, mgr manager.Manager) {
	t.Helper()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatalf("the cache of %s did not sync", what)
	}
}

// Counter is the value of the counter name of g whose labels include labels; 0 when
// there is none.
func Counter(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			if matches(have, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func matches(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// Post POSTs path (with its query) of the namespace ns in convoy's API as the identity
// of cfg ("releasesets/web/promote") and returns the HTTP status and body.
func Post(t testing.TB, ctx context.Context, cfg *rest.Config, ns, path string) (int, string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("%s/apis/%s/namespaces/%s/%s", cfg.Host, v1.SchemeGroupVersion, ns, path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Ptr is a pointer to v.
func Ptr[T any](v T) *T { return &v }

// RawJSON is s (JSON) as a RawExtension, for a Release's values.
func RawJSON(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

// SetUp starts an integration test (it skips with -short): a context of timeout, a
// client of cfg with scheme (Client) and a new namespace named after prefix
// (Namespace).
func SetUp(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme, timeout time.Duration, prefix string) (context.Context, client.Client, string) {
	t.Helper()
	Integration(t)
	ctx := Context(t, timeout)
	c := Client(t, cfg, scheme)
	return ctx, c, Namespace(t, ctx, c, prefix, nil)
}

// WatchClient is a client of cfg with scheme that watches too, or fails t.
func WatchClient(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noDefaults decodes what convoy's API server sends without defaulting, so that tests
// see the stored objects as they are.
var noDefaults = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(v1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// RESTClient is a REST client of convoy.kumodo.io/v1alpha1 for cfg, which decodes
// without defaulting.
func RESTClient(t testing.TB, cfg *rest.Config) *rest.RESTClient {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &v1.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(noDefaults)}
	cfg.ContentType = runtime.ContentTypeJSON
	c, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatalf("creating a convoy client: %v", err)
	}
	return c
}

// Fetcher is a chart source (source.New) with a cache directory of the test's own, as
// the controller's.
func Fetcher(t testing.TB) *source.Fetcher {
	t.Helper()
	f, err := source.New(source.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
