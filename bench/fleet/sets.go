package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
)

// nsSets is the namespace of the ReleaseSet run.
const nsSets = "bench-sets"

// Labels of the fleet's Clusters: every one bench=fleet, the first ring=canary and the
// others ring=main.
func clusterLabels(i int) map[string]string {
	ring := "main"
	if i == 0 {
		ring = "canary"
	}
	return map[string]string{"bench": "fleet", "ring": ring}
}

// releaseSet is set i: the podinfo Release on every Cluster labelled bench=fleet, in
// two stages: the canary ring, then the rest.
func (e *env) releaseSet(i int) *convoyv1alpha1.ReleaseSet {
	rel := benchenv.PodinfoRelease(nsSets, "", e.Charts.URL)
	return &convoyv1alpha1.ReleaseSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "ReleaseSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: nsSets, Name: "podinfo-" + strconv.Itoa(i)},
		Spec: convoyv1alpha1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "fleet"}},
			Template:        convoyv1alpha1.ReleaseTemplate{Spec: rel.Spec},
			Strategy: convoyv1alpha1.ReleaseSetStrategy{Stages: []convoyv1alpha1.Stage{
				{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}},
				{Name: "rest"},
			}},
		},
	}
}

// setsRun creates sets ReleaseSets over the fleet and waits until every one is Ready,
// then gives each a new revision and waits again; it returns both times.
func (e *env) setsRun(ctx context.Context, sets int, timeout time.Duration) (create, revise time.Duration, err error) {
	if err := e.ensureNamespace(ctx, nsSets); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	for i := range sets {
		if err := e.Convoy.Post().Namespace(nsSets).Resource("releasesets").Body(e.releaseSet(i)).Do(ctx).Error(); err != nil {
			return 0, 0, fmt.Errorf("create ReleaseSet %d: %w", i, err)
		}
	}
	if err := e.waitSetsReady(ctx, sets, start, timeout); err != nil {
		return 0, 0, err
	}
	create = time.Since(start)
	start = time.Now()
	patch := []byte(`{"spec":{"template":{"spec":{"values":{"ui":{"message":"revision 2"}}}}}}`)
	for i := range sets {
		if err := e.Convoy.Patch(types.MergePatchType).Namespace(nsSets).Resource("releasesets").Name("podinfo-" + strconv.Itoa(i)).Body(patch).Do(ctx).Error(); err != nil {
			return create, 0, fmt.Errorf("revise ReleaseSet %d: %w", i, err)
		}
	}
	if err := e.waitSetsReady(ctx, sets, start, timeout); err != nil {
		return create, 0, err
	}
	return create, time.Since(start), nil
}

// waitSetsReady polls until every ReleaseSet of nsSets is Ready at its generation.
func (e *env) waitSetsReady(ctx context.Context, sets int, start time.Time, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		list := &convoyv1alpha1.ReleaseSetList{}
		err := e.Convoy.Get().Namespace(nsSets).Resource("releasesets").Do(ctx).Into(list)
		ready := 0
		if err == nil {
			for _, s := range list.Items {
				c := apimeta.FindStatusCondition(s.Status.Conditions, convoyv1alpha1.ConditionReady)
				if c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == s.Generation && s.Status.ObservedGeneration == s.Generation {
					ready++
				}
			}
			if ready == sets {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d ReleaseSets Ready after %s (last error: %v)", ready, sets, time.Since(start).Round(time.Second), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
