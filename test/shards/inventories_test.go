package shards_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// A shard's controller and observer cache only the ReleaseInventories of its own
// Releases, which the controller labels with the Release's shard (decision 0125: every
// shard cached every inventory); and an inventory written before inventories carried
// the label (an upgrade) is labelled by its shard's controller when it starts, and
// taken over by its caches, without a new apply (a manual Release, not synced again).
func TestAShardCachesOnlyItsInventories(t *testing.T) {
	ctx, c, ns := setUp(t, 4*time.Minute, "shard-inventories")
	firstA, stopFirstA := context.WithCancel(ctx)
	a, b := startShard(t, firstA, ns, "a"), startShard(t, ctx, ns, "b")

	for name, s := range map[string]struct {
		shard  string
		manual bool
	}{"in-a": {shard: "a"}, "in-b": {shard: "b"}, "upgraded": {shard: "a", manual: true}} {
		rel := &v1.Release{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{v1.LabelShard: s.shard}},
			Spec: v1.ReleaseSpec{
				Chart:      v1.ChartSource{Repository: charts, Name: "configmap", Version: "0.1.0"},
				Values:     &runtime.RawExtension{Raw: []byte(`{"value":"first"}`)},
				SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(!s.manual)},
			},
		}
		if err := c.Create(ctx, rel); err != nil {
			t.Fatal(err)
		}
		if s.manual {
			testenv.PostSync(t, ctx, host.RestConfig(), ns, name, false)
		}
	}
	for _, name := range []string{"in-a", "in-b", "upgraded"} {
		waitReady(t, ctx, c, types.NamespacedName{Namespace: ns, Name: name}, "first")
	}
	wantCached(t, ctx, ns, a, "in-a", "upgraded")
	wantCached(t, ctx, ns, b, "in-b")

	// An older controller wrote the inventory of "upgraded" without the label.
	stopFirstA()
	upgraded := types.NamespacedName{Namespace: ns, Name: "upgraded"}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, v1.LabelShard)
	if err := c.Patch(ctx, &v1.ReleaseInventory{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upgraded"}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	a = startShard(t, ctx, ns, "a")
	testenv.Eventually(t, ctx, "the new shard a to label the inventory of \"upgraded\"", time.Minute, func() (bool, string) {
		inv := &v1.ReleaseInventory{}
		if err := c.Get(ctx, upgraded, inv); err != nil {
			return false, err.Error()
		}
		return inv.Labels[v1.LabelShard] == "a", fmt.Sprintf("labels %v", inv.Labels)
	})
	wantCached(t, ctx, ns, a, "in-a", "upgraded")
	wantCached(t, ctx, ns, b, "in-b")
	waitReady(t, ctx, c, upgraded, "first")
}

// wantCached waits until the ReleaseInventories of ns in the caches of s's controller
// and observer are exactly names, each labelled with s's shard.
func wantCached(t *testing.T, ctx context.Context, ns string, s *shard, names ...string) {
	t.Helper()
	for process, cache := range map[string]client.Reader{"controller": s.ctlCache, "observer": s.obsCache} {
		testenv.Eventually(t, ctx, fmt.Sprintf("shard %s's %s to cache the inventories %v", s.name, process, names), 30*time.Second, func() (bool, string) {
			var list v1.ReleaseInventoryList
			if err := cache.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			var got []string
			ok := true
			for _, inv := range list.Items {
				got = append(got, inv.Name)
				ok = ok && inv.Labels[v1.LabelShard] == s.name
			}
			slices.Sort(got)
			return ok && slices.Equal(got, names), fmt.Sprintf("cached %v", got)
		})
	}
}

// The observer caches a Release of its shard without spec.values and
// spec.valuesFrom, which it never reads (decision 0126: inline values can be most of a
// Release); the controller, which renders them, caches them.
func TestTheObserverCachesReleasesWithoutValues(t *testing.T) {
	ctx, c, ns := setUp(t, 2*time.Minute, "shard-values")
	s := startShard(t, ctx, ns, "a")
	values := &runtime.RawExtension{Raw: []byte(`{"value":"first"}`)}
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "valued", Labels: map[string]string{v1.LabelShard: "a"}},
		Spec: v1.ReleaseSpec{
			Chart:      v1.ChartSource{Repository: charts, Name: "configmap", Version: "0.1.0"},
			Values:     values,
			ValuesFrom: []v1.ValuesReference{{Kind: v1.ValuesSourceConfigMap, Name: "extra", Optional: true}},
		},
	}
	if err := c.Create(ctx, rel); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(rel)
	testenv.Eventually(t, ctx, "both caches to hold the Release", 30*time.Second, func() (bool, string) {
		ctl, obs := &v1.Release{}, &v1.Release{}
		if err := s.ctlCache.Get(ctx, key, ctl); err != nil {
			return false, "controller: " + err.Error()
		}
		if err := s.obsCache.Get(ctx, key, obs); err != nil {
			return false, "observer: " + err.Error()
		}
		ok := obs.Spec.Values == nil && obs.Spec.ValuesFrom == nil && obs.Spec.Chart == rel.Spec.Chart &&
			obs.Labels[v1.LabelShard] == "a" && obs.ManagedFields == nil &&
			ctl.Spec.Values != nil && string(ctl.Spec.Values.Raw) == string(values.Raw) && len(ctl.Spec.ValuesFrom) == 1
		return ok, fmt.Sprintf("observer: values %v, valuesFrom %v, chart %v, labels %v, managed fields %d; controller: values %v, valuesFrom %v",
			obs.Spec.Values, obs.Spec.ValuesFrom, obs.Spec.Chart, obs.Labels, len(obs.ManagedFields), ctl.Spec.Values, ctl.Spec.ValuesFrom)
	})
}
