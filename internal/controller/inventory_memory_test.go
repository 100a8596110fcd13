package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The cached inventory stands for the API server's only when its spec is the one the
// controller last wrote or read: same inventory, same generation, same syncWave.
func TestInventorySpecHolds(t *testing.T) {
	inv := func(uid string, generation int64, wave *v1.SyncWaveStatus) *v1.ReleaseInventory {
		return &v1.ReleaseInventory{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Generation: generation}, SyncWave: wave}
	}
	wave := func(current, total int32) *v1.SyncWaveStatus {
		return &v1.SyncWaveStatus{Current: current, Total: total}
	}
	cases := map[string]struct {
		last   inventorySpec
		cached *v1.ReleaseInventory
		want   bool
	}{
		"the spec last written":                         {specOf(inv("a", 3, nil)), inv("a", 3, nil), true},
		"the spec last written, holding at a wave":      {specOf(inv("a", 3, wave(1, 2))), inv("a", 3, wave(1, 2)), true},
		"an older generation (the cache is behind)":     {specOf(inv("a", 3, nil)), inv("a", 2, nil), false},
		"a newer generation (written by someone else)":  {specOf(inv("a", 3, nil)), inv("a", 4, nil), false},
		"the same objects, another wave":                {specOf(inv("a", 3, wave(2, 2))), inv("a", 3, wave(1, 2)), false},
		"the same objects, the hold not yet cleared":    {specOf(inv("a", 3, nil)), inv("a", 3, wave(1, 2)), false},
		"the same objects, the hold not yet written":    {specOf(inv("a", 3, wave(1, 2))), inv("a", 3, nil), false},
		"another inventory of the same name":            {specOf(inv("a", 3, nil)), inv("b", 3, nil), false},
		"nothing remembered (a written spec of no uid)": {inventorySpec{}, inv("", 0, nil), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.last.holds(tc.cached); got != tc.want {
				t.Errorf("holds = %v, want %v", got, tc.want)
			}
		})
	}
}

// A steady Release reads its inventory from the cache: its spec is the one the
// controller wrote last. Edits after that still track every object: the inventory
// lists the one an edit adds, and the prune finds the one an edit drops.
func TestASteadyReleaseReadsNoInventory(t *testing.T) {
	counter := &requestCounter{}
	e := newEnv(t, envOptions{resync: time.Second, requests: counter})
	e.createRelease("web", automatic(), interval(time.Second))
	for _, line := range e.steadyRequests(counter, "web") {
		if strings.HasPrefix(line, "GET ") && strings.Contains(line, "/releaseinventories/") {
			t.Errorf("a steady reconcile requested %s", line)
		}
	}

	// Edits after steady reconciles grow and shrink the list written last.
	e.update("web", values(`{"secret":"s3cr3t"}`))
	e.eventually("the inventory lists the Secret the edit added", func() (bool, string) {
		got := e.inventoryNames("web")
		return slices.Equal(got, []string{"ConfigMap/web-config", "Secret/web-secret"}), fmt.Sprint(got)
	})
	e.update("web", values(`{"secret":""}`))
	e.eventually("the Secret the edit dropped is pruned and leaves the inventory", func() (bool, string) {
		got := e.inventoryNames("web")
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web-secret"}, &corev1.Secret{})
		return slices.Equal(got, []string{"ConfigMap/web-config"}) && apierrors.IsNotFound(err), fmt.Sprintf("%v, Secret: %v", got, err)
	})
}

// A first apply creates the inventory with the objects it is about to apply, naming no
// render: the observer must not assess the render before its objects are applied (it
// found them Missing, and sent the /sync of a new render, before the apply). Once
// applied, the inventory names the render.
func TestAFirstApplyNamesItsRenderInTheInventoryOnceApplied(t *testing.T) {
	e := newEnv(t, envOptions{})
	var list v1.ReleaseInventoryList
	if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	w, err := e.client.Watch(e.ctx, &list, client.InNamespace(e.ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.createRelease("web", automatic())
	rel := e.waitApplied("web", "True", v1.ReasonApplied)

	var versions []v1.ReleaseInventory
	deadline := time.After(time.Minute)
	for len(versions) == 0 || versions[len(versions)-1].RenderRef == "" {
		select {
		case ev := <-w.ResultChan():
			if inv, ok := ev.Object.(*v1.ReleaseInventory); ok && inv.Name == "web" {
				versions = append(versions, *inv)
			}
		case <-deadline:
			t.Fatalf("no version of the inventory names the render; saw %d", len(versions))
		}
	}
	first := versions[0]
	if first.RenderRef != "" || len(first.Objects) != 1 || first.Objects[0].Name != "web-config" {
		t.Errorf("the inventory as created names render %q and lists %v; want no render and the ConfigMap web-config", first.RenderRef, first.Objects)
	}
	if got := versions[len(versions)-1].RenderRef; got != rel.Status.LastSuccessful.RenderRef {
		t.Errorf("the inventory names render %s, want the one applied, %s", got, rel.Status.LastSuccessful.RenderRef)
	}
}
