package source

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/gittest"
)

func TestMoves(t *testing.T) {
	git := func(ref v1alpha1.GitRef) v1alpha1.ChartSource {
		return v1alpha1.ChartSource{Git: &v1alpha1.GitChartSource{URL: "https://git.example.com/c.git", Ref: ref}}
	}
	cases := map[string]struct {
		src  v1alpha1.ChartSource
		want bool
	}{
		"no version: the latest stable": {src: v1alpha1.ChartSource{Name: "web"}, want: true},
		"a range":                       {src: v1alpha1.ChartSource{Name: "web", Version: ">=1.0.0"}, want: true},
		"a caret":                       {src: v1alpha1.ChartSource{Name: "web", Version: "^1"}, want: true},
		"a partial version is a range":  {src: v1alpha1.ChartSource{Name: "web", Version: "1.2"}, want: true},
		"an exact version":              {src: v1alpha1.ChartSource{Name: "web", Version: "1.2.3"}},
		"an exact version with v":       {src: v1alpha1.ChartSource{Name: "web", Version: "v1.2.3"}},
		"an exact pre-release":          {src: v1alpha1.ChartSource{Name: "web", Version: "2.0.0-rc.1+b7"}},
		"a branch":                      {src: git(v1alpha1.GitRef{Branch: "main"}), want: true},
		"a tag (tags can be moved)":     {src: git(v1alpha1.GitRef{Tag: "v1"}), want: true},
		"a semver range of tags":        {src: git(v1alpha1.GitRef{Semver: "^1"}), want: true},
		"a commit":                      {src: git(v1alpha1.GitRef{Commit: "0123456789abcdef0123456789abcdef01234567"})},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Moves(c.src); got != c.want {
				t.Errorf("Moves = %t, want %t", got, c.want)
			}
		})
	}
}

// Resolve picks what a render picks, from the caches renders share, and reads
// a listing again once it is older than the caller's maxAge.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	r, clk := testRenderer(t)

	repo := newChartRepo(t).add("web", "1.0.0", "1.1.0", "2.0.0")
	src := v1alpha1.ChartSource{Repository: repo.url(), Name: "web", Version: ">=1.0.0 <2.0.0"}
	resolve := func(src v1alpha1.ChartSource, maxAge time.Duration, creds *Credentials) Resolved {
		t.Helper()
		got, err := r.Resolve(ctx, src, maxAge, creds)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if diff := cmp.Diff(Resolved{ChartVersion: "1.1.0"}, resolve(src, 10*time.Second, nil)); diff != "" {
		t.Errorf("range (-want +got):\n%s", diff)
	}
	repo.add("web", "1.2.0")
	clk.Step(5 * time.Second)
	if got := resolve(src, 10*time.Second, nil); got.ChartVersion != "1.1.0" || repo.count("/index.yaml") != 1 {
		t.Errorf("within maxAge: %+v after %d index reads, want 1.1.0 from the cached index", got, repo.count("/index.yaml"))
	}
	clk.Step(5 * time.Second)
	if got := resolve(src, 10*time.Second, nil); got.ChartVersion != "1.2.0" || repo.count("/index.yaml") != 2 {
		t.Errorf("after maxAge: %+v after %d index reads, want 1.2.0 from a new read", got, repo.count("/index.yaml"))
	}
	// A render reads the same index: no new request.
	renderOK(t, r, Request{Release: testRelease("web", repo.url(), "web", version(">=1.0.0 <2.0.0"))})
	if n := repo.count("/index.yaml"); n != 2 {
		t.Errorf("a render after the resolution read the index again (%d reads)", n)
	}
	if _, err := r.Resolve(ctx, v1alpha1.ChartSource{Repository: repo.url(), Name: "web", Version: ">=3"}, 0, nil); err == nil {
		t.Error("a range nothing meets resolved")
	}

	reg := newOCIRegistry(t)
	reg.push(t, "charts", "web", "1.0.0", "1.1.0")
	oci := v1alpha1.ChartSource{Repository: "oci://" + reg.host + "/charts", Name: "web", Version: "~1.0"}
	if diff := cmp.Diff(Resolved{ChartVersion: "1.0.0"}, resolve(oci, 0, nil)); diff != "" {
		t.Errorf("OCI (-want +got):\n%s", diff)
	}

	srv := gittest.NewServer(t, gitUser, gitPassword)
	g := srv.Repo(t, "charts")
	c1 := g.Commit(t, "main", "1.0.0", gittest.Chart("charts/web", "web", "1.0.0", nil))
	gsrc := v1alpha1.ChartSource{Git: &v1alpha1.GitChartSource{URL: srv.RepoURL("charts"), Path: "charts/web", Ref: v1alpha1.GitRef{Branch: "main"}}}
	if diff := cmp.Diff(Resolved{Commit: c1}, resolve(gsrc, 10*time.Second, gitCreds(srv))); diff != "" {
		t.Errorf("branch (-want +got):\n%s", diff)
	}
	c2 := g.Commit(t, "main", "1.0.1", gittest.Chart("charts/web", "web", "1.0.1", nil))
	clk.Step(10 * time.Second)
	if diff := cmp.Diff(Resolved{Commit: c2}, resolve(gsrc, 10*time.Second, gitCreds(srv))); diff != "" {
		t.Errorf("branch moved (-want +got):\n%s", diff)
	}
	// The Release pinned to the commit renders it.
	res, err := renderGit(t, r, gitRelease("web", srv.RepoURL("charts"), "charts/web", v1alpha1.GitRef{Commit: c2}), gitCreds(srv))
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit != c2 || res.ChartVersion != "1.0.1" {
		t.Errorf("render of the pinned commit: commit %s, chart version %s; want %s, 1.0.1", res.Commit, res.ChartVersion, c2)
	}
}
