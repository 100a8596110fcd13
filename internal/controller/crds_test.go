package controller

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// A chart with a CRD in crds/ (as traefik's and cert-manager's charts ship them) and
// another among its templates, and a custom resource of each kind, installs in one
// go: the CRDs are applied first and waited for, the custom resources' dry run is
// skipped while the target does not know their kinds, then they are applied. An
// upgrade changes the custom resources; deleting the Release deletes them and leaves
// the CRDs (convoy never deletes a CRD: that would delete every custom resource of
// the kind, in every namespace).
func TestCRDsAndTheirCustomResourcesInstallUpgradeAndDelete(t *testing.T) {
	e := newEnv(t, envOptions{})
	crds := []string{"widgets.crds.convoy.example.com", "gadgets.crds.convoy.example.com"}
	for _, name := range crds {
		if e.crd(name) != nil {
			t.Fatalf("CRD %s exists before the test", name)
		}
	}

	e.createRelease("web", automatic(), testdataChart(t, "crds"))
	e.waitApplied("web", "True", v1.ReasonApplied)
	for _, name := range crds {
		if e.crd(name) == nil {
			t.Fatalf("CRD %s was not applied", name)
		}
	}
	for _, kind := range []string{"Widget", "Gadget"} {
		if got := e.customResourceSize(kind, "web"); got != 1 {
			t.Errorf("%s web: spec.size %d, want 1", kind, got)
		}
	}

	e.update("web", values(`{"size":2}`))
	e.eventually("the custom resources upgraded", func() (bool, string) {
		w, g := e.customResourceSize("Widget", "web"), e.customResourceSize("Gadget", "web")
		return w == 2 && g == 2, fmt.Sprintf("Widget spec.size %d, Gadget spec.size %d", w, g)
	})
	e.waitApplied("web", "True", v1.ReasonApplied)

	rel := e.release("web")
	if err := e.client.Delete(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Release gone", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKeyFromObject(rel), &v1.Release{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("get: %v", err)
	})
	for _, kind := range []string{"Widget", "Gadget"} {
		if got := e.customResourceSize(kind, "web"); got != -1 {
			t.Errorf("%s web is left after the Release's deletion", kind)
		}
	}
	for _, name := range crds {
		if crd := e.crd(name); crd == nil || crd.GetDeletionTimestamp() != nil {
			t.Errorf("CRD %s was deleted with the Release", name)
		}
	}
}

// crd reads the CustomResourceDefinition name; nil when it does not exist.
func (e *env) crd(name string) *unstructured.Unstructured {
	e.t.Helper()
	return e.object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
}

// customResourceSize reads spec.size of the test chart's custom resource kind/name in
// the test's namespace; -1 when it does not exist.
func (e *env) customResourceSize(kind, name string) int64 {
	e.t.Helper()
	u := e.object("crds.convoy.example.com/v1", kind, e.ns, name)
	if u == nil {
		return -1
	}
	size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
	return size
}

// object reads an object of the target; nil when it does not exist or its kind is not
// served.
func (e *env) object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	e.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := e.client.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err), apimeta.IsNoMatchError(err):
		return nil
	case err != nil:
		e.t.Fatalf("get %s %s: %v", kind, name, err)
	}
	return u
}
