package cli

import (
	"encoding/json"
	"fmt"
	"regexp"

	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// OverridesFor is the indexes, in order, of the entries of spec.clusterOverrides
// whose clusterSelector selects a Cluster with these labels ({} selects every
// Cluster; a missing selector selects none). It only shows what the API says a set's
// Release gets; the controller decides.
func OverridesFor(s *v1.ReleaseSet, clusterLabels map[string]string) ([]int, error) {
	var out []int
	for i, o := range s.Spec.ClusterOverrides {
		if o.ClusterSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(o.ClusterSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.clusterOverrides[%d].clusterSelector: %w", i, err)
		}
		if sel.Matches(labels.Set(clusterLabels)) {
			out = append(out, i)
		}
	}
	return out, nil
}

// OverrideValues is the values the overrides idx give a Cluster: their values merged
// in order as Helm merges values files (loader.MergeMaps: maps merge, anything else
// is replaced; a null stays, as it removes the key from the template's values), with
// $(cluster.name) and $(cluster.labels['<key>']) replaced in every string value.
// The template's own values are not included.
func OverrideValues(s *v1.ReleaseSet, idx []int, cluster string, clusterLabels map[string]string) (map[string]any, error) {
	merged := map[string]any{}
	for _, i := range idx {
		o := s.Spec.ClusterOverrides[i]
		if o.Values == nil || len(o.Values.Raw) == 0 {
			continue
		}
		vals := map[string]any{}
		if err := json.Unmarshal(o.Values.Raw, &vals); err != nil {
			return nil, fmt.Errorf("spec.clusterOverrides[%d].values is not an object: %w", i, err)
		}
		merged = loader.MergeMaps(merged, vals)
	}
	out, _ := SubstituteCluster(merged, cluster, clusterLabels).(map[string]any)
	return out, nil
}

// clusterVariable is $(cluster.name) or $(cluster.labels['<key>']).
var clusterVariable = regexp.MustCompile(`\$\(cluster\.(?:name|labels\['([^']*)'\])\)`)

// SubstituteCluster replaces $(cluster.name) and $(cluster.labels['<key>']) (the
// value of label <key>, empty when the Cluster has none) in the string values of v,
// at any depth; keys and other values are kept. It returns a copy.
func SubstituteCluster(v any, cluster string, clusterLabels map[string]string) any {
	switch x := v.(type) {
	case string:
		return clusterVariable.ReplaceAllStringFunc(x, func(m string) string {
			sub := clusterVariable.FindStringSubmatch(m)
			if m == "$(cluster.name)" {
				return cluster
			}
			return clusterLabels[sub[1]]
		})
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = SubstituteCluster(e, cluster, clusterLabels)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = SubstituteCluster(e, cluster, clusterLabels)
		}
		return out
	default:
		return v
	}
}
