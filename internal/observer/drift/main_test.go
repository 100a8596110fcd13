package drift

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// cluster is the package's local control plane (no workloads: nothing here
// needs Pods); nil with -short.
var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	testenv.ClusterMain(m, localcluster.Options{}, &cluster)
}

// env is what a test works with: a namespace of its own, an admin client of
// the local control plane, and a request counter on that client.
type env struct {
	ctx     context.Context
	ns      string
	client  client.Client
	counter *testenv.RequestCounter
}

// integration skips the test with -short; otherwise it makes the test's namespace.
func integration(t *testing.T) *env {
	t.Helper()
	counter := &testenv.RequestCounter{}
	cfg := cluster.RestConfig()
	cfg.WrapTransport = counter.Wrap
	ctx, c, ns := testenv.SetUp(t, cfg, clientgoscheme.Scheme, 2*time.Minute, "drift")
	return &env{ctx: ctx, ns: ns, client: c, counter: counter}
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	return testenv.Client(t, cfg, clientgoscheme.Scheme)
}

// applyAsConvoy applies objs as convoy's controller does (internal/apply: dry
// run, then every wave), failing the test on error.
func (e *env) applyAsConvoy(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	render := make([]apply.Object, 0, len(objs))
	for _, o := range objs {
		render = append(render, apply.Object{Object: o})
	}
	applier := apply.New(e.client, apply.Options{})
	plan, err := applier.DryRun(e.ctx, render, nil)
	if err != nil {
		t.Fatalf("convoy's dry run: %v", err)
	}
	for _, w := range plan.Waves() {
		if _, err := applier.ApplyWave(e.ctx, plan, w); err != nil {
			t.Fatalf("convoy's apply of wave %d: %v", w, err)
		}
	}
}

// check runs a Checker on objs and fails the test on error.
func (e *env) check(t *testing.T, objs ...*unstructured.Unstructured) []v1alpha1.DriftedObject {
	t.Helper()
	got, err := New(Options{}).Check(e.ctx, e.client, objs)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return got
}

// editAs changes the live copy of u as field manager (an Update operation, as
// kubectl edit, scale or patch make), failing the test on error.
func (e *env) editAs(t *testing.T, manager string, u *unstructured.Unstructured, edit func(live *unstructured.Unstructured)) {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(u), live); err != nil {
		t.Fatal(err)
	}
	before := live.GetResourceVersion()
	edit(live)
	if err := e.client.Update(e.ctx, live, client.FieldOwner(manager)); err != nil {
		t.Fatalf("update %s/%s as %s: %v", u.GetKind(), u.GetName(), manager, err)
	}
	if live.GetResourceVersion() == before {
		t.Fatalf("the edit of %s/%s changed nothing: the test would not test it", u.GetKind(), u.GetName())
	}
}

// warm makes the client's RESTMapper discover kinds, as a long-lived target
// client has, so that request counts are those of the check alone.
func (e *env) warm(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if _, err := e.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			t.Fatal(err)
		}
	}
}

// Builders of rendered objects, labelled as convoy's render labels them.

func obj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(map[string]string{v1alpha1.LabelReleaseName: "web", v1alpha1.LabelReleaseNamespace: "team-a"})
	return u
}

func configMap(ns, name string, data map[string]any) *unstructured.Unstructured {
	u := obj("v1", "ConfigMap", ns, name)
	u.Object["data"] = data
	return u
}

// deployment is a Deployment with only what a chart usually sets: the API
// server defaults the strategy, revisionHistoryLimit, progressDeadlineSeconds,
// the container's imagePullPolicy, terminationMessagePath, ...
func deployment(ns, name string) *unstructured.Unstructured {
	u := obj("apps/v1", "Deployment", ns, name)
	u.Object["spec"] = map[string]any{
		"replicas": int64(2),
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec": map[string]any{"containers": []any{map[string]any{
				"name": "web", "image": "example.com/web:1",
				"ports": []any{map[string]any{"containerPort": int64(8080)}},
			}}},
		},
	}
	return u
}

// service is a Service whose clusterIP, ipFamilies, port protocol and
// targetPort the API server fills in.
func service(ns, name string) *unstructured.Unstructured {
	u := obj("v1", "Service", ns, name)
	u.Object["spec"] = map[string]any{
		"selector": map[string]any{"app": name},
		"ports":    []any{map[string]any{"name": "http", "port": int64(80)}},
	}
	return u
}

// secret is a Secret rendered with stringData, which the API server stores as data.
func secret(ns, name string) *unstructured.Unstructured {
	u := obj("v1", "Secret", ns, name)
	u.Object["stringData"] = map[string]any{"password": "s3cret"}
	return u
}

func ref(u *unstructured.Unstructured) v1alpha1.ObjectReference {
	gvk := u.GroupVersionKind()
	return v1alpha1.ObjectReference{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// eventually polls f until it returns nil or 15 seconds pass.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after 15s: %v", err)
		}
		<-tick.C
	}
}
