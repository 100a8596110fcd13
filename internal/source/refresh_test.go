package source

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"kumodo.io/convoy/api/v1alpha1"
)

// TestRefresh: Refresh forgets the listing, index, tags and digests of its source's
// repository for every set of credentials, and nothing of another repository (one
// whose URL merely starts with the same characters included).
func TestRefresh(t *testing.T) {
	keys := map[string][]string{
		"git":     {"https://git.example/charts|anonymous", "https://git.example/charts|fp1", "https://git.example/charts2|anonymous"},
		"index":   {"https://charts.example/stable|anonymous", "https://charts.example/stable|fp1", "https://charts.example/stable2|anonymous"},
		"tags":    {"reg.example/charts/web|anonymous", "reg.example/charts/web|fp1", "reg.example/charts/webapp|anonymous"},
		"digests": {"reg.example/charts/web:1.0.0|anonymous", "reg.example/charts/webapp:1.0.0|anonymous"},
	}
	for _, tc := range []struct {
		name string
		src  v1alpha1.ChartSource
		want map[string][]string // the keys left
	}{{
		name: "git",
		src:  v1alpha1.ChartSource{Git: &v1alpha1.GitChartSource{URL: "https://git.example/charts", Ref: v1alpha1.GitRef{Branch: "main"}}},
		want: map[string][]string{"git": {"https://git.example/charts2|anonymous"}, "index": keys["index"], "tags": keys["tags"], "digests": keys["digests"]},
	}, {
		name: "http",
		src:  v1alpha1.ChartSource{Repository: "https://charts.example/stable/", Name: "web"},
		want: map[string][]string{"git": keys["git"], "index": {"https://charts.example/stable2|anonymous"}, "tags": keys["tags"], "digests": keys["digests"]},
	}, {
		name: "oci",
		src:  v1alpha1.ChartSource{Repository: "oci://reg.example/charts", Name: "web"},
		want: map[string][]string{"git": keys["git"], "index": keys["index"], "tags": {"reg.example/charts/webapp|anonymous"}, "digests": {"reg.example/charts/webapp:1.0.0|anonymous"}},
	}, {
		name: "not a URL",
		src:  v1alpha1.ChartSource{Repository: "::", Name: "web"},
		want: keys,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(Options{CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			for _, k := range keys["git"] {
				r.gitListings.put(k, nil, now)
			}
			for _, k := range keys["index"] {
				r.indexes.put(k, &repo.IndexFile{})
			}
			for _, k := range keys["tags"] {
				r.tags.put(k, []string{"1.0.0"})
			}
			for _, k := range keys["digests"] {
				r.digests.put(k, "sha256:0")
			}
			r.Refresh(tc.src)
			got := map[string][]string{}
			for k := range r.gitListings.entries {
				got["git"] = append(got["git"], k)
			}
			for k := range r.indexes.entries {
				got["index"] = append(got["index"], k)
			}
			for k := range r.tags.entries {
				got["tags"] = append(got["tags"], k)
			}
			for k := range r.digests.entries {
				got["digests"] = append(got["digests"], k)
			}
			want := map[string][]string{}
			for k, v := range tc.want {
				want[k] = slices.Sorted(slices.Values(v))
			}
			for k, v := range got {
				got[k] = slices.Sorted(slices.Values(v))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("keys left after Refresh (-want +got):\n%s", diff)
			}
		})
	}
}
