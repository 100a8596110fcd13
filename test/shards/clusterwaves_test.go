package shards_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// Cluster waves hold across shards (decision 0172; SP-30): a Release of cluster
// wave 1 in shard a waits for a Release of wave 0 in shard b on the same Cluster, as
// `docs/operations/scaling.md`'s "shard by team" has it, and applies when that one is Ready,
// reconciled by shard b's status change (no resync, no interval within the test). The
// wave 0 Release is slow: shard b's observer starts only once the wave 1 Release has
// been seen waiting, so wave 0 is Applied but not yet Healthy until then.
func TestSP30_ClusterWavesHoldAcrossShards(t *testing.T) {
	ctx, c, ns := setUp(t, 4*time.Minute, "shard-waves")
	a := startShard(t, ctx, ns, "a")
	b := startController(t, ctx, ns, "b")

	release := func(name, shard string, wave int32) *v1.Release {
		return &v1.Release{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{v1.LabelShard: shard}},
			Spec: v1.ReleaseSpec{
				Chart:       v1.ChartSource{Repository: charts, Name: "configmap", Version: "0.1.0"},
				Values:      &runtime.RawExtension{Raw: []byte(`{"value":"first"}`)},
				SyncPolicy:  v1.SyncPolicy{Automatic: ptr.To(true)},
				ClusterWave: wave,
			},
		}
	}
	db, api := types.NamespacedName{Namespace: ns, Name: "db"}, types.NamespacedName{Namespace: ns, Name: "api"}
	if err := c.Create(ctx, release(db.Name, "b", 0)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, ctx, "shard b to apply db (wave 0), not yet assessed", time.Minute, func() (bool, string) {
		rel := &v1.Release{}
		if err := c.Get(ctx, db, rel); err != nil {
			return false, err.Error()
		}
		applied := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		return applied != nil && applied.Status == metav1.ConditionTrue, fmt.Sprintf("Applied %+v", applied)
	})

	if err := c.Create(ctx, release(api.Name, "a", 1)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, ctx, "shard a to hold api (wave 1) for db", time.Minute, func() (bool, string) {
		rel := &v1.Release{}
		if err := c.Get(ctx, api, rel); err != nil {
			return false, err.Error()
		}
		applied := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		return applied != nil && applied.Reason == v1.ReasonWaitingForClusterWave &&
				applied.ObservedGeneration == rel.Generation && strings.Contains(applied.Message, db.String()),
			fmt.Sprintf("Applied %+v", applied)
	})
	if err := c.Get(ctx, api, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("api's ConfigMap while db is not Healthy: %v", err)
	}
	rel := &v1.Release{}
	if err := c.Get(ctx, db, rel); err != nil {
		t.Fatal(err)
	}
	if healthy := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionHealthy); healthy != nil && healthy.Status == metav1.ConditionTrue {
		t.Fatalf("db Healthy without an observer of shard b: %+v", healthy)
	}

	// db's observer assesses it: db is Ready, and shard a applies api at once.
	b.startObserver(t, ctx, ns)
	waitReady(t, ctx, c, db, "first")
	waitReady(t, ctx, c, api, "first")
	if b.counts(t, api).reportsReady || a.counts(t, db).reportsReady {
		t.Errorf("a shard took the other's Release: shard a %s for db, shard b %s for api", a.counts(t, db), b.counts(t, api))
	}
}
