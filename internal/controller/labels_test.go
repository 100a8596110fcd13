package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Decision 0155: a chart whose hook Role and RoleBinding are named
// <release>:create-cert (a name that is no label value) installs, upgrades and is
// deleted. convoy labels each hook object with v1.LabelValue of its name (a digest
// here) and keeps the name in the annotation of the same key; the Job that uses the
// RBAC runs.
func TestHookObjectsNamedWithAColon(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), testdataChart(t, "colon-hooks"))

	install := renderRefOf(e.waitHooksWaiting("web", "Jobs web-create-cert."))
	e.colonHookObjectsLabelled("the install")
	e.waitChartJobComplete("web-create-cert", install)
	e.sync("web", false)
	e.waitApplied("web", "True", v1.ReasonApplied)
	if cm := e.configMap("web-config"); cm == nil || cm.Data["version"] != "1" {
		t.Fatalf("ConfigMap web-config = %v, want version 1", cm)
	}

	e.update("web", values(`{"version": "2"}`))
	upgrade := renderRefOf(e.waitHooksWaiting("web", "Jobs web-create-cert."))
	if upgrade == install {
		t.Fatal("the values change made no new render")
	}
	e.colonHookObjectsLabelled("the upgrade")
	e.waitChartJobComplete("web-create-cert", upgrade)
	e.sync("web", false)
	e.waitApplied("web", "True", v1.ReasonApplied)
	if cm := e.configMap("web-config"); cm == nil || cm.Data["version"] != "2" {
		t.Fatalf("ConfigMap web-config = %v, want version 2", cm)
	}

	if err := e.client.Delete(e.ctx, e.release("web")); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Release deleted", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, &v1.Release{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	for _, ref := range e.colonHookObjects() {
		e.eventually(fmt.Sprintf("%T %s deleted with the Release", ref.obj(), ref.name), func() (bool, string) {
			return e.hookObject(ref.obj(), ref.namespace, ref.name) == nil, "it exists"
		})
	}
}

func (e *env) colonHookObjects() []hookObjectRef {
	return []hookObjectRef{
		{func() client.Object { return &rbacv1.Role{} }, e.ns, "web:create-cert"},
		{func() client.Object { return &rbacv1.RoleBinding{} }, e.ns, "web:create-cert"},
		{func() client.Object { return &corev1.ServiceAccount{} }, e.ns, "web-create-cert"},
	}
}

// colonHookObjectsLabelled checks that the hook objects of the colon-hooks chart exist,
// labelled as the controller's and the observer's selectors compute it.
func (e *env) colonHookObjectsLabelled(when string) {
	e.t.Helper()
	for _, ref := range e.colonHookObjects() {
		obj := e.hookObject(ref.obj(), ref.namespace, ref.name)
		if obj == nil {
			e.t.Fatalf("%s: hook %T %s does not exist", when, ref.obj(), ref.name)
		}
		labels, annotations := obj.GetLabels(), obj.GetAnnotations()
		if !v1.HasNameLabel(labels, annotations, v1.LabelHook, ref.name) {
			e.t.Errorf("%s: %T %s has hook label %q and annotation %q", when, obj, ref.name, labels[v1.LabelHook], annotations[v1.LabelHook])
		}
		if !v1.HasReleaseLabels(labels, annotations, "web", e.ns) {
			e.t.Errorf("%s: %T %s has labels %v, not those of Release %s/web", when, obj, ref.name, labels, e.ns)
		}
		if strings.Contains(ref.name, ":") && annotations[v1.LabelHook] != ref.name {
			e.t.Errorf("%s: %T %s: annotation %s = %q, want the name", when, obj, ref.name, v1.LabelHook, annotations[v1.LabelHook])
		}
	}
	// The controller finds its hook objects by these labels, as the observer does.
	selector := v1.ReleaseSelector("web", e.ns)
	selector[v1.LabelHook] = v1.LabelValue("web:create-cert")
	var roles rbacv1.RoleList
	if err := e.client.List(e.ctx, &roles, client.InNamespace(e.ns), client.MatchingLabels(selector)); err != nil {
		e.t.Fatal(err)
	}
	if len(roles.Items) != 1 || roles.Items[0].Name != "web:create-cert" {
		e.t.Errorf("%s: the label selector finds %d Roles, want web:create-cert", when, len(roles.Items))
	}
}

// Decision 0156: a hook object the API server refuses with 422 (a ConfigMap data
// key its validation refuses, which the render and YAML accept) is Unappliable, not
// DeployFailed: the message names the object and the server's field message, and the
// Release is looked at again at its interval only, not in the failure backoff. A new
// render with a valid key applies.
func TestRefusedHookObjectIsUnappliable(t *testing.T) {
	e := newEnv(t, envOptions{})
	const every = 10 * time.Minute
	e.createRelease("web", automatic(), interval(every), testdataChart(t, "refused"))
	rel := e.waitApplied("web", "False", v1.ReasonUnappliable)
	msg := appliedMessage(rel)
	for _, want := range []string{
		"ConfigMap " + e.ns + "/web-bootstrap",
		`data[not a valid key!]: Invalid value`,
		"no retry of this render can succeed",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not contain %q", msg, want)
		}
	}
	if cm := e.configMap("web-bootstrap"); cm != nil {
		t.Error("the refused hook ConfigMap exists")
	}

	n := e.settle("web")
	e.consistently("no retry of an Unappliable render", 3*time.Second, func() (bool, string) {
		got := e.reconciles("web")
		return got == n, fmt.Sprintf("%d reconciles after %d", got, n)
	})
	if r, _ := e.lastResult("web"); r.err != nil || r.res.RequeueAfter != every {
		t.Errorf("last result %+v, want no error and a requeue after the interval %s", r, every)
	}

	e.update("web", values(`{"key":"bootstrap.conf"}`))
	e.waitApplied("web", "True", v1.ReasonApplied)
	if cm := e.configMap("web-bootstrap"); cm == nil || cm.Data["bootstrap.conf"] != "x" {
		t.Errorf("after the fix: ConfigMap web-bootstrap = %v, want data bootstrap.conf", cm)
	}
}
