package controller

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// The cluster-wave view: what the cluster-wave step (clusterWaveBlocker) and watch
// (clusterWaveHandler) read of the Releases of a Cluster. A controller of every Release
// reads them from its own cache. A shard's cache holds only the shard's Releases
// (hostmanager), but the cluster waves of a Cluster span the shards (decision
// 0172: "shard by team" puts a team's database and another team's API on the same
// Cluster in two shards), so a shard also watches every Release, each cut down to what
// the cluster waves read (waveRelease), in a cache of its own.

// shardManager is the manager of a shard (ManagerOptions.Shard): the manager of
// hostmanager.New and the cache of the cluster-wave view, which it starts with its own
// caches, before the controllers.
type shardManager struct {
	manager.Manager
	shard string
	waves *waveCache
}

// waveCache is the cluster-wave view's cache as a runnable of the manager's caches:
// the manager starts it and waits for it to sync before it starts the controllers.
type waveCache struct{ cache.Cache }

func (w *waveCache) GetCache() cache.Cache { return w.Cache }

// withWaveView adds to mgr, the manager of shard, the cache of the cluster-wave view:
// every Release of the manager's namespaces (every namespace when none is given),
// whatever its shard, cut down by waveRelease.
func withWaveView(cfg *rest.Config, mgr manager.Manager, shard string, namespaces []string) (manager.Manager, error) {
	opts := cache.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&v1.Release{}: {Transform: waveRelease},
		},
		// Only Releases: a read of any other kind is a mistake, not a new informer.
		ReaderFailOnMissingInformer: true,
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("create the cache of the cluster-wave view: %w", err)
	}
	w := &waveCache{Cache: c}
	if err := mgr.Add(w); err != nil {
		return nil, fmt.Errorf("add the cache of the cluster-wave view: %w", err)
	}
	return &shardManager{Manager: mgr, shard: shard, waves: w}, nil
}

// waveView is where the controller of mgr reads the cluster waves from, and its shard:
// the cluster-wave view of a shard's manager (NewManager), else the manager's cache.
func waveView(mgr manager.Manager) (cache.Cache, string) {
	if sm, ok := mgr.(*shardManager); ok {
		return sm.waves.Cache, sm.shard
	}
	return mgr.GetCache(), ""
}

// waveRelease is the transform of the cluster-wave view: a Release cut down to what
// clusterWaveBlocker, waveReady, higherWaveRequests and clusterWavePredicate read —
// its name, generation, deletion timestamp and shard label, spec.cluster and
// spec.clusterWave, and the status, reason and observed generation of its Applied and
// Healthy conditions. The rest (values, status.render, hooks, rollout, the condition
// messages) is most of a Release and is not kept.
var waveRelease toolscache.TransformFunc = func(obj any) (any, error) {
	rel, ok := obj.(*v1.Release)
	if !ok {
		return obj, nil
	}
	out := &v1.Release{
		TypeMeta: rel.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              rel.Name,
			Namespace:         rel.Namespace,
			UID:               rel.UID,
			ResourceVersion:   rel.ResourceVersion,
			Generation:        rel.Generation,
			DeletionTimestamp: rel.DeletionTimestamp,
		},
		Spec: v1.ReleaseSpec{Cluster: rel.Spec.Cluster, ClusterWave: rel.Spec.ClusterWave},
	}
	if s, ok := rel.Labels[v1.LabelShard]; ok {
		out.Labels = map[string]string{v1.LabelShard: s}
	}
	for _, t := range []string{v1.ConditionApplied, v1.ConditionHealthy} {
		if c := apimeta.FindStatusCondition(rel.Status.Conditions, t); c != nil {
			out.Status.Conditions = append(out.Status.Conditions, metav1.Condition{
				Type: c.Type, Status: c.Status, Reason: c.Reason, ObservedGeneration: c.ObservedGeneration,
			})
		}
	}
	return out, nil
}

// inShard says whether shard reconciles rel: every Release when shard is empty.
func inShard(shard string, rel *v1.Release) bool {
	return shard == "" || rel.Labels[v1.LabelShard] == shard
}
