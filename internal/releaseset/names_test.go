package releaseset

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestReleaseName(t *testing.T) {
	long := strings.Repeat("s", 40)
	cases := map[string]struct {
		set, cluster string
		want         string
	}{
		"set and cluster joined by a dash": {set: "podinfo", cluster: "prod-eu-1", want: "podinfo-prod-eu-1"},
		"63 characters are kept as they are": {set: strings.Repeat("a", 31), cluster: strings.Repeat("b", 31),
			want: strings.Repeat("a", 31) + "-" + strings.Repeat("b", 31)},
		"longer: the first part cut, a hash of set/cluster appended": {set: long, cluster: "cluster-with-a-long-name",
			want: long + "-cluster-wit-" + hash10(long+"/cluster-with-a-long-name")},
		"a cut that ends in a dash drops it": {set: strings.Repeat("s", 51), cluster: "x-" + strings.Repeat("y", 20),
			want: strings.Repeat("s", 51) + "-" + hash10(strings.Repeat("s", 51)+"/x-"+strings.Repeat("y", 20))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ReleaseName(tc.set, tc.cluster)
			if got != tc.want {
				t.Errorf("ReleaseName(%q, %q) = %q, want %q", tc.set, tc.cluster, got, tc.want)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 || len(got) > 63 {
				t.Errorf("ReleaseName(%q, %q) = %q: not a name of at most 63 characters: %v", tc.set, tc.cluster, got, errs)
			}
		})
	}
	a, b := ReleaseName(long, "cluster-with-a-long-name-1"), ReleaseName(long, "cluster-with-a-long-name-2")
	if a == b {
		t.Errorf("two Clusters whose names differ past the cut get the same Release name %q", a)
	}
}

// hash10 is the contract's hash of a shortened name: 10 hex digits of sha256.
func hash10(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:10]
}

func TestRevision(t *testing.T) {
	base := func(values string, mutate ...func(*v1.ReleaseTemplate)) v1.ReleaseTemplate {
		t := v1.ReleaseTemplate{Spec: v1.ReleaseSpec{
			Chart:  v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo"},
			Values: &runtime.RawExtension{Raw: []byte(values)},
		}}
		for _, m := range mutate {
			m(&t)
		}
		return t
	}
	want := Revision(base(`{"a":1,"b":{"c":"d"}}`), nil, nil)
	if !regexp.MustCompile(`^sha256:[0-9a-f]{16}$`).MatchString(want) {
		t.Fatalf("Revision = %q, want sha256: and 16 hex digits", want)
	}
	same := map[string]v1.ReleaseTemplate{
		"values with keys in another order and other spacing": base(`{ "b": {"c":"d"}, "a": 1 }`),
		"defaulted fields written out": base(`{"a":1,"b":{"c":"d"}}`, func(t *v1.ReleaseTemplate) {
			t.Spec.Prune = ptr.To(true)
			t.Spec.DeletionPolicy = v1.DeletionPolicyDelete
		}),
	}
	for name, tmpl := range same {
		if got := Revision(tmpl, nil, nil); got != want {
			t.Errorf("%s: Revision = %q, want %q (the same template)", name, got, want)
		}
	}
	other := map[string]v1.ReleaseTemplate{
		"other values":                 base(`{"a":2,"b":{"c":"d"}}`),
		"a number written differently": base(`{"a":1.0,"b":{"c":"d"}}`),
		"another label": base(`{"a":1,"b":{"c":"d"}}`, func(t *v1.ReleaseTemplate) {
			t.Metadata.Labels = map[string]string{"team": "a"}
		}),
		"another chart version": base(`{"a":1,"b":{"c":"d"}}`, func(t *v1.ReleaseTemplate) { t.Spec.Chart.Version = "1.2.3" }),
	}
	for name, tmpl := range other {
		if got := Revision(tmpl, nil, nil); got == want {
			t.Errorf("%s: Revision = %q, the same as before the change", name, got)
		}
	}
}

// The revision of a set without overrides and source is the one the template alone had
// before sets had them (digests computed by that code): existing sets do not roll out
// again on an upgrade. Overrides and a source are part of the revision.
func TestRevisionCoversOverridesAndSource(t *testing.T) {
	tmpl := testSet("web").Spec.Template
	eu := []v1.ClusterOverride{{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}},
		Values: &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)}}}
	euSpaced := []v1.ClusterOverride{{ClusterSelector: eu[0].ClusterSelector, Values: &runtime.RawExtension{Raw: []byte(`{ "replicas" : 3 }`)}}}
	us := []v1.ClusterOverride{{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "us"}}, Values: eu[0].Values}}
	withOverrides := Revision(tmpl, eu, nil)
	withSource := Revision(tmpl, nil, &v1.ReleaseSetSource{ChartVersion: "1.2.3"})
	cases := map[string]struct {
		got, want string
	}{
		"no overrides, no source: the digest of the template alone, as before": {
			got: Revision(tmpl, nil, nil), want: "sha256:fa9a29273563efd9"},
		"other values, no overrides, no source: as before": {
			got: Revision(testSet("web", values(`{"replicas":2}`)).Spec.Template, nil, nil), want: "sha256:5a650e883584ca61"},
		"empty overrides and an empty source are none": {
			got: Revision(tmpl, []v1.ClusterOverride{}, &v1.ReleaseSetSource{}), want: "sha256:fa9a29273563efd9"},
		"overrides written otherwise: the same revision": {got: Revision(tmpl, euSpaced, nil), want: withOverrides},
		"the same source: the same revision": {
			got: Revision(tmpl, nil, &v1.ReleaseSetSource{ChartVersion: "1.2.3"}), want: withSource},
	}
	for name, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: Revision = %s, want %s", name, tc.got, tc.want)
		}
	}
	distinct := map[string]string{
		"template alone":        Revision(tmpl, nil, nil),
		"overrides":             withOverrides,
		"other overrides":       Revision(tmpl, us, nil),
		"overrides in order":    Revision(tmpl, append(slices.Clone(eu), us...), nil),
		"overrides reordered":   Revision(tmpl, append(slices.Clone(us), eu...), nil),
		"a source":              withSource,
		"another chart version": Revision(tmpl, nil, &v1.ReleaseSetSource{ChartVersion: "1.2.4"}),
		"a commit":              Revision(tmpl, nil, &v1.ReleaseSetSource{Commit: "0123abcd"}),
		"a values digest":       Revision(tmpl, nil, &v1.ReleaseSetSource{ValuesDigest: "sha256:00"}),
		"overrides and source":  Revision(tmpl, eu, &v1.ReleaseSetSource{ChartVersion: "1.2.3"}),
	}
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(distinct)) {
		if other, ok := seen[distinct[name]]; ok {
			t.Errorf("%s and %s have the same revision %s", name, other, distinct[name])
		}
		seen[distinct[name]] = name
	}
}
