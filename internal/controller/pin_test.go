package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// pin writes releases/<name>/pin with a merge patch: body is the pin, or nil to unpin.
func (e *env) pin(name string, pin map[string]any) {
	e.t.Helper()
	body := `{"pin":null}`
	if pin != nil {
		var fields []string
		for k, v := range pin {
			fields = append(fields, fmt.Sprintf("%q:%q", k, v))
		}
		body = `{"pin":{` + strings.Join(fields, ",") + `}}`
	}
	rel := e.release(name)
	if err := e.client.SubResource(v1.SubresourcePin).Patch(e.ctx, rel, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		e.t.Fatalf("patch releases/%s/pin with %s: %v", name, body, err)
	}
}

// waitGreeting waits until the ConfigMap web-config holds greeting.
func (e *env) waitGreeting(want string) {
	e.t.Helper()
	e.eventually("web-config greeting "+want, func() (bool, string) {
		cm := e.configMap("web-config")
		return cm != nil && cm.Data["greeting"] == want, fmt.Sprintf("ConfigMap %+v", cm)
	})
}

// Pin (docs/rollouts.md, "Pin"): in automatic mode a pin to an older render rolls
// back to it; a new render is then held (Applied=False/Pinned) while the pinned
// objects stay applied and their drift is still corrected; unpinning applies the
// current render.
func TestPinHoldsTheRenderAndUnpinApplies(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second), values(`{"greeting":"one"}`))
	first := e.waitApplied("web", "True", v1.ReasonApplied).Status.LastSuccessful.RenderRef
	e.waitGreeting("one")

	e.update("web", values(`{"greeting":"two"}`))
	e.waitGreeting("two")
	var second string
	e.eventually("the second render applied", func() (bool, string) {
		rel := e.release("web")
		ls := rel.Status.LastSuccessful
		if ls != nil {
			second = ls.RenderRef
		}
		return ls != nil && ls.RenderRef != first && rel.Status.Render != nil && ls.RenderRef == rel.Status.Render.Ref,
			fmt.Sprintf("lastSuccessful %+v, render %+v", ls, rel.Status.Render)
	})

	// --render of an older render: a rollback to it.
	e.pin("web", map[string]any{"renderRef": first})
	rel := e.waitApplied("web", "False", v1.ReasonPinned)
	e.waitGreeting("one")
	e.eventually("lastSuccessful back at the pinned render", func() (bool, string) {
		ls := e.release("web").Status.LastSuccessful
		return ls != nil && ls.RenderRef == first, fmt.Sprintf("lastSuccessful %+v", ls)
	})
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); !strings.Contains(c.Message, first) {
		t.Errorf("Pinned message %q does not name the pinned render %s", c.Message, first)
	}

	// A new render is held: the cluster keeps the pinned objects.
	e.update("web", values(`{"greeting":"three"}`))
	var third string
	e.eventually("the new render held", func() (bool, string) {
		rel := e.release("web")
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		if rel.Status.Render == nil || c == nil {
			return false, "no render or condition yet"
		}
		third = rel.Status.Render.Ref
		return third != first && third != second && c.Reason == v1.ReasonPinned && strings.Contains(c.Message, third),
			fmt.Sprintf("render %s, Applied=%s/%s: %s", third, c.Status, c.Reason, c.Message)
	})
	n := e.reconciles("web")
	e.waitReconciled("web", n+2) // two periodic reconciles (interval 1s) apply the pinned render
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "one" {
		t.Fatalf("ConfigMap %+v while pinned, want greeting one (the pinned render)", cm)
	}

	// Drift on the pinned objects is still corrected.
	cm := e.configMap("web-config")
	cm.Data["greeting"] = "edited by hand"
	if err := e.client.Update(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	e.waitGreeting("one")

	// Unpin: the current render is applied.
	e.pin("web", nil)
	e.waitGreeting("three")
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	if rel.Pin != nil {
		t.Errorf("pin %+v after unpin, want none", rel.Pin)
	}
	if ls := rel.Status.LastSuccessful; ls == nil || ls.RenderRef != third {
		t.Errorf("lastSuccessful %+v, want the current render %s", ls, third)
	}
}

// Pin without a render ref freezes the Release at status.lastSuccessful (during an
// incident): in manual mode the /pin write is itself a /sync request, and a later
// render waits, reported Pinned.
func TestPinWithoutRenderFreezesLastSuccessful(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", values(`{"greeting":"one"}`))
	e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	e.sync("web", false)
	applied := e.waitApplied("web", "True", v1.ReasonApplied).Status.LastSuccessful.RenderRef

	e.pin("web", map[string]any{})
	if p := e.release("web").Pin; p == nil || p.RenderRef != applied {
		t.Fatalf("pin %+v, want the last successful render %s", p, applied)
	}
	e.update("web", values(`{"greeting":"two"}`))
	e.sync("web", false)
	e.waitApplied("web", "False", v1.ReasonPinned)
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "one" {
		t.Errorf("ConfigMap %+v, want greeting one (pinned)", cm)
	}
}

// A pin whose Render no longer exists applies nothing: Applied=False/Pinned says so,
// the cluster keeps what was applied through the periodic reconciles, and unpinning
// applies the current render again.
func TestPinnedRenderGoneAppliesNothing(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second), values(`{"greeting":"one"}`))
	first := e.waitApplied("web", "True", v1.ReasonApplied).Status.LastSuccessful.RenderRef
	e.update("web", values(`{"greeting":"two"}`))
	e.waitGreeting("two")
	e.eventually("the second render applied", func() (bool, string) {
		ls := e.release("web").Status.LastSuccessful
		return ls != nil && ls.RenderRef != first, fmt.Sprintf("lastSuccessful %+v", ls)
	})

	gone := &v1.Render{}
	gone.Namespace, gone.Name = e.ns, v1.RenderRef(first).RenderName("web")
	if err := e.client.Delete(e.ctx, gone); err != nil {
		t.Fatalf("delete Render %s: %v", gone.Name, err)
	}
	e.pin("web", map[string]any{"renderRef": first})
	rel := e.waitApplied("web", "False", v1.ReasonPinned)
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); !strings.Contains(c.Message, "no longer exists") || !strings.Contains(c.Message, first) {
		t.Errorf("Pinned message %q does not say that the Render of %s no longer exists", c.Message, first)
	}
	// Nothing is applied: not even a hand edit is put back.
	cm := e.configMap("web-config")
	cm.Data["greeting"] = "edited by hand"
	if err := e.client.Update(e.ctx, cm); err != nil {
		t.Fatal(err)
	}
	n := e.reconciles("web")
	e.waitReconciled("web", n+2) // two periodic reconciles (interval 1s)
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "edited by hand" {
		t.Errorf("ConfigMap %+v with the pinned Render gone, want the hand edit kept (nothing applied)", cm)
	}

	e.pin("web", nil)
	e.waitApplied("web", "True", v1.ReasonApplied)
	e.waitGreeting("two")
}
