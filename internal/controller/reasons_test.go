package controller

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
)

// Reasons reached by a real cause, then recovery once the cause is gone.

func TestValuesNotReadyThenRecovery(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), func(r *v1.Release) {
		r.Spec.ValuesFrom = []v1.ValuesReference{{Kind: v1.ValuesSourceConfigMap, Name: "web-values"}}
	})
	rel := e.waitApplied("web", "False", v1.ReasonValuesNotReady)
	if msg := appliedMessage(rel); !strings.Contains(msg, "web-values") {
		t.Errorf("message %q, want it to name the ConfigMap", msg)
	}
	if e.configMap("web-config") != nil {
		t.Fatal("web-config applied without its values")
	}

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-values"},
		Data:       map[string]string{"values.yaml": "greeting: from-values\n"},
	}
	if err := e.client.Create(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	// ValuesNotReady is transient: the work queue retries it by itself.
	e.waitApplied("web", "True", v1.ReasonApplied)
	if got := e.configMap("web-config"); got == nil || got.Data["greeting"] != "from-values" {
		t.Errorf("web-config = %+v, want the values of the ConfigMap", got)
	}
}

func TestSourceNotReadyThenRecovery(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), func(r *v1.Release) { r.Spec.Chart.Version = "9.9.9" })
	rel := e.waitApplied("web", "False", v1.ReasonSourceNotReady)
	if msg := appliedMessage(rel); !strings.Contains(msg, "0.1.0") {
		t.Errorf("message %q, want it to list the versions the repository offers", msg)
	}
	e.update("web", func(r *v1.Release) { r.Spec.Chart.Version = ">=0.1.0 <1.0.0" })
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	if rel.Status.Render == nil || rel.Status.Render.ChartVersion != "0.1.0" {
		t.Errorf("status.render = %+v, want chart version 0.1.0", rel.Status.Render)
	}
}

func TestClusterNotReadyWhenTheNamespaceIsNotSelected(t *testing.T) {
	e := newEnv(t, envOptions{})
	target := "selective-" + e.ns
	secret := e.kubeconfigSecret("kubeconfig")
	c := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: target},
		Spec: v1.ClusterSpec{
			Kubeconfig:        v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: e.ns, Name: secret.Name}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"convoy-test/admit": "yes"}},
		},
	}
	if err := e.client.Create(e.ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(e.ctx, c) })

	e.createRelease("web", automatic(), cluster(target))
	rel := e.waitApplied("web", "False", v1.ReasonClusterNotReady)
	if msg := appliedMessage(rel); !strings.Contains(msg, "does not admit") {
		t.Errorf("message %q, want it to say the Cluster does not admit the namespace", msg)
	}

	ns := &corev1.Namespace{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Name: e.ns}, ns); err != nil {
		t.Fatal(err)
	}
	labelled := ns.DeepCopy()
	labelled.Labels["convoy-test/admit"] = "yes"
	if err := e.client.Patch(e.ctx, labelled, client.MergeFrom(ns)); err != nil {
		t.Fatal(err)
	}
	e.waitApplied("web", "True", v1.ReasonApplied)
}

func TestPruneRemovesWhatANewRenderDropped(t *testing.T) {
	e := newEnv(t, envOptions{})
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other-" + e.ns}}
	if err := e.client.Create(e.ctx, other); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(e.ctx, other) })
	e.createRelease("web", automatic(), values(fmt.Sprintf(`{"extraNamespace":%q}`, other.Name)))
	e.waitApplied("web", "True", v1.ReasonApplied)
	elsewhere := client.ObjectKey{Namespace: other.Name, Name: "web-elsewhere"}
	if err := e.client.Get(e.ctx, elsewhere, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("web-elsewhere not applied: %v", err)
	}

	e.update("web", values(`{"extraNamespace":""}`))
	e.eventually("web-elsewhere pruned", func() (bool, string) {
		err := e.client.Get(e.ctx, elsewhere, &corev1.ConfigMap{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("get: %v", err)
	})
	// The controller deletes first and writes the inventory after, so that a failed
	// prune keeps what it could not delete listed: wait for that write.
	e.eventually("the inventory lists exactly the render (web-config)", func() (bool, string) {
		inv := &v1.ReleaseInventory{}
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, inv); err != nil {
			return false, err.Error()
		}
		return len(inv.Objects) == 1 && inv.Objects[0].Name == "web-config", fmt.Sprintf("inventory objects %+v", inv.Objects)
	})
	if e.configMap("web-config") == nil {
		t.Error("web-config was pruned")
	}
}

func TestRenderHistoryKeepsTheNamedRendersAndTenOthers(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic())
	e.waitApplied("web", "True", v1.ReasonApplied)
	const renders = render.KeepRenders + 3
	for i := 1; i < renders; i++ {
		e.update("web", values(fmt.Sprintf(`{"greeting":"hello %d"}`, i)))
		e.eventually(fmt.Sprintf("render %d applied", i), func() (bool, string) {
			cm := e.configMap("web-config")
			return cm != nil && cm.Data["greeting"] == fmt.Sprintf("hello %d", i), fmt.Sprintf("%+v", cm)
		})
	}
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	e.eventually("the history pruned", func() (bool, string) {
		var list v1.RenderList
		if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		current := false
		for _, r := range list.Items {
			current = current || r.RenderRef == rel.Status.Render.Ref
		}
		// The current render (also the last successful one) plus KeepRenders others.
		return len(list.Items) == render.KeepRenders+1 && current, fmt.Sprintf("%d Renders, current kept %v", len(list.Items), current)
	})
}

func appliedMessage(rel *v1.Release) string {
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); c != nil {
		return c.Message
	}
	return ""
}
