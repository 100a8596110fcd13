package releaseset

import (
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Builders of test objects: testSet("web", stages(canary(1), manualRest())), cluster("c1", ring("canary")),
// rel(set, "c1", at(rev), ready()).

type setOption func(*v1.ReleaseSet)

func testSet(name string, opts ...setOption) *v1.ReleaseSet {
	s := &v1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			Template: v1.ReleaseTemplate{
				Metadata: v1.ReleaseTemplateMetadata{Labels: map[string]string{"team": "a"}},
				Spec: v1.ReleaseSpec{
					Chart:  v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo"},
					Values: &runtime.RawExtension{Raw: []byte(`{"replicas":1}`)},
				},
			},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func stages(st ...v1.Stage) setOption {
	return func(s *v1.ReleaseSet) { s.Spec.Strategy.Stages = st }
}

func values(raw string) setOption {
	return func(s *v1.ReleaseSet) { s.Spec.Template.Spec.Values = &runtime.RawExtension{Raw: []byte(raw)} }
}

func approvals(a ...v1.StageApproval) setOption {
	return func(s *v1.ReleaseSet) { s.Approvals = a }
}

func maxRemovals(v intstr.IntOrString) setOption {
	return func(s *v1.ReleaseSet) { s.Spec.Strategy.MaxRemovals = &v }
}

func paused() setOption { return func(s *v1.ReleaseSet) { s.Spec.Paused = true } }

// acknowledging records a /promote that acknowledged the removal of releases at time at.
func acknowledging(at metav1.Time, releases ...string) setOption {
	return func(s *v1.ReleaseSet) {
		s.RemovalAcknowledgement = &v1.RemovalAcknowledgement{Releases: releases, AcknowledgedAt: &at}
	}
}

// removedAt records in the status that the set deleted release at time at.
func removedAt(release string, at time.Time) setOption {
	return func(s *v1.ReleaseSet) {
		s.Status.RecentRemovals = append(s.Status.RecentRemovals, v1.RecentRemoval{Release: release, RemovedAt: metav1.NewTime(at)})
	}
}

// canary is the stage "canary" of the Clusters labelled ring=canary, maxParallel 1.
func canary() v1.Stage {
	return v1.Stage{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}},
		MaxParallel: ptr.To(intstr.FromInt32(1)), Approval: v1.ApprovalAutomatic}
}

// manualRest is the stage "rest", without selector, approval Manual.
func manualRest() v1.Stage { return v1.Stage{Name: "rest", Approval: v1.ApprovalManual} }

type clusterOption func(*v1.Cluster)

// cluster is a Ready Cluster labelled env=prod.
func cluster(name string, opts ...clusterOption) v1.Cluster {
	c := v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}},
		Status: v1.ClusterStatus{Conditions: []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonReachable}}}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// unreachable: the Cluster's Ready condition is False, reason Unreachable.
func unreachable() clusterOption {
	return func(c *v1.Cluster) {
		c.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonUnreachable,
			Message: "Get /version: dial tcp: connection refused"}}
	}
}

// unobservedCluster: the Cluster has no status yet.
func unobservedCluster() clusterOption { return func(c *v1.Cluster) { c.Status = v1.ClusterStatus{} } }

func ring(r string) clusterOption { return func(c *v1.Cluster) { c.Labels["ring"] = r } }

func env(e string) clusterOption { return func(c *v1.Cluster) { c.Labels["env"] = e } }

func admitting(labels map[string]string) clusterOption {
	return func(c *v1.Cluster) { c.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: labels} }
}

// revisionOf is the revision of set (without a source).
func revisionOf(set *v1.ReleaseSet) string {
	return Revision(set.Spec.Template, set.Spec.ClusterOverrides, nil)
}

