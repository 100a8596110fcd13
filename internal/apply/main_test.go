package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// cluster is the package's local control plane; nil with -short.
var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	testenv.ClusterMain(m, localcluster.Options{}, &cluster)
}

// env is what an integration test works with: a namespace of its own and an
// admin client of the local control plane.
type env struct {
	ctx     context.Context
	ns      string
	client  client.Client
	applier *Applier
}

// integration skips the test with -short; otherwise it makes the test's namespace.
func integration(t *testing.T) *env {
	t.Helper()
	ctx, c, ns := testenv.SetUp(t, cluster.RestConfig(), clientgoscheme.Scheme, 2*time.Minute, "apply")
	return &env{ctx: ctx, ns: ns, client: c, applier: New(c, Options{WaitTimeout: 30 * time.Second, WaitInterval: 100 * time.Millisecond})}
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	return testenv.Client(t, cfg, clientgoscheme.Scheme)
}

// The Release the test objects belong to.
var release = Owner{Name: "web", Namespace: "team-a"}

// configMap builds a rendered ConfigMap, labelled for release.
func configMap(ns, name string, data map[string]string) *unstructured.Unstructured {
	u := obj("v1", "ConfigMap", ns, name)
	u.SetLabels(map[string]string{v1alpha1.LabelReleaseName: release.Name, v1alpha1.LabelReleaseNamespace: release.Namespace})
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	u.Object["data"] = d
	return u
}

func with(u *unstructured.Unstructured, f func(u *unstructured.Unstructured)) *unstructured.Unstructured {
	f(u)
	return u
}

func annotate(key, value string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[key] = value
		u.SetAnnotations(a)
	}
}

func label(key, value string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[key] = value
		u.SetLabels(l)
	}
}

// crd builds a namespaced CRD of kind in group, served at v1.
func crd(group, kind string) *unstructured.Unstructured {
	plural := strings.ToLower(kind) + "s"
	u := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", plural+"."+group)
	u.Object["spec"] = map[string]any{
		"group": group,
		"scope": "Namespaced",
		"names": map[string]any{"kind": kind, "plural": plural, "singular": strings.ToLower(kind), "listKind": kind + "List"},
		"versions": []any{map[string]any{
			"name": "v1", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object", "x-kubernetes-preserve-unknown-fields": true,
			}},
		}},
	}
	return u
}

// get reads an object as the admin; it reports whether it exists.
func (e *env) get(t *testing.T, u *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	err := e.client.Get(e.ctx, client.ObjectKeyFromObject(u), live)
	if meta.IsNoMatchError(err) {
		return live, false // its kind is not served (yet)
	}
	if client.IgnoreNotFound(err) != nil {
		t.Fatalf("get %s: %v", describeObject(u), err)
	}
	return live, err == nil
}

// mustExist and mustNotExist check objects on the cluster.
func (e *env) mustExist(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		if _, ok := e.get(t, u); !ok {
			t.Errorf("%s does not exist, want it to", describeObject(u))
		}
	}
}

func (e *env) mustNotExist(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		if _, ok := e.get(t, u); ok {
			t.Errorf("%s exists, want it not to", describeObject(u))
		}
	}
}

// create creates objects directly (not through convoy).
func (e *env) create(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		if err := e.client.Create(e.ctx, u.DeepCopy()); err != nil {
			t.Fatalf("create %s: %v", describeObject(u), err)
		}
	}
}

// applyAll dry-runs the render and applies all its waves, failing the test on error.
func (e *env) applyAll(t *testing.T, objs ...Object) *Plan {
	t.Helper()
	plan, err := e.applier.DryRun(e.ctx, objs, nil)
	if err != nil {
		t.Fatalf("DryRun: %v", err)
	}
	for _, w := range plan.Waves() {
		if _, err := e.applier.ApplyWave(e.ctx, plan, w); err != nil {
			t.Fatalf("ApplyWave(%d): %v", w, err)
		}
	}
	return plan
}

// userApplier returns an Applier that acts as user, granted rules in the test's namespace.
func (e *env) userApplier(t *testing.T, user string, rules ...rbacv1.PolicyRule) *Applier {
	t.Helper()
	testenv.Grant(t, e.ctx, e.client, e.ns, user, rules...)
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	return New(newClient(t, cfg), Options{})
}

// eventually polls f until it returns nil or the deadline passes (testenv.Eventually).
func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	testenv.Eventually(t, context.Background(), "no error", timeout, func() (bool, string) {
		err := f()
		return err == nil, fmt.Sprint(err)
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func describeObject(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	return Describe(v1alpha1.ObjectReference{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()})
}
