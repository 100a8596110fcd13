package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
)

// mutation is a Release mutation ready to apply.
type mutation struct {
	index    int
	target   v1alpha1.MutationTarget
	selector labels.Selector
	smp      []byte          // strategic merge patch, JSON
	jsonOps  jsonpatch.Patch // RFC 6902
}

// jsonPatchOp is the wire form of one RFC 6902 operation.
type jsonPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

func compileMutation(i int, m v1alpha1.Mutation) (*mutation, error) {
	what := fmt.Sprintf("mutations[%d]", i)
	out := &mutation{index: i, target: m.Target, selector: labels.Everything()}
	if m.Target.LabelSelector != "" {
		sel, err := labels.Parse(m.Target.LabelSelector)
		if err != nil {
			return nil, unappliable("%s: target.labelSelector %q: %w", what, m.Target.LabelSelector, err)
		}
		out.selector = sel
	}
	switch {
	case m.Patch != "" && len(m.JSONPatch) > 0, m.Patch == "" && len(m.JSONPatch) == 0:
		return nil, unappliable("%s: set exactly one of patch and jsonPatch", what)
	case m.Patch != "":
		j, err := yaml.YAMLToJSON([]byte(m.Patch))
		if err != nil {
			return nil, unappliable("%s: patch is neither YAML nor JSON: %w", what, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || t[0] != '{' {
			return nil, unappliable("%s: patch must be an object (a strategic merge patch)", what)
		}
		out.smp = j
	default:
		ops := make([]jsonPatchOp, 0, len(m.JSONPatch))
		for _, op := range m.JSONPatch {
			o := jsonPatchOp{Op: op.Op, Path: op.Path, From: op.From}
			if op.Value != nil {
				o.Value = op.Value.Raw
				if o.Value == nil {
					o.Value = json.RawMessage("null")
				}
			}
			ops = append(ops, o)
		}
		b, err := json.Marshal(ops)
		if err != nil {
			return nil, unappliable("%s: jsonPatch: %w", what, err)
		}
		p, err := jsonpatch.DecodePatch(b)
		if err != nil {
			return nil, unappliable("%s: jsonPatch: %w", what, err)
		}
		out.jsonOps = p
	}
	return out, nil
}

// selects says whether the mutation's target selects u. An empty group means the
// core group when a kind is given, and any group otherwise.
func (m *mutation) selects(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	t := m.target
	switch {
	case t.Kind != "" && (gvk.Kind != t.Kind || gvk.Group != t.Group):
		return false
	case t.Kind == "" && t.Group != "" && gvk.Group != t.Group:
		return false
	case t.Version != "" && gvk.Version != t.Version:
		return false
	case t.Name != "" && u.GetName() != t.Name:
		return false
	case t.Namespace != "" && u.GetNamespace() != t.Namespace:
		return false
	}
	return m.selector.Matches(labels.Set(u.GetLabels()))
}

// apply patches u in place.
func (m *mutation) apply(u *unstructured.Unstructured) error {
	what := fmt.Sprintf("mutations[%d] on %s", m.index, describe(u))
	orig, err := u.MarshalJSON()
	if err != nil {
		return unappliable("%s: %w", what, err)
	}
	var patched []byte
	if m.smp != nil {
		// The typed schema of built-in kinds knows the merge keys of lists
		// (containers by name, ports by port...). Other kinds: JSON merge patch.
		if typed, err := scheme.Scheme.New(u.GroupVersionKind()); err == nil {
			patched, err = strategicpatch.StrategicMergePatch(orig, m.smp, typed)
			if err != nil {
				return unappliable("%s: strategic merge patch: %w", what, err)
			}
		} else {
			patched, err = jsonpatch.MergePatch(orig, m.smp)
			if err != nil {
				return unappliable("%s: merge patch: %w", what, err)
			}
		}
	} else {
		patched, err = m.jsonOps.Apply(orig)
		if err != nil {
			return unappliable("%s: JSON patch: %w", what, err)
		}
	}
	obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, patched)
	if err != nil {
		return unappliable("%s: the result is not a Kubernetes object: %w", what, err)
	}
	res, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return unappliable("%s: the result is a list, not an object", what)
	}
	if res.GetAPIVersion() == "" {
		return unappliable("%s: the result has no apiVersion; a mutation must not remove it", what)
	}
	u.Object = res.Object
	return nil
}

// applyMutations applies the mutations in order to every object each selects. A
// mutation that selects nothing is not an error (a warning says so).
func applyMutations(objs []*unstructured.Unstructured, muts []v1alpha1.Mutation) ([]string, error) {
	var warnings []string
	for i, m := range muts {
		cm, err := compileMutation(i, m)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, u := range objs {
			if !cm.selects(u) {
				continue
			}
			if err := cm.apply(u); err != nil {
				return nil, err
			}
			n++
		}
		if n == 0 {
			warnings = append(warnings, fmt.Sprintf("mutations[%d] selects no object", i))
		}
	}
	return warnings, nil
}
