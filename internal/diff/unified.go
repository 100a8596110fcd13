package diff

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Masked is what a Secret's value is shown as; a value the apply would change
// is shown as MaskedChanged on the render side. Secret values never reach a
// diff.
const (
	Masked        = "*** (hidden)"
	MaskedChanged = "*** (hidden, changed)"
)

// Unified is the unified diff of r (three lines of context) between the live
// object and the dry-run result, named name in the headers (a pruned object's
// name gets " (pruned)"); empty for an Unchanged object. The YAML is that of
// the Comparable objects, with Secret values masked.
func Unified(name string, r Result) string {
	return UnifiedLabelled("live", "render", name, r)
}

// UnifiedLabelled is Unified with other names for the two sides in the headers
// (from/<name>, to/<name>), such as two render refs.
func UnifiedLabelled(from, to, name string, r Result) string {
	if r.Action == Unchanged {
		return ""
	}
	live, want := r.Live, r.Want
	if isSecret(live) || isSecret(want) {
		live, want = maskSecret(live, want)
	}
	if r.Action == Prune {
		name += " (pruned)"
	}
	return unifiedText(from, to, name, toYAML(live), toYAML(want))
}

// UnifiedText is the unified diff of one object between live and want (YAML;
// nil: absent), with three lines of context; empty when they are equal.
func UnifiedText(name string, live, want []byte) string {
	return unifiedText("live", "render", name, live, want)
}

func unifiedText(fromLabel, toLabel, name string, live, want []byte) string {
	if bytes.Equal(live, want) {
		return ""
	}
	from, to := fromLabel+"/"+name, toLabel+"/"+name
	if live == nil {
		from = "/dev/null"
	}
	if want == nil {
		to = "/dev/null"
	}
	d := difflib.UnifiedDiff{A: lines(live), B: lines(want), FromFile: from, ToFile: to, Context: 3}
	s, err := difflib.GetUnifiedDiffString(d)
	if err != nil {
		return fmt.Sprintf("--- %s\n+++ %s\n(diff failed: %v)\n", from, to, err)
	}
	return s
}

// YAML is the YAML of u as a diff shows it (nil for nil), Secret values masked.
func YAML(u *unstructured.Unstructured) []byte {
	if isSecret(u) {
		u, _ = maskSecret(u, nil)
	}
	return toYAML(u)
}

func toYAML(u *unstructured.Unstructured) []byte {
	if u == nil {
		return nil
	}
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return []byte(fmt.Sprintf("# cannot show %s %s: %v\n", u.GetKind(), u.GetName(), err))
	}
	return b
}

func isSecret(u *unstructured.Unstructured) bool {
	return u != nil && u.GetKind() == "Secret" && u.GroupVersionKind().Group == ""
}

// maskSecret returns copies of a Secret's two sides with every value of data and
// stringData replaced by Masked, or on the want side by MaskedChanged when it
// differs from the live one.
func maskSecret(live, want *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	values := func(u *unstructured.Unstructured, field string) map[string]any {
		if u == nil {
			return nil
		}
		m, _, _ := unstructured.NestedMap(u.Object, field)
		return m
	}
	mask := func(u, other *unstructured.Unstructured) *unstructured.Unstructured {
		if u == nil {
			return nil
		}
		c := u.DeepCopy()
		for _, field := range []string{"data", "stringData"} {
			m := values(u, field)
			if m == nil {
				continue
			}
			o := values(other, field)
			for k, v := range m {
				m[k] = Masked
				if other != nil && u == want {
					if ov, ok := o[k]; !ok || fmt.Sprint(ov) != fmt.Sprint(v) {
						m[k] = MaskedChanged
					}
				}
			}
			_ = unstructured.SetNestedMap(c.Object, m, field)
		}
		return c
	}
	return mask(live, want), mask(want, live)
}

// lines splits YAML into lines that keep their newline.
func lines(b []byte) []string {
	if len(b) == 0 {
		return []string{}
	}
	out := strings.SplitAfter(string(b), "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
