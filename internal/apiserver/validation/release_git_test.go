package validation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

func gitRelease(mutate func(g *convoyv1alpha1.GitChartSource)) *convoyv1alpha1.Release {
	r := validRelease()
	r.Spec.Chart = convoyv1alpha1.ChartSource{Git: &convoyv1alpha1.GitChartSource{
		URL: "https://git.example.com/platform/charts.git", Ref: convoyv1alpha1.GitRef{Branch: "main"}, Path: "charts/podinfo",
	}}
	if mutate != nil {
		mutate(r.Spec.Chart.Git)
	}
	return r
}

func TestReleaseChartFromGit(t *testing.T) {
	cases := map[string]struct {
		release *convoyv1alpha1.Release
		opts    ReleaseOptions
		fields  []string // the error fields, none when valid
		detail  string   // a part of the first error's detail
	}{
		"branch": {release: gitRelease(nil)},
		"tag":    {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Ref = convoyv1alpha1.GitRef{Tag: "v1.2.0"} })},
		"semver": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Ref = convoyv1alpha1.GitRef{Semver: ">=1.0.0 <2.0.0"} })},
		"commit": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) {
			g.Ref = convoyv1alpha1.GitRef{Commit: strings.Repeat("ab", 20)}
		})},
		"ssh":       {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.URL = "ssh://git@git.example.com:2222/platform/charts.git" })},
		"root path": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Path = "" })},
		"secret": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) {
			g.SecretRef = &convoyv1alpha1.LocalObjectReference{Name: "git-creds"}
		})},
		"file, allowed": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.URL = "file:///srv/git/charts" }), opts: ReleaseOptions{AllowGitFileURLs: true}},
		"git and repository": {release: func() *convoyv1alpha1.Release {
			r := gitRelease(nil)
			r.Spec.Chart.Repository, r.Spec.Chart.Name, r.Spec.Chart.Version = "https://charts.example.com", "podinfo", "1.0.0"
			return r
		}(), fields: []string{"spec.chart.name", "spec.chart.repository", "spec.chart.version"}, detail: "either repository, name and version"},
		"git with the chart's secretRef": {release: func() *convoyv1alpha1.Release {
			r := gitRelease(nil)
			r.Spec.Chart.SecretRef = &convoyv1alpha1.LocalObjectReference{Name: "creds"}
			return r
		}(), fields: []string{"spec.chart.secretRef"}, detail: "git.secretRef"},
		"neither git nor repository": {release: func() *convoyv1alpha1.Release {
			r := validRelease()
			r.Spec.Chart = convoyv1alpha1.ChartSource{}
			return r
		}(), fields: []string{"spec.chart.repository", "spec.chart.name"}, detail: "spec.chart.git"},
		"no ref": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Ref = convoyv1alpha1.GitRef{} }),
			fields: []string{"spec.chart.git.ref"}, detail: "exactly one of branch, tag, semver and commit"},
		"two refs": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Ref.Tag = "v1" }),
			fields: []string{"spec.chart.git.ref"}, detail: "exactly one"},
		"no url": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.URL = "" }), fields: []string{"spec.chart.git.url"}},
		"file, not allowed": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.URL = "file:///srv/git/charts" }),
			fields: []string{"spec.chart.git.url"}, detail: "--allow-git-file-urls"},
		"scp-like": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.URL = "git@github.com:org/charts.git" }),
			fields: []string{"spec.chart.git.url"}, detail: "ssh://user@host/path"},
		"password in the URL": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.URL = "https://me:s3cret@git.example.com/c.git" }),
			fields: []string{"spec.chart.git.url"}, detail: "git.secretRef"},
		"bad semver": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Ref = convoyv1alpha1.GitRef{Semver: "one point oh"} }),
			fields: []string{"spec.chart.git.ref.semver"}},
		"short commit": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Ref = convoyv1alpha1.GitRef{Commit: "abc1234"} }),
			fields: []string{"spec.chart.git.ref.commit"}, detail: "40 lowercase hex digits"},
		"bad branch": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Ref = convoyv1alpha1.GitRef{Branch: "main..x"} }),
			fields: []string{"spec.chart.git.ref.branch"}},
		"path out of the repository": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Path = "charts/../../etc" }),
			fields: []string{"spec.chart.git.path"}, detail: "inside the repository"},
		"absolute path": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Path = "/charts/podinfo" }),
			fields: []string{"spec.chart.git.path"}},
		"empty secret name": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.SecretRef = &convoyv1alpha1.LocalObjectReference{} }),
			fields: []string{"spec.chart.git.secretRef.name"}},
		"verified": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) {
			g.Verify = &convoyv1alpha1.GitVerification{SecretRef: convoyv1alpha1.LocalObjectReference{Name: "release-signers"}}
		})},
		"verify without a Secret": {release: gitRelease(func(g *convoyv1alpha1.GitChartSource) { g.Verify = &convoyv1alpha1.GitVerification{} }),
			fields: []string{"spec.chart.git.verify.secretRef.name"}, detail: "key keys"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := Release(tc.release, tc.opts)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Fatalf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.detail != "" && !strings.Contains(errs[0].Detail, tc.detail) {
				t.Errorf("detail %q does not say %q", errs[0].Detail, tc.detail)
			}
			for _, e := range errs {
				if strings.Contains(e.Error(), "s3cret") {
					t.Errorf("an error shows the URL's password: %v", e)
				}
			}
		})
	}
}

// The example of a Release from Git is valid as written.
func TestExampleReleaseFromGitIsValid(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "release-git.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		if !strings.Contains(doc, "kind: Release") {
			continue
		}
		var r convoyv1alpha1.Release
		if err := yaml.UnmarshalStrict([]byte(doc), &r); err != nil {
			t.Fatalf("examples/release-git.yaml: %v", err)
		}
		if r.Spec.Chart.Git == nil {
			t.Fatal("examples/release-git.yaml has no spec.chart.git")
		}
		if errs := Release(&r, ReleaseOptions{}); len(errs) > 0 {
			t.Errorf("examples/release-git.yaml is invalid: %v", errs)
		}
		found = true
	}
	if !found {
		t.Error("examples/release-git.yaml has no Release")
	}
}
