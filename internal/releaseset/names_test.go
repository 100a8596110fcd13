package releaseset

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

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
	want := Revision(base(`{"a":1,"b":{"c":"d"}}`))
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
		if got := Revision(tmpl); got != want {
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
		if got := Revision(tmpl); got == want {
			t.Errorf("%s: Revision = %q, the same as before the change", name, got)
		}
	}
}
