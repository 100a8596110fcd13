package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The values are pinned: objects on clusters carry them, and the controller, the
// observer and the CLI select by them. Changing the scheme relabels every object
// whose name is not a valid label value and loses the ones a reader looks for.
func TestLabelValue(t *testing.T) {
	cases := map[string]struct {
		in, want string
	}{
		"a valid value stays":           {in: "web", want: "web"},
		"dots and underscores stay":     {in: "my.app_v2", want: "my.app_v2"},
		"uppercase stays":               {in: "WebApp", want: "WebApp"},
		"63 characters stay":            {in: strings.Repeat("a", 63), want: strings.Repeat("a", 63)},
		"empty stays":                   {in: "", want: ""},
		"colon (an RBAC name)":          {in: "something:create-cert", want: "something-create-cert-74664e05df28ee52cfde"},
		"two colons":                    {in: "system:controller:job-controller", want: "system-controller-job-controller-7c613865953580c32e15"},
		"colon and uppercase":           {in: "UPPER:Case", want: "UPPER-Case-47354eafe95a50cdfc2c"},
		"slash":                         {in: "a/b", want: "a-b-c14cddc033f64b9dea80"},
		"space":                         {in: "a b", want: "a-b-c8687a08aa5d6ed20443"},
		"64 characters":                 {in: strings.Repeat("a", 64), want: strings.Repeat("a", 40) + "-ffe054fe7ae0cb6dc65c"},
		"253 characters (a Release)":    {in: strings.Repeat("r", 253), want: strings.Repeat("r", 40) + "-5897ca6a61f06ceef406"},
		"long with colons":              {in: strings.Repeat("ab:", 30), want: "ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-a-b15466e1af6aed21d9c7"},
		"leading dash":                  {in: "-lead", want: "lead-54e05a0bef38bd81404e"},
		"trailing dot":                  {in: "trail.", want: "trail-cedd4b9ff43e695b31d8"},
		"leading and trailing _":        {in: "_x_", want: "x-f1f6bd62c1e06dacd827"},
		"only punctuation":              {in: ":", want: "e7ac0786668e0ff0f02b"},
		"not ASCII":                     {in: "ключ", want: "1de36a32af798da0c1ac"},
		"a Release name with dots (ok)": {in: "web.team-a", want: "web.team-a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := LabelValue(tc.in)
			if got != tc.want {
				t.Errorf("LabelValue(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Errorf("LabelValue(%q) = %q is not a valid label value: %v", tc.in, got, errs)
			}
		})
	}
}

func TestLabelValueKeepsNamesApart(t *testing.T) {
	// Names that a cut or a character replacement alone would give the same value.
	names := []string{
		"a:b", "a/b", "a-b", "a b",
		strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("x", 63) + "y",
		"release:create-cert", "release:create-cert:extra",
	}
	seen := map[string]string{}
	for _, n := range names {
		v := LabelValue(n)
		if other, ok := seen[v]; ok {
			t.Errorf("%q and %q both give %q", other, n, v)
		}
		seen[v] = n
	}
}

func TestSetNameLabel(t *testing.T) {
	cases := map[string]struct {
		name            string
		annotations     map[string]string
		wantLabels      map[string]string
		wantAnnotations map[string]string
	}{
		"a valid name: the label, no annotation": {
			name:        "web",
			annotations: map[string]string{"a": "b"},
			wantLabels:  map[string]string{"app": "x", LabelHook: "web"}, wantAnnotations: map[string]string{"a": "b"},
		},
		"a name that is no label value: the digest, and the name in the annotation": {
			name:       "web:create-cert",
			wantLabels: map[string]string{"app": "x", LabelHook: LabelValue("web:create-cert")},
			wantAnnotations: map[string]string{
				LabelHook: "web:create-cert",
			},
		},
		"a stale annotation of a valid name goes": {
			name:        "web",
			annotations: map[string]string{LabelHook: "old:name"},
			wantLabels:  map[string]string{"app": "x", LabelHook: "web"}, wantAnnotations: map[string]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Labels: map[string]string{"app": "x"}, Annotations: tc.annotations}
			SetNameLabel(obj, LabelHook, tc.name)
			if diff := cmp.Diff(tc.wantLabels, obj.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAnnotations, obj.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if !HasNameLabel(obj.Labels, obj.Annotations, LabelHook, tc.name) {
				t.Errorf("HasNameLabel is false for the name it was labelled with")
			}
			if got := NameOfLabel(obj.Labels, obj.Annotations, LabelHook); got != tc.name {
				t.Errorf("NameOfLabel = %q, want %q", got, tc.name)
			}
		})
	}
}

func TestHasReleaseLabels(t *testing.T) {
	long := strings.Repeat("r", 100)
	obj := &metav1.ObjectMeta{}
	SetReleaseLabels(obj, long, "team-a")
	cases := map[string]struct {
		labels, annotations map[string]string
		name, namespace     string
		want                bool
	}{
		"its Release":          {obj.Labels, obj.Annotations, long, "team-a", true},
		"another namespace":    {obj.Labels, obj.Annotations, long, "team-b", false},
		"another Release":      {obj.Labels, obj.Annotations, "web", "team-a", false},
		"the digest as a name": {obj.Labels, obj.Annotations, LabelValue(long), "team-a", false},
		"a valid name":         {map[string]string{LabelReleaseName: "web", LabelReleaseNamespace: "team-a"}, nil, "web", "team-a", true},
		"no labels":            {nil, nil, "web", "team-a", false},
		"a digest without the annotation": {
			map[string]string{LabelReleaseName: LabelValue(long), LabelReleaseNamespace: "team-a"}, nil, long, "team-a", false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := HasReleaseLabels(tc.labels, tc.annotations, tc.name, tc.namespace); got != tc.want {
				t.Errorf("HasReleaseLabels = %v, want %v", got, tc.want)
			}
		})
	}
	if diff := cmp.Diff(map[string]string{LabelReleaseName: LabelValue(long), LabelReleaseNamespace: "team-a"}, ReleaseSelector(long, "team-a")); diff != "" {
		t.Errorf("ReleaseSelector (-want +got):\n%s", diff)
	}
}
