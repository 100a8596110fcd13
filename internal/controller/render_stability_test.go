package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Decision 0060, a render is a function of its inputs: a chart whose templates
// use randAlphaNum, uuidv4, now and genCA keeps its render, and so its Secret, over
// reconciles (periodic ones and a /sync), also after the controller lost its memory
// (as after a restart), until an input changes.
func TestRandomTemplateValuesKeepTheirRender(t *testing.T) {
	e := newEnv(t, envOptions{resync: time.Second})
	e.createRelease("db", chartName("generated"), automatic(), interval(time.Second))
	first := e.waitApplied("db", "True", v1.ReasonApplied).Status.Render.Ref
	secret := e.secret("db-generated")
	if secret == nil || len(secret.Data["password"]) != 24 || len(secret.Data["ca.crt"]) == 0 {
		t.Fatalf("Secret db-generated %+v, want a generated password and CA", secret)
	}

	stable := func(when string) {
		t.Helper()
		if got := e.release("db").Status.Render.Ref; got != first {
			t.Errorf("%s: render %s, want %s still", when, got, first)
		}
		if got := e.secret("db-generated"); got == nil || !maps.EqualFunc(got.Data, secret.Data, slices.Equal) {
			t.Errorf("%s: the generated Secret changed", when)
		}
		if names := e.renderNames("db"); len(names) != 1 {
			t.Errorf("%s: Renders %v, want one", when, names)
		}
	}
	n := e.reconciles("db")
	e.waitReconciled("db", n+3)
	e.sync("db", false)
	e.waitReconciled("db", e.reconciles("db")+1)
	stable("after periodic reconciles and a /sync")

	// A controller that starts again has no render in memory: it reads the Render of
	// the same inputs.
	e.reconciler.renders.forget(releaseKey(e.release("db")))
	e.waitReconciled("db", e.reconciles("db")+2)
	stable("after the render was forgotten")
}

// Decision 0061, install and upgrade in templates: the first render is an
// install at revision 1, and stays the Release's render once applied; a values change
// is a new render, an upgrade at revision 2; each new render is one revision more.
func TestReleaseRevisionCountsRenders(t *testing.T) {
	e := newEnv(t, envOptions{resync: time.Second})
	e.createRelease("db", chartName("generated"), automatic(), interval(time.Second))
	first := e.waitApplied("db", "True", v1.ReasonApplied).Status.Render.Ref
	e.wantRelease("db-release", "hello", "1", "true", "false")
	e.waitReconciled("db", e.reconciles("db")+3)
	if got := e.release("db").Status.Render.Ref; got != first {
		t.Fatalf("render %s after the first apply, want %s still: applying the install made a new render", got, first)
	}
	e.wantRelease("db-release", "hello", "1", "true", "false")

	e.update("db", values(`{"greeting":"hi"}`))
	e.waitConfigMap("db-release", "greeting", "hi")
	e.wantRelease("db-release", "hi", "2", "false", "true")

	e.update("db", values(`{"greeting":"hello"}`))
	e.waitConfigMap("db-release", "greeting", "hello")
	e.wantRelease("db-release", "hello", "3", "false", "true")

	revisions := map[string]bool{}
	for _, r := range e.renders("db") {
		revisions[r.Labels[v1.LabelRevision]] = true
	}
	if !revisions["1"] || !revisions["2"] || !revisions["3"] || len(revisions) != 3 {
		t.Errorf("Render revisions %v, want 1, 2 and 3", slices.Sorted(maps.Keys(revisions)))
	}
}

// A render that changed with no input change is reported once: here its Render was
// deleted by hand and the controller's memory lost (as in a restart), so the chart is
// templated again and its random values change.
func TestLostRenderIsReportedOnce(t *testing.T) {
	e := newEnv(t, envOptions{}) // reconciles only when the test asks
	e.createRelease("db", chartName("generated"), automatic())
	rel := e.waitApplied("db", "True", v1.ReasonApplied)
	first := rel.Status.Render.Ref
	e.settle("db")

	obj := &v1.Render{}
	obj.Namespace, obj.Name = e.ns, v1.RenderRef(first).RenderName("db")
	if err := e.client.Delete(e.ctx, obj); err != nil {
		t.Fatal(err)
	}
	e.eventually("the deleted Render to leave the controller's cache", func() (bool, string) {
		meta := e.reconciler.renderMetaNames(e.ctx, rel)
		return len(meta) == 0, fmt.Sprintf("Renders %v", meta)
	})
	e.reconciler.renders.forget(releaseKey(rel))

	n := e.reconciles("db")
	e.sync("db", false)
	e.waitReconciled("db", n)
	second := e.release("db").Status.Render.Ref
	if second == first {
		t.Fatalf("render %s after its Render was lost: the test chart does not test a change", second)
	}
	e.eventually("a RenderWarning event about it", func() (bool, string) {
		got := e.renderWarnings("db", "could not be reused")
		return len(got) == 1, fmt.Sprintf("%d events", len(got))
	})

	n = e.reconciles("db")
	e.sync("db", false)
	e.waitReconciled("db", n)
	e.settle("db")
	if got := e.release("db").Status.Render.Ref; got != second {
		t.Errorf("render %s, want %s still", got, second)
	}
	if got := e.renderWarnings("db", "could not be reused"); len(got) != 1 {
		t.Errorf("%d events about the render that changed, want 1: %v", len(got), got)
	}
}

