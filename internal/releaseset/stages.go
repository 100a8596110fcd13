package releaseset

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// StageClusters is one stage of a rollout with the Clusters it holds, sorted by name.
type StageClusters struct {
	// Stage is the stage as the spec has it (or the implicit last stage "rest").
	Stage v1.Stage
	// Clusters are the names of the stage's Clusters.
	Clusters []string
}

// Selection is what a ReleaseSet's selectors make of the Clusters.
type Selection struct {
	// Stages hold every selected and admitted Cluster, each in exactly one stage.
	Stages []StageClusters
	// Skipped are the selected Clusters that get no Release.
	Skipped []v1.SkippedCluster
}

// EffectiveStages are the stages a rollout goes through: the spec's, then the implicit
// stage "rest" when the last one has a clusterSelector; no stages: one stage "rest".
func EffectiveStages(strategy v1.ReleaseSetStrategy) []v1.Stage {
	stages := slices.Clone(strategy.Stages)
	if len(stages) == 0 || stages[len(stages)-1].ClusterSelector != nil {
		stages = append(stages, v1.Stage{Name: v1.StageRest, Approval: v1.ApprovalAutomatic})
	}
	return stages
}

// Select picks the Clusters of set among clusters, skips those whose namespaceSelector
// does not admit the set's namespace (of labels nsLabels), and puts each of the others
// in the first stage whose clusterSelector matches it (a stage without one takes all).
// An invalid selector is an error naming it.
func Select(set *v1.ReleaseSet, nsLabels map[string]string, clusters []v1.Cluster) (Selection, error) {
	stages := EffectiveStages(set.Spec.Strategy)
	sel := Selection{Stages: make([]StageClusters, len(stages))}
	stageSelectors := make([]labels.Selector, len(stages))
	for i, st := range stages {
		sel.Stages[i].Stage = st
		if st.ClusterSelector == nil {
			continue
		}
		s, err := metav1.LabelSelectorAsSelector(st.ClusterSelector)
		if err != nil {
			return Selection{}, fmt.Errorf("spec.strategy.stages[%d] (%s): invalid clusterSelector: %w", i, st.Name, err)
		}
		stageSelectors[i] = s
	}
	setSelector, err := clusterSelector(set.Spec.ClusterSelector)
	if err != nil {
		return Selection{}, fmt.Errorf("spec.clusterSelector: %w", err)
	}
	sorted := slices.Clone(clusters)
	slices.SortFunc(sorted, func(a, b v1.Cluster) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	for _, c := range sorted {
		if setSelector == nil || !setSelector.Matches(labels.Set(c.Labels)) {
			continue
		}
		if msg, ok := admits(&c, set.Namespace, nsLabels); !ok {
			sel.Skipped = append(sel.Skipped, v1.SkippedCluster{Name: c.Name, Reason: v1.ReasonNamespaceNotAdmitted, Message: msg})
			continue
		}
		for i := range stages {
			if stageSelectors[i] == nil || stageSelectors[i].Matches(labels.Set(c.Labels)) {
				sel.Stages[i].Clusters = append(sel.Stages[i].Clusters, c.Name)
				break
			}
		}
	}
	return sel, nil
}

// clusterSelector is the ReleaseSet's selector; nil when it selects nothing (unset or empty).
func clusterSelector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil || (len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0) {
		return nil, nil
	}
	return metav1.LabelSelectorAsSelector(ls)
}

// admits says whether Cluster c takes Releases of namespace ns (of labels nsLabels),
// and why not.
func admits(c *v1.Cluster, ns string, nsLabels map[string]string) (string, bool) {
	ls := c.Spec.NamespaceSelector
	if ls == nil || (len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0) {
		return "", true
	}
	s, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return fmt.Sprintf("Cluster %q has an invalid namespaceSelector: fix the Cluster", c.Name), false
	}
	if s.Matches(labels.Set(nsLabels)) {
		return "", true
	}
	return fmt.Sprintf("Cluster %q does not admit Releases of namespace %q (namespaceSelector %s): label the namespace "+
		"to match, or change the Cluster's namespaceSelector", c.Name, ns, s), false
}

// MaxParallel is how many of a stage's n Releases may be updated and not yet Ready at a
// time: maxParallel as a number or a percentage of n rounded up, at least 1; unset: n
// (at least 1).
func MaxParallel(maxParallel *intstr.IntOrString, n int) int {
	if maxParallel == nil {
		return max(n, 1)
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(maxParallel, n, true)
	if err != nil {
		// Validation rejects what does not scale; be careful with it anyway.
		return 1
	}
	return max(v, 1)
}

// MaxUnavailable is how many of a stage's n Releases may be unavailable (their Cluster
// not Ready) and still let the stage complete: maxUnavailable as a number, or a
// percentage of n rounded down; unset: 0. Never more than n, never less than 0.
func MaxUnavailable(maxUnavailable *intstr.IntOrString, n int) int {
	if maxUnavailable == nil {
		return 0
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(maxUnavailable, n, false)
	if err != nil {
		// Validation rejects what does not scale; be careful with it anyway.
		return 0
	}
	return min(max(v, 0), n)
}
