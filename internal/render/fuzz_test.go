package render

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

// Any mutation, strategic merge patch or RFC 6902 JSON patch, on any object either
// applies and leaves a Kubernetes object (apiVersion, kind), or fails as Unappliable
// naming the mutation; nothing panics.
func FuzzMutation(f *testing.F) {
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"podinfo","namespace":"n","labels":{"app":"p"}},
	 "spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}}}`
	custom := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"list":[1,2],"m":{"a":"b"}}}`
	for _, s := range []struct{ obj, patch, jsonPatch string }{
		{deployment, "spec: {replicas: 5}", ""},
		{deployment, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"j"},{"$patch":"delete","name":"x"}]}}}}`, ""},
		{deployment, "spec:\n  template:\n    spec:\n      $setElementOrder/containers: [{name: c}]\n", ""},
		{deployment, "- not an object", ""},
		{deployment, "kind: null", ""},
		{custom, "spec: {list: [3], m: null}", ""},
		{deployment, "", `[{"op":"add","path":"/metadata/labels/tier","value":"web"}]`},
		{deployment, "", `[{"op":"move","from":"/spec/replicas","path":"/spec/r"},{"op":"test","path":"/spec/r","value":1}]`},
		{deployment, "", `[{"op":"remove","path":"/kind"}]`},
		{deployment, "", `[{"op":"remove","path":"/apiVersion"}]`},
		{deployment, "apiVersion: null", ""},
		{custom, "", `[{"op":"copy","from":"/spec/list/0","path":"/spec/list/-"},{"op":"replace","path":"/spec/m/~1a","value":null}]`},
		{custom, "", `[{"op":"add","path":"/metadata/labels/x"}]`},
	} {
		f.Add([]byte(s.obj), s.patch, []byte(s.jsonPatch))
	}
	f.Fuzz(func(t *testing.T, objJSON []byte, patch string, jsonPatch []byte) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(objJSON); err != nil || u.GetAPIVersion() == "" || u.GetKind() == "" {
			return // the render holds only objects with apiVersion and kind
		}
		m := v1alpha1.Mutation{Patch: patch}
		if len(jsonPatch) > 0 {
			var ops []struct {
				Op    string          `json:"op"`
				Path  string          `json:"path"`
				From  string          `json:"from"`
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(jsonPatch, &ops); err != nil {
				return // the API stores only a list of operations
			}
			for _, op := range ops {
				o := v1alpha1.JSONPatchOperation{Op: op.Op, Path: op.Path, From: op.From}
				if op.Value != nil {
					o.Value = &runtime.RawExtension{Raw: op.Value}
				}
				m.JSONPatch = append(m.JSONPatch, o)
			}
		}
		objs := []*unstructured.Unstructured{u}
		_, err := applyMutations(objs, []v1alpha1.Mutation{m})
		if err != nil {
			if reasons.Of(err, "") != v1alpha1.ReasonUnappliable || !strings.Contains(err.Error(), "mutations[0]") {
				t.Fatalf("a failed mutation is not Unappliable naming mutations[0]: %s: %v", reasons.Of(err, ""), err)
			}
			return
		}
		if objs[0].GetAPIVersion() == "" || objs[0].GetKind() == "" {
			t.Fatalf("a mutation left no apiVersion or kind: %v", objs[0].Object)
		}
		if _, err := objs[0].MarshalJSON(); err != nil {
			t.Fatalf("a mutated object does not encode: %v", err)
		}
	})
}

// Any valuesFrom data and spec.values merge into values or fail with the reason of
// the failure and the valuesFrom entry or field that failed; nothing panics; and a
// failure never repeats the data of a Secret (the message goes into a condition,
// which convoy-view reads).
func FuzzMergeValues(f *testing.F) {
	for _, s := range []struct{ cm, secret, values string }{
		{"replicaCount: 2\nimage: {tag: a}", "password: hunter2-s3cr3t", `{"image":{"tag":"b"}}`},
		{"a: [1, 2]\nb: null", "a: {b: c}", `{"a":null}`},
		{"- a list", "{not: yaml", `[1]`},
		{"", "", `null`},
		{"a: &x {b: 1}\nc: *x", "password: !!binary aHVudGVy", `"s"`},
		{"key: value", "token: s3cr3t-value-4711\n  bad: indentation", `{}`},
	} {
		f.Add(s.cm, s.secret, []byte(s.values))
	}
	f.Fuzz(func(t *testing.T, cmData, secretData string, values []byte) {
		reader := ValuesReaderFunc(func(_ context.Context, _ string, kind v1alpha1.ValuesSourceKind, name string) (map[string][]byte, error) {
			if kind == v1alpha1.ValuesSourceSecret {
				return map[string][]byte{"values.yaml": []byte(secretData)}, nil
			}
			return map[string][]byte{"values.yaml": []byte(cmData)}, nil
		})
		rel := &v1alpha1.Release{
			ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n"},
			Spec: v1alpha1.ReleaseSpec{
				ValuesFrom: []v1alpha1.ValuesReference{
					{Kind: v1alpha1.ValuesSourceConfigMap, Name: "cm"},
					{Kind: v1alpha1.ValuesSourceSecret, Name: "s"},
				},
			},
		}
		if json.Valid(values) {
			rel.Spec.Values = &runtime.RawExtension{Raw: values}
		}
		merged, err := mergeValues(context.Background(), rel, reader)
		if err != nil {
			msg := err.Error()
			switch reasons.Of(err, "") {
			case v1alpha1.ReasonValuesNotReady:
				if !strings.Contains(msg, "spec.valuesFrom[") {
					t.Fatalf("a ValuesNotReady error names no valuesFrom entry: %v", err)
				}
			case v1alpha1.ReasonUnappliable:
				if !strings.Contains(msg, "spec.values") {
					t.Fatalf("an Unappliable values error names no field: %v", err)
				}
			default:
				t.Fatalf("a values error with the reason %q: %v", reasons.Of(err, ""), err)
			}
			for _, line := range strings.Split(secretData, "\n") {
				if line = strings.TrimSpace(line); len(line) >= 8 && strings.Contains(msg, line) {
					t.Fatalf("the error repeats the Secret's data %q: %s", line, msg)
				}
			}
			return
		}
		if _, err := valuesDigest(merged); err != nil {
			t.Fatalf("merged values have no digest: %v", err)
		}
		_ = fmt.Sprint(merged)
	})
}
