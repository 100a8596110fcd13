package observer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/observer/health"
)

// recordingSyncer records the render each /sync approves and answers with answer
// (by render; nil when absent).
type recordingSyncer struct {
	renders []string
	answer  map[string]error
}

func (s *recordingSyncer) Sync(_ context.Context, _, _, render string) error {
	s.renders = append(s.renders, render)
	return s.answer[render]
}

// What a person approves is what convoy applies: each of the observer's /syncs
// approves the render its occurrences concern (the render assessed, or the hook
// batch's), one /sync per render, and a plain one for occurrences that name none. A
// 409 Conflict means that render is no longer the Release's: the signal is dropped
// (counted as refused, not as sent) and the occurrence counts as signalled; any other
// error fails the assessment and leaves what was not sent to be sent again.
func TestSendSyncBindsEachSyncToItsRender(t *testing.T) {
	r1, r2 := renderRef("1"), renderRef("2")
	newRender := health.Trigger{Kind: health.TriggerNewRender, Key: "render/" + r1, RenderRef: r1}
	wave := health.Trigger{Kind: health.TriggerSyncWave, Key: "wave/" + r1 + "/0", RenderRef: r1}
	hooksOfR2 := health.Trigger{Kind: health.TriggerHookBatch, Key: "hooks/0/a=j/Succeeded", RenderRef: r2}
	hooksOfNone := health.Trigger{Kind: health.TriggerHookBatch, Key: "hooks/1/b=k/Succeeded"}
	conflict := apierrors.NewConflict(schema.GroupResource{Group: v1.GroupName, Resource: "releases/sync"}, "web",
		errors.New("render 1111111111 is no longer the current render"))
	away := errors.New("the API server is away")

	cases := map[string]struct {
		send    []health.Trigger
		answer  map[string]error
		renders []string // the render each /sync approved, in order
		err     bool
		sent    map[health.TriggerKind]int
		refused map[health.TriggerKind]int
		memory  []string // remembered after a failure (nil: not set)
	}{
		"occurrences of the inventory's render: one /sync bound to it": {
			send: []health.Trigger{newRender, wave}, renders: []string{r1},
			sent: map[health.TriggerKind]int{health.TriggerNewRender: 1, health.TriggerSyncWave: 1},
		},
		"a hook batch of another render: a /sync of its own, bound to that render": {
			send: []health.Trigger{newRender, hooksOfR2}, renders: []string{r1, r2},
			sent: map[health.TriggerKind]int{health.TriggerNewRender: 1, health.TriggerHookBatch: 1},
		},
		"occurrences naming no render: the plain /sync": {
			send: []health.Trigger{hooksOfNone}, renders: []string{""},
			sent: map[health.TriggerKind]int{health.TriggerHookBatch: 1},
		},
		"409: the render is no longer the Release's; dropped, counted as refused": {
			send: []health.Trigger{newRender, wave}, answer: map[string]error{r1: conflict}, renders: []string{r1},
			refused: map[health.TriggerKind]int{health.TriggerNewRender: 1, health.TriggerSyncWave: 1},
		},
		"409 for one render, the next one still sent": {
			send: []health.Trigger{newRender, hooksOfR2}, answer: map[string]error{r1: conflict}, renders: []string{r1, r2},
			sent:    map[health.TriggerKind]int{health.TriggerHookBatch: 1},
			refused: map[health.TriggerKind]int{health.TriggerNewRender: 1},
		},
		"another error: the assessment fails; what went out is remembered": {
			send: []health.Trigger{newRender, hooksOfR2}, answer: map[string]error{r2: away}, renders: []string{r1, r2},
			err:    true,
			sent:   map[health.TriggerKind]int{health.TriggerNewRender: 1},
			memory: []string{"earlier", newRender.Key},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := newMetrics(prometheus.NewRegistry(), func() float64 { return 0 })
			if err != nil {
				t.Fatal(err)
			}
			syncer := &recordingSyncer{answer: tc.answer}
			o := &Observer{syncer: syncer, metrics: m}
			key := types.NamespacedName{Namespace: "team-a", Name: "web"}
			sig := health.Signals{Send: tc.send, Signalled: []string{"earlier"}}
			err = o.sendSync(context.Background(), key, testRelease("team-a", "web"), sig)
			if (err != nil) != tc.err {
				t.Fatalf("sendSync: error %v, want an error: %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.renders, syncer.renders); diff != "" {
				t.Errorf("renders approved (-want +got):\n%s", diff)
			}
			for _, kind := range []health.TriggerKind{health.TriggerNewRender, health.TriggerSyncWave, health.TriggerHookBatch} {
				if got := int(testutil.ToFloat64(m.syncTriggers.WithLabelValues(string(kind)))); got != tc.sent[kind] {
					t.Errorf("%s signalled: %d, want %d", kind, got, tc.sent[kind])
				}
				if got := int(testutil.ToFloat64(m.syncRefused.WithLabelValues(string(kind)))); got != tc.refused[kind] {
					t.Errorf("%s refused: %d, want %d", kind, got, tc.refused[kind])
				}
			}
			accepted := 0
			for _, r := range syncer.renders {
				if tc.answer[r] == nil {
					accepted++
				}
			}
			if got := int(testutil.ToFloat64(m.syncRequests)); got != accepted {
				t.Errorf("sync requests counted: %d, want the %d accepted", got, accepted)
			}
			mem, _ := o.memory.Get(key)
			if diff := cmp.Diff(tc.memory, mem); diff != "" {
				t.Errorf("memory (-want +got):\n%s", diff)
			}
		})
	}
}

// refused is the number of occurrences of kind whose /sync the API server refused.
func (r *running) refused(kind health.TriggerKind) int {
	return int(testutil.ToFloat64(r.obs.metrics.syncRefused.WithLabelValues(string(kind))))
}

// Against the real API server: the observer's /sync approves the render it assessed,
// so the sync-requested-render annotation it writes is the inventory's render. For a
// Release that has rendered anew since (its inventory still holds the older render),
// the /sync is refused with 409: nothing is written on the Release, the signal is
// dropped, not sent again, and the health data is written as after any /sync.
func TestObserverSyncApprovesTheInventorysRender(t *testing.T) {
	e := newEnv(t)
	ref, newer := renderRef("3"), renderRef("4")
	for name, current := range map[string]string{"web": ref, "stale": newer} {
		e.create(testRelease(e.ns, name))
		e.rendered(name, current)
		e.create(testConfigMap(e.ns, name, "config-"+name))
		e.create(testInventory(e.ns, name, ref, entry("ConfigMap", e.ns, "config-"+name, 0)))
	}
	obs := e.startObserver(observerOptions{resync: time.Second})

	e.eventually("web's /sync approves the inventory's render", func() (bool, string) {
		a := e.release("web").Annotations
		return a[v1.AnnotationSyncRequestedAt] != "" && a[v1.AnnotationSyncRequestedRender] == ref,
			fmt.Sprintf("annotations %v, want %s=%s", a, v1.AnnotationSyncRequestedRender, ref)
	})
	e.waitHealth("stale", ref, v1.HealthHealthy)
	e.consistently("stale's /sync refused once, not sent again, nothing written", 3*time.Second, func() (bool, string) {
		a := e.release("stale").Annotations
		refused := obs.refused(health.TriggerNewRender)
		return refused == 1 && obs.syncs() == 1 && a[v1.AnnotationSyncRequestedAt] == "" && a[v1.AnnotationSyncRequestedRender] == "",
			fmt.Sprintf("%d refused, %d accepted /sync, annotations of stale %v", refused, obs.syncs(), a)
	})
}
