package render

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

func cm(name, key string) v1alpha1.ValuesReference {
	return v1alpha1.ValuesReference{Kind: v1alpha1.ValuesSourceConfigMap, Name: name, Key: key}
}

func secret(name, key string) v1alpha1.ValuesReference {
	return v1alpha1.ValuesReference{Kind: v1alpha1.ValuesSourceSecret, Name: name, Key: key}
}

func optional(ref v1alpha1.ValuesReference) v1alpha1.ValuesReference {
	ref.Optional = true
	return ref
}

func TestMergeValues(t *testing.T) {
	store := fakeValues{
		"ConfigMap/team-a/base":     {"values.yaml": "replicaCount: 2\nsettings: {color: red, size: small}\nlist: [1, 2]\n"},
		"ConfigMap/team-a/override": {"custom.yaml": "settings: {size: large}\nlist: [3]\n"},
		"Secret/team-a/secret":      {"values.yaml": "password: hunter2\nsettings: {color: green}\n"},
		"ConfigMap/team-a/multidoc": {"values.yaml": "a: 1\n---\nb: 2\n"},
		"ConfigMap/team-a/broken":   {"values.yaml": "a: [unclosed\n"},
	}
	cases := map[string]struct {
		opts   []releaseOption
		reader ValuesReader
		want   map[string]any
		reason string
		msgHas string
	}{
		"no values": {want: map[string]any{}},
		"spec.values only": {
			opts: []releaseOption{values(`{replicaCount: 3}`)},
			want: map[string]any{"replicaCount": float64(3)},
		},
		"valuesFrom in order, then values on top": {
			opts: []releaseOption{
				valuesFrom(cm("base", ""), cm("override", "custom.yaml"), secret("secret", "values.yaml")),
				values(`{replicaCount: 5, settings: {extra: x}}`),
			},
			want: map[string]any{
				"replicaCount": float64(5),
				"settings":     map[string]any{"color": "green", "size": "large", "extra": "x"},
				"list":         []any{float64(3)}, // lists are replaced, not merged
				"password":     "hunter2",
			},
		},
		"a null in values is kept, so that it removes a chart default": {
			opts: []releaseOption{valuesFrom(cm("base", "")), values(`{settings: {size: null}}`)},
			want: map[string]any{"replicaCount": float64(2), "list": []any{float64(1), float64(2)}, "settings": map[string]any{"color": "red", "size": nil}},
		},
		"several YAML documents merge": {
			opts: []releaseOption{valuesFrom(cm("multidoc", ""))},
			want: map[string]any{"a": float64(1), "b": float64(2)},
		},
		"optional missing object": {
			opts: []releaseOption{valuesFrom(optional(cm("absent", "")), cm("base", ""))},
			want: map[string]any{"replicaCount": float64(2), "list": []any{float64(1), float64(2)}, "settings": map[string]any{"color": "red", "size": "small"}},
		},
		"optional missing key": {
			opts: []releaseOption{valuesFrom(optional(cm("base", "other.yaml")))},
			want: map[string]any{},
		},
		"missing object": {
			opts:   []releaseOption{valuesFrom(cm("absent", ""))},
			reason: v1alpha1.ReasonValuesNotReady, msgHas: "spec.valuesFrom[0] (ConfigMap team-a/absent, key values.yaml): the ConfigMap does not exist",
		},
		"missing Secret key": {
			opts:   []releaseOption{valuesFrom(secret("secret", "prod.yaml"))},
			reason: v1alpha1.ReasonValuesNotReady, msgHas: `has no key "prod.yaml"`,
		},
		"not YAML": {
			opts:   []releaseOption{valuesFrom(cm("broken", ""))},
			reason: v1alpha1.ReasonValuesNotReady, msgHas: "not YAML values",
		},
		"apimachinery NotFound counts as missing": {
			opts: []releaseOption{valuesFrom(optional(cm("gone", "")))},
			reader: ValuesReaderFunc(func(context.Context, string, v1alpha1.ValuesSourceKind, string) (map[string][]byte, error) {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "gone")
			}),
			want: map[string]any{},
		},
		"reading fails": {
			opts: []releaseOption{valuesFrom(optional(cm("base", "")))},
			reader: ValuesReaderFunc(func(context.Context, string, v1alpha1.ValuesSourceKind, string) (map[string][]byte, error) {
				return nil, errors.New("connection refused")
			}),
			reason: v1alpha1.ReasonValuesNotReady, msgHas: "reading it failed: connection refused",
		},
		"unknown kind": {
			opts:   []releaseOption{valuesFrom(v1alpha1.ValuesReference{Kind: "Vault", Name: "x"})},
			reason: v1alpha1.ReasonUnsupported,
		},
		"spec.values not an object": {
			opts: []releaseOption{func(r *v1alpha1.Release) {
				r.Spec.Values = &runtime.RawExtension{Raw: []byte(`[1,2]`)}
			}},
			reason: v1alpha1.ReasonUnappliable,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reader := tc.reader
			if reader == nil {
				reader = store
			}
			got, err := mergeValues(context.Background(), testRelease("web", "", "web", tc.opts...), reader)
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.msgHas) {
					t.Fatalf("error %q does not say %q", err, tc.msgHas)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValuesReachTheTemplates(t *testing.T) {
	repo := newChartRepo(t).add("web", "1.0.0")
	r, _ := testRenderer(t)
	store := fakeValues{"ConfigMap/team-a/base": {"values.yaml": "replicaCount: 2\nsettings: {color: red}\n"}}
	rel := testRelease("web", repo.url(), "web",
		valuesFrom(cm("base", "")),
		values(`{replicaCount: 4, settings: {size: null, shape: round}}`))
	res := renderOK(t, r, Request{Release: rel, Values: merged(t, rel, store)})

	dep := find(t, res.Objects, "Deployment", "web")
	replicas, _, _ := unstructuredInt(dep, "spec", "replicas")
	settings := find(t, res.Objects, "ConfigMap", "web-settings").Object["data"]
	got := map[string]any{"replicas": replicas, "settings": settings}
	want := map[string]any{
		"replicas": int64(4),
		// size: null removed the chart's default; color from valuesFrom; shape from values.
		"settings": map[string]any{"color": "red", "shape": "round"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered values (-want +got):\n%s", diff)
	}
}

func TestValuesDigest(t *testing.T) {
	a, err := valuesDigest(map[string]any{"a": 1, "b": map[string]any{"c": "x", "d": []any{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	// Same values built in another order: same digest.
	m := map[string]any{}
	m["b"] = map[string]any{"d": []any{1, 2}, "c": "x"}
	m["a"] = 1
	b, _ := valuesDigest(m)
	c, _ := valuesDigest(map[string]any{"a": 2, "b": map[string]any{"c": "x", "d": []any{1, 2}}})
	if a != b || a == c || !strings.HasPrefix(a, "sha256:") {
		t.Errorf("digests: same values %s and %s, other values %s", a, b, c)
	}
}

func TestMissingValuesThroughRender(t *testing.T) {
	repo := newChartRepo(t).add("web", "1.0.0")
	r, _ := testRenderer(t)
	rel := testRelease("web", repo.url(), "web", valuesFrom(cm("absent", "")))
	r.values = fakeValues{}
	_, err := r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps})
	want := "Release team-a/web: spec.valuesFrom[0] (ConfigMap team-a/absent, key values.yaml): the ConfigMap does not exist; create it or mark the entry optional"
	if reasons.Of(err, "") != v1alpha1.ReasonValuesNotReady || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("want ValuesNotReady %q, got %v", want, err)
	}
	// Nothing was fetched for a Release whose values cannot be read.
	if n := repo.count("/index.yaml"); n != 0 {
		t.Errorf("index fetched %d times", n)
	}
}

// A Secret's data never reaches a condition (docs/security.md#secrets-never-leak). The YAML parser's
// messages can quote the data it failed on (an anchor's name), so for a Secret the
// message keeps only the entry and the line; a ConfigMap's keeps the parser's text.
func TestValuesFromSecretErrorsQuoteNoData(t *testing.T) {
	const marker = "S3CRETv4lue"
	cases := map[string]struct {
		data     string
		wantLine string
	}{
		"an unknown anchor (the parser quotes its name)": {data: "a: *" + marker, wantLine: ""},
		"an unclosed flow sequence":                      {data: "a: 1\nb: [" + marker, wantLine: "(line 2)"},
		"a plain string, not a map":                      {data: marker},
		"a tab where a token starts":                     {data: "a:\n\t" + marker, wantLine: "(line 2)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reader := fakeValues{"Secret/team-a/creds": {"values.yaml": tc.data}, "ConfigMap/team-a/plain": {"values.yaml": tc.data}}
			_, err := mergeValues(context.Background(), testRelease("web", "", "web", valuesFrom(secret("creds", ""))), reader)
			if err == nil || reasons.Of(err, "") != v1alpha1.ReasonValuesNotReady {
				t.Fatalf("error %v, want ValuesNotReady", err)
			}
			msg := err.Error()
			if strings.Contains(msg, marker) {
				t.Errorf("the message quotes the Secret's data: %s", msg)
			}
			if !strings.Contains(msg, "spec.valuesFrom[0] (Secret team-a/creds, key values.yaml)") || !strings.Contains(msg, tc.wantLine) {
				t.Errorf("message %q does not name the entry and %q", msg, tc.wantLine)
			}
			// A ConfigMap is readable where the Release is: its message keeps the parser's text.
			_, err = mergeValues(context.Background(), testRelease("web", "", "web", valuesFrom(cm("plain", ""))), reader)
			if err == nil || !strings.Contains(err.Error(), "not YAML values: ") {
				t.Errorf("ConfigMap: error %v, want the parser's message", err)
			}
		})
	}
}
