package controller

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// indexCluster is the cache's field index of Releases by target cluster
// (spec.cluster), for the cluster-wave step and watch (SP-30).
const indexCluster = v1.FieldReleaseCluster

// hostClusterKey is the index value of the host cluster (empty spec.cluster); a
// Cluster name, a DNS name, cannot contain a colon.
const hostClusterKey = ":host"

// clusterKey is the index value of a Release's target cluster.
func clusterKey(rel *v1.Release) string {
	if rel.Spec.Cluster == "" {
		return hostClusterKey
	}
	return rel.Spec.Cluster
}

func indexReleaseCluster(obj client.Object) []string {
	rel, ok := obj.(*v1.Release)
	if !ok {
		return nil
	}
	return []string{clusterKey(rel)}
}

// inventoryRelease maps a ReleaseInventory to its Release: same namespace and name.
func inventoryRelease(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
}

// indexWavedCluster is the cache's index of the Releases of a cluster wave other than
// 0 by target cluster: what a Release of wave 0 looks at to find a lower or a higher
// wave, without listing every Release of its cluster (decision 0112).
const indexWavedCluster = "convoy.kumodo.io/waved-cluster"

func indexReleaseWavedCluster(obj client.Object) []string {
	rel, ok := obj.(*v1.Release)
	if !ok || rel.Spec.ClusterWave == 0 {
		return nil
	}
	return []string{clusterKey(rel)}
}

// sameCluster lists, from the cluster-wave view (waveView), the Releases that target
// the cluster of rel and may be of another cluster wave: for a Release of wave 0, the
// most common by far, only those of another wave (indexWavedCluster); else every
// Release of the cluster.
// Callers pick the waves they need. Listing every Release of the cluster, deep-copied,
// at each reconcile and each status change made the controller's work and memory grow
// with the square of the Releases (decision 0112). The Releases are the cache's own, not
// copies: callers only read them.
func sameCluster(ctx context.Context, c client.Reader, rel *v1.Release) ([]v1.Release, error) {
	index := indexCluster
	if rel.Spec.ClusterWave == 0 {
		index = indexWavedCluster
	}
	var list v1.ReleaseList
	if err := c.List(ctx, &list, client.MatchingFields{index: clusterKey(rel)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// clusterWaveHandler is the event handler of the cluster-wave watch: it enqueues the
// Releases of a higher clusterWave on the same Cluster as the Release that changed,
// and, for an update, also those above where it was before: a Release that moves to
// another Cluster or wave no longer holds them (decision 0091). c is the
// cluster-wave view (waveView), which a shard's controller watches for every shard's
// Releases; it enqueues only those of shard (every one when shard is empty).
func clusterWaveHandler(c client.Reader, shard string) handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, obj := range objs {
			for _, req := range higherWaves(ctx, c, obj, shard) {
				q.Add(req)
			}
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// higherWaves lists, from the cluster-wave view, the Releases of shard of a higher
// clusterWave on the same Cluster as obj.
func higherWaves(ctx context.Context, c client.Reader, obj client.Object, shard string) []reconcile.Request {
	rel, ok := obj.(*v1.Release)
	if !ok || rel == nil {
		return nil
	}
	others, err := sameCluster(ctx, c, rel)
	if err != nil {
		log.FromContext(ctx).Error(err, "Cannot list the Releases of the same cluster", "release", client.ObjectKeyFromObject(rel))
		return nil
	}
	return higherWaveRequests(rel, others, shard)
}

// higherWaveRequests picks, from the Releases of the same Cluster, those of shard
// (inShard) of a higher clusterWave than rel, sorted.
func higherWaveRequests(rel *v1.Release, others []v1.Release, shard string) []reconcile.Request {
	var out []reconcile.Request
	for i := range others {
		o := &others[i]
		if o.Spec.ClusterWave > rel.Spec.ClusterWave && clusterKey(o) == clusterKey(rel) && inShard(shard, o) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// clusterWaveBlocker names ("namespace/name") the first Release, sorted, of a lower
// clusterWave on the same Cluster that is not Applied=True and Healthy=True (waveReady);
// empty when there is none (step 2 of the reconcile flow).
func clusterWaveBlocker(rel *v1.Release, others []v1.Release) string {
	var blockers []string
	for i := range others {
		o := &others[i]
		if o.Spec.ClusterWave >= rel.Spec.ClusterWave || clusterKey(o) != clusterKey(rel) {
			continue
		}
		if waveReady(o) {
			continue
		}
		blockers = append(blockers, o.Namespace+"/"+o.Name)
	}
	if len(blockers) == 0 {
		return ""
	}
	sort.Strings(blockers)
	return blockers[0]
}

// waveReady says whether a Release lets the higher cluster waves of its Cluster apply:
// its Applied and Healthy conditions are True for its current spec. A condition
// observed at an older generation (kstatus' rule) says nothing about the spec the
// Release has now: a lower wave edited (a new chart version, new values) holds the
// higher ones from the edit on, not only once its reconcile has written the status of
// the new render — else a higher wave edited at the same time applied first, on the
// lower one's stale Applied and Healthy (the chaos harness's finding, decision 0122).
//
// A Release being deleted (metadata.deletionTimestamp set) no longer gates them: it
// is going away with what it applied, and the higher waves do not wait for the end of
// a deletion that may wait for good (a failed pre-delete hook; decision 0162).
//
// A lower wave whose render, already reported Healthy, is only re-assessed after convoy
// applied it again (Healthy Unknown/Reassessing) does not hold them either
// (policy.LowerWaveReady).
func waveReady(rel *v1.Release) bool {
	return policy.LowerWaveReady(rel.Generation, rel.DeletionTimestamp != nil, rel.Status.Conditions)
}