// testBuilder is the builder of set's Releases, with the values of Cluster name as
// the tables' Clusters (fleet, regions) have it, else as cluster(name) makes it.
func testBuilder(set *v1.ReleaseSet, name string) builder {
	c := cluster(name)
	for _, known := range append(slices.Clone(fleet), regions...) {
		if known.Name == name {
			c = known
		}
	}
	b := builder{set: set, rev: revisionOf(set)}
	if len(set.Spec.ClusterOverrides) > 0 {
		// Invalid overrides (a table of InvalidSpec): the template's values.
		if v, err := ClusterValues(set.Spec.Template.Spec.Values, set.Spec.ClusterOverrides, &c); err == nil {
			b.values = map[string]*runtime.RawExtension{name: v}
		}
	}
	return b
}

// overrides sets spec.clusterOverrides: pairs of a selector's matchLabels ("" for {})
// and values.
func overrides(pairs ...string) setOption {
	return func(s *v1.ReleaseSet) {
		s.Spec.ClusterOverrides = nil
		for i := 0; i+1 < len(pairs); i += 2 {
			sel := &metav1.LabelSelector{}
			if k, v, ok := strings.Cut(pairs[i], "="); ok {
				sel.MatchLabels = map[string]string{k: v}
			}
			s.Spec.ClusterOverrides = append(s.Spec.ClusterOverrides,
				v1.ClusterOverride{ClusterSelector: sel, Values: &runtime.RawExtension{Raw: []byte(pairs[i+1])}})
		}
	}
}

func region(r string) clusterOption { return func(c *v1.Cluster) { c.Labels["region"] = r } }

type relOption func(*v1.Release)

// rel is the Release that set writes for cluster, as the set writes it at the set's
// current revision (change it with options).
func rel(set *v1.ReleaseSet, cluster string, opts ...relOption) v1.Release {
	r := testBuilder(set, cluster).release(cluster)
	r.Generation = 1
	for _, o := range opts {
		o(r)
	}
	return *r
}

// from makes the Release as an older template of the set had it.
func from(old *v1.ReleaseSet) relOption {
	return func(r *v1.Release) {
		want := testBuilder(old, r.Spec.Cluster).release(r.Spec.Cluster)
		r.Spec = want.Spec
		r.Annotations = maps.Clone(want.Annotations)
	}
}

// ready makes the Release Ready at its generation.
func ready() relOption {
	return func(r *v1.Release) {
		r.Status.ObservedGeneration = r.Generation
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonHealthy}}
	}
}

// notReady makes the Release observed and not Ready.
func notReady() relOption {
	return func(r *v1.Release) {
		r.Status.ObservedGeneration = r.Generation
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonProgressing}}
	}
}

// rolledBack makes the Release's rollout of its current render end RolledBack.
func rolledBack() relOption {
	return func(r *v1.Release) {
		notReady()(r)
		r.Status.Render = &v1.RenderStatus{Ref: "sha256:new"}
		r.Status.Rollout = &v1.RolloutStatus{Phase: v1.RolloutRolledBack, RenderRef: "sha256:new",
			Message: "Render sha256:new did not become Healthy within 30s; rolled back to sha256:old"}
	}
}

// rolledBackEarlier: the rollout that ended RolledBack was of an earlier render.
func rolledBackEarlier() relOption {
	return func(r *v1.Release) {
		rolledBack()(r)
		r.Status.Render.Ref = "sha256:newer"
	}
}

// unobserved: the Release's generation is newer than its status.
func unobserved() relOption {
	return func(r *v1.Release) {
		ready()(r)
		r.Generation++
	}
}

// created sets the Release's creationTimestamp.
func created(at metav1.Time) relOption { return func(r *v1.Release) { r.CreationTimestamp = at } }

func notOwned() relOption { return func(r *v1.Release) { r.OwnerReferences[0].UID = "someone-else" } }

func deleting() relOption {
	return func(r *v1.Release) { r.DeletionTimestamp = &metav1.Time{} }
}

func annotated(k, v string) relOption { return func(r *v1.Release) { r.Annotations[k] = v } }

func releaseValues(raw string) relOption {
	return func(r *v1.Release) { r.Spec.Values = &runtime.RawExtension{Raw: []byte(raw)} }
}

func pinned() relOption {
	return func(r *v1.Release) { r.Pin = &v1.Pin{RenderRef: "sha256:pinned", Reason: "incident"} }
}
