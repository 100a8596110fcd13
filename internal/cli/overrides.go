package cli

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/releaseset"
)

// OverridesFor is the indexes, in order, of the entries of spec.clusterOverrides
// whose clusterSelector selects a Cluster with these labels, as the ReleaseSet
// controller picks them (releaseset.OverridesFor). It only shows what the API says a
// set's Release gets; the controller decides.
func OverridesFor(s *v1.ReleaseSet, clusterLabels map[string]string) ([]int, error) {
	return releaseset.OverridesFor(s.Spec.ClusterOverrides, clusterLabels)
}

// OverrideValues is the values the overrides idx give a Cluster: what the ReleaseSet
// controller merges over the template's values for it (releaseset.ClusterValues: in
// order, as Helm merges values files, a null kept as it removes the key from the
// template's values, $(cluster.name) and $(cluster.labels['<key>']) replaced in string
// values). The template's own values are not included.
func OverrideValues(s *v1.ReleaseSet, idx []int, cluster string, clusterLabels map[string]string) (map[string]any, error) {
	picked := make([]v1.ClusterOverride, 0, len(idx))
	for _, i := range idx {
		picked = append(picked, s.Spec.ClusterOverrides[i])
	}
	raw, err := releaseset.ClusterValues(nil, picked, &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster, Labels: clusterLabels}})
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if raw == nil || len(raw.Raw) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(raw.Raw, &out); err != nil {
		return nil, fmt.Errorf("the values of Cluster %s: %w", cluster, err)
	}
	return out, nil
}
