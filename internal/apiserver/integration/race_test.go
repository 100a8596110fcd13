package integration_test

import (
	"fmt"
	"sync"
	"testing"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// 50 concurrent /sync, /pin and /mutations writes against one Release lose no field
// write: the final object holds the last value of each, every request succeeds (no
// 500, conflicts are retried inside the server), and each /sync wrote a distinct,
// strictly increasing time.
func TestConcurrentSubresourceWritesLoseNothing(t *testing.T) {
	ns := testNamespace(t)
	r := create(t, release(ns, "podinfo"))
	r.Status.LastSuccessful = &convoyv1alpha1.LastSuccessful{RenderRef: refA}
	update(t, r, "status")

	const n = 50
	c := admin(t)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		errs     []error
		syncs    = map[string]bool{}
		lastPin  string
		lastMuts string
	)
	record := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
	}
	for i := 0; i < n; i++ {
		wg.Add(3)
		go func() {
			defer wg.Done()
			got, err := postSync(c, ctx(t), ns, "podinfo", "")
			record(err)
			if err == nil {
				mu.Lock()
				syncs[got.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]] = true
				mu.Unlock()
			}
		}()
		go func() {
			defer wg.Done()
			_, err := mergePatch(c, ctx(t), ns, "podinfo", "pin", map[string]interface{}{"pin": map[string]string{"reason": fmt.Sprint(i)}})
			record(err)
		}()
		go func() {
			defer wg.Done()
			m := []convoyv1alpha1.Mutation{{Target: convoyv1alpha1.MutationTarget{Kind: "Deployment", Name: fmt.Sprint("d", i)}, Patch: "spec: {replicas: 2}"}}
			_, err := mergePatch(c, ctx(t), ns, "podinfo", "mutations", map[string]interface{}{"mutations": m})
			record(err)
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d writes failed, first: %v", len(errs), 3*n, errs[0])
	}
	if len(syncs) != n {
		t.Errorf("%d distinct sync-requested-at values for %d /syncs, want %d", len(syncs), n, n)
	}

	// One more write of each, in order: the final object holds exactly these.
	lastPin, lastMuts = "final", "final"
	if _, err := mergePatch(c, ctx(t), ns, "podinfo", "pin", map[string]interface{}{"pin": map[string]string{"reason": lastPin}}); err != nil {
		t.Fatal(err)
	}
	if _, err := mergePatch(c, ctx(t), ns, "podinfo", "mutations", map[string]interface{}{"mutations": []convoyv1alpha1.Mutation{
		{Target: convoyv1alpha1.MutationTarget{Kind: "Deployment", Name: lastMuts}, Patch: "spec: {replicas: 3}"}}}); err != nil {
		t.Fatal(err)
	}
	synced, err := postSync(c, ctx(t), ns, "podinfo", "")
	if err != nil {
		t.Fatal(err)
	}
	final := get(t, ns, "podinfo")
	if final.Pin == nil || final.Pin.Reason != lastPin || final.Pin.RenderRef != refA {
		t.Errorf("final pin = %+v, want reason %q on %s", final.Pin, lastPin, refA)
	}
	if len(final.Mutations) != 1 || final.Mutations[0].Target.Name != lastMuts {
		t.Errorf("final mutations = %+v, want the last write's", final.Mutations)
	}
	latest := synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]
	if final.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt] != latest {
		t.Errorf("final sync-requested-at = %q, want the last /sync's %q", final.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt], latest)
	}
	for v := range syncs {
		if v >= latest {
			t.Errorf("an earlier /sync wrote %s, not before the last one's %s", v, latest)
		}
	}
	if final.Generation != 1 {
		t.Errorf("generation = %d, want 1", final.Generation)
	}
}
