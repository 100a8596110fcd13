package releaseset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/releaseset/clustervars"
)

// ClusterValues is the spec.values of cluster's Release: template (the template's
// spec.values), then the values of each override whose clusterSelector selects the
// Cluster by its labels, in order, each merged over the ones before as Helm merges
// several values files (helm's MergeMaps, as a Release's valuesFrom and values merge:
// maps merge key by key, anything else, lists included, is replaced). A null is kept
// as a value, so that it removes the key's chart default when the Release renders, as
// a null in a values file does.
//
// Before it is merged, each string value of an override, anywhere in it, has
// $(cluster.name) and $(cluster.labels['<key>']) replaced by the Cluster's name and the
// value of its label <key> ("" when it has none), and $$( by a literal "$(" (package
// clustervars); a malformed $(...) is left as written (the API server rejects it).
// Keys are not substituted, nor is anything in template.
//
// When no override selects the Cluster, or none that selects it has values, the result
// is template itself: a set without overrides writes the template's values as they
// are. Otherwise it is the merged values as JSON, keys sorted, numbers as written.
// An override whose clusterSelector is missing selects no Cluster (the API server
// requires one). The errors name the field: an invalid clusterSelector, values that
// are not a JSON object.
func ClusterValues(template *runtime.RawExtension, overrides []v1.ClusterOverride, cluster *v1.Cluster) (*runtime.RawExtension, error) {
	selecting, err := OverridesFor(overrides, cluster.Labels)
	if err != nil {
		return nil, err
	}
	var merged map[string]any
	for _, i := range selecting {
		o := overrides[i]
		if isNull(o.Values) {
			continue
		}
		vals, err := decodeObject(o.Values.Raw)
		if err != nil {
			return nil, fmt.Errorf("spec.clusterOverrides[%d].values: %w", i, err)
		}
		expanded, _ := expand(vals, cluster).(map[string]any)
		if merged == nil {
			merged = map[string]any{}
			if !isNull(template) {
				if merged, err = decodeObject(template.Raw); err != nil {
					return nil, fmt.Errorf("spec.template.spec.values: %w", err)
				}
			}
		}
		merged = loader.MergeMaps(merged, expanded)
	}
	if merged == nil {
		return template, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(merged); err != nil {
		return nil, fmt.Errorf("the values of Cluster %s: %w", cluster.Name, err)
	}
	return &runtime.RawExtension{Raw: bytes.TrimSuffix(buf.Bytes(), []byte("\n"))}, nil
}

// OverridesFor is the indexes, in order, of the overrides whose clusterSelector
// selects a Cluster with these labels ({} selects every Cluster; a missing selector
// selects none). An invalid selector is an error naming its field.
func OverridesFor(overrides []v1.ClusterOverride, clusterLabels map[string]string) ([]int, error) {
	var out []int
	for i, o := range overrides {
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

// isNull says whether v holds no values: unset, empty, or null.
func isNull(v *runtime.RawExtension) bool {
	if v == nil {
		return true
	}
	raw := bytes.TrimSpace(v.Raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// decodeObject decodes a JSON object, numbers kept as written (json.Number).
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("not a JSON object of values: %w", err)
	}
	if out == nil {
		return nil, fmt.Errorf("not a JSON object of values: null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a JSON object of values: more after the object")
	}
	return out, nil
}

// expand is v with the Cluster's references replaced in every string value.
func expand(v any, cluster *v1.Cluster) any {
	switch v := v.(type) {
	case string:
		return clustervars.Expand(v, cluster.Name, cluster.Labels)
	case map[string]any:
		for k, e := range v {
			v[k] = expand(e, cluster)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = expand(e, cluster)
		}
		return v
	}
	return v
}
