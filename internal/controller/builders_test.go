package controller

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Small builders of test objects.

type releaseOption func(*v1.Release)

func testRelease(name string, opts ...releaseOption) *v1.Release {
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Generation: 1, ResourceVersion: "1"},
		Spec:       v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: "app"}},
	}
	for _, o := range opts {
		o(rel)
	}
	return rel
}

// with applies opts to a copy of rel.
func with(rel *v1.Release, opts ...releaseOption) *v1.Release {
	c := rel.DeepCopy()
	for _, o := range opts {
		o(c)
	}
	return c
}

func automatic() releaseOption {
	return func(r *v1.Release) { r.Spec.SyncPolicy.Automatic = ptr.To(true) }
}

func interval(d time.Duration) releaseOption {
	return func(r *v1.Release) { r.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: d} }
}

func resourceVersion(rv string) releaseOption {
	return func(r *v1.Release) { r.ResourceVersion = rv }
}

func generation(g int64) releaseOption {
	return func(r *v1.Release) { r.Generation = g }
}

func annotation(key, value string) releaseOption {
	return func(r *v1.Release) {
		if r.Annotations == nil {
			r.Annotations = map[string]string{}
		}
		r.Annotations[key] = value
	}
}

func label(key, value string) releaseOption {
	return func(r *v1.Release) {
		if r.Labels == nil {
			r.Labels = map[string]string{}
		}
		r.Labels[key] = value
	}
}

func deleting() releaseOption {
	return func(r *v1.Release) { r.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }
}

func finalizer() releaseOption {
	return func(r *v1.Release) { r.Finalizers = append(r.Finalizers, v1.Finalizer) }
}

func mutation(kind, patch string) releaseOption {
	return func(r *v1.Release) {
		r.Mutations = append(r.Mutations, v1.Mutation{Target: v1.MutationTarget{Kind: kind}, Patch: patch})
	}
}

func lifecycleHook(name string) releaseOption {
	return func(r *v1.Release) {
		if r.Lifecycle == nil {
			r.Lifecycle = &v1.Lifecycle{}
		}
		r.Lifecycle.Hooks = append(r.Lifecycle.Hooks, v1.Hook{Name: name, Phase: v1.HookPreApply})
	}
}

func values(raw string) releaseOption {
	return func(r *v1.Release) { r.Spec.Values = &runtime.RawExtension{Raw: []byte(raw)} }
}

func cluster(name string) releaseOption {
	return func(r *v1.Release) { r.Spec.Cluster = name }
}

func clusterWave(w int32) releaseOption {
	return func(r *v1.Release) { r.Spec.ClusterWave = w }
}

func inNamespace(ns string) releaseOption {
	return func(r *v1.Release) { r.Namespace = ns }
}

// condition sets a condition observed at the Release's generation when it is set.
func condition(t, status, reason string) releaseOption {
	return func(r *v1.Release) {
		for i := range r.Status.Conditions {
			if r.Status.Conditions[i].Type == t {
				r.Status.Conditions[i].Status = metav1.ConditionStatus(status)
				r.Status.Conditions[i].Reason = reason
				r.Status.Conditions[i].ObservedGeneration = r.Generation
				return
			}
		}
		r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{
			Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: "m",
			ObservedGeneration: r.Generation,
		})
	}
}

func statusOnly(f func(*v1.ReleaseStatus)) releaseOption {
	return func(r *v1.Release) { f(&r.Status) }
}