// A steady Release of a chart of random values reads no Render: its render is reused
// from memory (the request budget of a steady Release is what it was).
func TestSteadyReleaseReadsNoRender(t *testing.T) {
	counter := &requestCounter{}
	e := newEnv(t, envOptions{resync: time.Second, requests: counter})
	e.createRelease("db", chartName("generated"), automatic(), interval(time.Second))
	for _, line := range e.steadyRequests(counter, "db") {
		if strings.Contains(line, "/renders") {
			t.Errorf("a steady reconcile requested %s", line)
		}
	}
}

// steadyRequests waits until the Release name, reconciled every second, is applied,
// and returns the requests of four reconciles after the next one.
func (e *env) steadyRequests(counter *requestCounter, name string) []string {
	e.t.Helper()
	e.waitApplied(name, "True", v1.ReasonApplied)
	e.waitReconciled(name, e.reconciles(name)+1)
	before, _ := counter.snapshot()
	e.waitReconciled(name, e.reconciles(name)+4)
	after, log := counter.snapshot()
	return log[before:after]
}

// renderMetaNames lists the names of the Release's Renders in the controller's cache.
func (r *Reconciler) renderMetaNames(ctx context.Context, rel *v1.Release) []string {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(v1.SchemeGroupVersion.WithKind("RenderList"))
	if err := r.client.List(ctx, &list, client.InNamespace(rel.Namespace), client.MatchingLabels{v1.LabelRelease: rel.Name}); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, m := range list.Items {
		out = append(out, m.Name)
	}
	return out
}

func chartName(name string) releaseOption {
	return func(r *v1.Release) { r.Spec.Chart.Name = name }
}

// renders lists the Render objects of the Release name.
func (e *env) renders(name string) []v1.Render {
	e.t.Helper()
	var list v1.RenderList
	if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns), client.MatchingLabels{v1.LabelRelease: name}); err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

func (e *env) renderNames(name string) []string {
	var out []string
	for _, r := range e.renders(name) {
		out = append(out, r.Name)
	}
	return out
}

// waitConfigMap waits until the ConfigMap name has data[key] == want.
func (e *env) waitConfigMap(name, key, want string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("ConfigMap %s %s=%s", name, key, want), func() (bool, string) {
		cm := e.configMap(name)
		return cm != nil && cm.Data[key] == want, fmt.Sprintf("ConfigMap %+v", cm)
	})
}

// wantRelease checks what the generated chart's ConfigMap name says of .Release.
func (e *env) wantRelease(name, greeting, revision, isInstall, isUpgrade string) {
	e.t.Helper()
	cm := e.configMap(name)
	if cm == nil {
		e.t.Fatalf("no ConfigMap %s", name)
	}
	want := map[string]string{"greeting": greeting, "revision": revision, "isInstall": isInstall, "isUpgrade": isUpgrade}
	got := map[string]string{}
	for k := range want {
		got[k] = cm.Data[k]
	}
	if !maps.Equal(want, got) {
		e.t.Errorf("ConfigMap %s says %v, want %v", name, got, want)
	}
}

// renderWarnings are the notes of the RenderWarning events about the Release name that
// contain text.
func (e *env) renderWarnings(name, text string) []string {
	e.t.Helper()
	var list eventsv1.EventList
	if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		if ev.Regarding.Name != name || ev.Reason != eventRenderWarning || !strings.Contains(ev.Note, text) {
			continue
		}
		count := 1
		if ev.Series != nil {
			count = int(ev.Series.Count)
		}
		for range count {
			out = append(out, ev.Note)
		}
	}
	return out
}
