package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/render/gittest"
)

const (
	gitUser     = "deploy"
	gitPassword = "s3cret-git-password"
)

// gitRelease is a Release of the chart in folder path of repoURL at ref, with a
// 5 minute interval.
func gitRelease(name, repoURL, path string, ref v1alpha1.GitRef) *v1alpha1.Release {
	rel := testRelease(name, "", "")
	rel.Spec.Chart = v1alpha1.ChartSource{Git: &v1alpha1.GitChartSource{URL: repoURL, Ref: ref, Path: path}}
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: 5 * time.Minute}
	return rel
}

func gitCreds(s *gittest.Server) *Credentials {
	return &Credentials{Username: gitUser, Password: gitPassword, CA: s.CA()}
}

func renderGit(t *testing.T, r *renderer, rel *v1alpha1.Release, creds *Credentials) (*Result, error) {
	t.Helper()
	return r.Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps, Credentials: creds})
}

func configMapVersion(t *testing.T, res *Result) string {
	t.Helper()
	if len(res.Objects) != 1 {
		t.Fatalf("objects = %v, want one ConfigMap", ids(res.Objects))
	}
	v, _, _ := unstructured.NestedString(res.Objects[0].Unstructured.Object, "data", "version")
	return v
}

func TestGitRefsSelectTheCommit(t *testing.T) {
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	c1 := repo.Commit(t, "main", "1.0.0", gittest.Chart("charts/web", "web", "1.0.0", nil))
	repo.Tag(t, "v1.0.0", c1, true)
	c2 := repo.Commit(t, "main", "1.1.0", gittest.Chart("charts/web", "web", "1.1.0", nil))
	repo.Tag(t, "v1.1.0", c2, false)
	c3 := repo.Commit(t, "main", "2.0.0-rc.1", gittest.Chart("charts/web", "web", "2.0.0-rc.1", nil))
	repo.Tag(t, "v2.0.0-rc.1", c3, false)
	c4 := repo.Commit(t, "main", "2.0.0", gittest.Chart("charts/web", "web", "2.0.0", nil))
	repo.Tag(t, "2.0.0", c4, true)

	cases := map[string]struct {
		ref     v1alpha1.GitRef
		commit  string
		version string
	}{
		"branch tip":                      {ref: v1alpha1.GitRef{Branch: "main"}, commit: c4, version: "2.0.0"},
		"annotated tag":                   {ref: v1alpha1.GitRef{Tag: "v1.0.0"}, commit: c1, version: "1.0.0"},
		"lightweight tag":                 {ref: v1alpha1.GitRef{Tag: "v1.1.0"}, commit: c2, version: "1.1.0"},
		"semver range":                    {ref: v1alpha1.GitRef{Semver: ">=1.0.0 <2.0.0"}, commit: c2, version: "1.1.0"},
		"semver, highest":                 {ref: v1alpha1.GitRef{Semver: "*"}, commit: c4, version: "2.0.0"},
		"semver, pre-releases when asked": {ref: v1alpha1.GitRef{Semver: ">=2.0.0-0 <2.0.0"}, commit: c3, version: "2.0.0-rc.1"},
		"commit":                          {ref: v1alpha1.GitRef{Commit: c1}, commit: c1, version: "1.0.0"},
	}
	r, _ := testRenderer(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := renderGit(t, r, gitRelease("web", srv.RepoURL("charts"), "charts/web", tc.ref), gitCreds(srv))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.commit, res.Commit); diff != "" {
				t.Errorf("commit (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.version, res.ChartVersion); diff != "" {
				t.Errorf("chart version (-want +got):\n%s", diff)
			}
			if got := configMapVersion(t, res); got != tc.version {
				t.Errorf("rendered version = %q, want %q", got, tc.version)
			}
		})
	}
}

func TestGitOneListingPerRepositoryAndInterval(t *testing.T) {
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	c1 := repo.Commit(t, "main", "web 1.0.0", gittest.Chart("charts/web", "web", "1.0.0", nil))
	repo.Commit(t, "main", "api 1.0.0", gittest.Chart("charts/api", "api", "1.0.0", nil))
	r, clk := testRenderer(t)

	renderAll := func() []*Result {
		var out []*Result
		for i := range 10 {
			path := "charts/web"
			if i%2 == 1 {
				path = "charts/api"
			}
			res, err := renderGit(t, r, gitRelease("r"+string(rune('a'+i)), srv.RepoURL("charts"), path, v1alpha1.GitRef{Branch: "main"}), gitCreds(srv))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res)
		}
		return out
	}
	first := renderAll()
	// One listing, then one fetch of the one commit (its own advertisement and pack).
	want := map[string]int{"GET info/refs": 2, "POST git-upload-pack": 1}
	if diff := cmp.Diff(want, srv.Requests()); diff != "" {
		t.Fatalf("requests after 10 Releases of one commit (-want +got):\n%s", diff)
	}
	clk.Step(4 * time.Minute)
	renderAll()
	if diff := cmp.Diff(want, srv.Requests()); diff != "" {
		t.Fatalf("requests within the interval (-want +got):\n%s", diff)
	}
	clk.Step(time.Minute)
	again := renderAll()
	want["GET info/refs"]++
	if diff := cmp.Diff(want, srv.Requests()); diff != "" {
		t.Fatalf("requests after the interval, same commit (-want +got):\n%s", diff)
	}
	for i := range first {
		if first[i].Inputs != again[i].Inputs {
			t.Errorf("Release %d: the same commit gave other inputs: %s, then %s", i, first[i].Inputs, again[i].Inputs)
		}
	}

	c3 := repo.Commit(t, "main", "web 1.1.0", gittest.Chart("charts/web", "web", "1.1.0", nil))
	clk.Step(5 * time.Minute)
	moved := renderAll()
	want["GET info/refs"] += 2
	want["POST git-upload-pack"]++
	if diff := cmp.Diff(want, srv.Requests()); diff != "" {
		t.Fatalf("requests after a new commit (-want +got):\n%s", diff)
	}
	if moved[0].Commit != c3 || moved[0].ChartVersion != "1.1.0" {
		t.Errorf("after the branch moved: commit %s chart %s, want %s 1.1.0", moved[0].Commit, moved[0].ChartVersion, c3)
	}
	if moved[1].Commit != c3 || moved[1].Inputs == first[1].Inputs {
		t.Errorf("a new commit must be new inputs even where the chart did not change (commit %s)", moved[1].Commit)
	}
	if first[0].Commit == c1 {
		t.Errorf("the first render took commit %s, before the tip", c1)
	}
}

func TestGitForcePushedBranchAndVanishedCommit(t *testing.T) {
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	c1 := repo.Commit(t, "main", "1.0.0", gittest.Chart("", "web", "1.0.0", nil))
	c2 := repo.Commit(t, "main", "1.1.0", gittest.Chart("", "web", "1.1.0", nil))
	r, clk := testRenderer(t)
	rel := gitRelease("web", srv.RepoURL("charts"), "", v1alpha1.GitRef{Branch: "main"})
	res, err := renderGit(t, r, rel, gitCreds(srv))
	if err != nil || res.Commit != c2 {
		t.Fatalf("before the force push: commit %v, %v; want %s", res, err, c2)
	}

	repo.SetBranch(t, "main", c1) // git push --force origin c1:main
	clk.Step(5 * time.Minute)
	res, err = renderGit(t, r, rel, gitCreds(srv))
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit != c1 || res.ChartVersion != "1.0.0" {
		t.Errorf("after the force push: commit %s chart %s, want %s 1.0.0", res.Commit, res.ChartVersion, c1)
	}

	// c2 is now reachable from no ref: a Release pinned to it cannot be fetched
	// (a fresh cache; a cached commit stays usable, it cannot change).
	pinned := gitRelease("pinned", srv.RepoURL("charts"), "", v1alpha1.GitRef{Commit: c2})
	if res, err := renderGit(t, r, pinned, gitCreds(srv)); err != nil || res.Commit != c2 {
		t.Errorf("a cached commit: %v, %v; want it rendered", res, err)
	}
	cold, _ := testRenderer(t)
	_, err = renderGit(t, cold, pinned, gitCreds(srv))
	if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady || !strings.Contains(err.Error(), "not our ref "+c2) {
		t.Errorf("a vanished commit: %v, want SourceNotReady with the remote's message", err)
	}

	// A branch that is deleted.
	repo.SetBranch(t, "other", c1)
	repo.DeleteBranch(t, "main")
	clk.Step(5 * time.Minute)
	_, err = renderGit(t, r, rel, gitCreds(srv))
	if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady || !strings.Contains(err.Error(), `no branch "main"`) {
		t.Errorf("a deleted branch: %v, want SourceNotReady", err)
	}
}

func TestGitErrorsAreSourceNotReadyWithoutCredentials(t *testing.T) {
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	files := gittest.Chart("charts/web", "web", "1.0.0", nil)
	files["docs/README.md"] = "# docs\n"
	repo.Commit(t, "main", "charts", files)
	url := srv.RepoURL("charts")
	cases := map[string]struct {
		rel    *v1alpha1.Release
		creds  *Credentials
		reason string
		says   string
	}{
		"wrong password": {rel: gitRelease("a", url, "charts/web", v1alpha1.GitRef{Branch: "main"}),
			creds:  &Credentials{Username: gitUser, Password: "wrong-password", CA: srv.CA()},
			reason: v1alpha1.ReasonSourceNotReady, says: "check the credentials of spec.chart.git.secretRef"},
		"no credentials": {rel: gitRelease("a", url, "charts/web", v1alpha1.GitRef{Branch: "main"}),
			creds: &Credentials{CA: srv.CA()}, reason: v1alpha1.ReasonSourceNotReady, says: "authentication required"},
		"untrusted certificate": {rel: gitRelease("a", url, "charts/web", v1alpha1.GitRef{Branch: "main"}),
			creds: &Credentials{Username: gitUser, Password: gitPassword}, reason: v1alpha1.ReasonSourceNotReady, says: "certificate"},
		"no repository": {rel: gitRelease("a", srv.RepoURL("nope"), "charts/web", v1alpha1.GitRef{Branch: "main"}),
			creds: gitCreds(srv), reason: v1alpha1.ReasonSourceNotReady, says: "repository not found"},
		"no tag": {rel: gitRelease("a", url, "charts/web", v1alpha1.GitRef{Tag: "v9"}),
			creds: gitCreds(srv), reason: v1alpha1.ReasonSourceNotReady, says: `no tag "v9"`},
		"no tag in range": {rel: gitRelease("a", url, "charts/web", v1alpha1.GitRef{Semver: "^1"}),
			creds: gitCreds(srv), reason: v1alpha1.ReasonSourceNotReady, says: "no tag in the range"},
		"path not a chart": {rel: gitRelease("a", url, "docs", v1alpha1.GitRef{Branch: "main"}),
			creds: gitCreds(srv), reason: v1alpha1.ReasonSourceNotReady, says: "folder docs at commit"},
		"no such path": {rel: gitRelease("a", url, "charts/nope", v1alpha1.GitRef{Branch: "main"}),
			creds: gitCreds(srv), reason: v1alpha1.ReasonSourceNotReady, says: `has no folder "charts/nope"`},
		"file:// not allowed": {rel: gitRelease("a", "file:///srv/git/charts", "", v1alpha1.GitRef{Branch: "main"}),
			reason: v1alpha1.ReasonUnsupported, says: "--allow-git-file-urls"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, _ := testRenderer(t)
			_, err := renderGit(t, r, tc.rel, tc.creds)
			if got := reasons.Of(err, ""); got != tc.reason {
				t.Fatalf("reason = %q, want %q (%v)", got, tc.reason, err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
			for _, secret := range []string{gitPassword, "wrong-password"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a password: %v", err)
				}
			}
		})
	}
}

func TestGitChartAsHelmPackageTakesIt(t *testing.T) {
	srv := gittest.NewServer(t, "", "")
	repo := srv.Repo(t, "charts")
	extra := map[string]string{
		".helmignore":                          "ignored/\n*.bak\n",
		"ignored/broken.yaml":                  "{{ this is not a template",
		"templates/old.yaml.bak":               "{{ nor is this",
		"charts/db/Chart.yaml":                 "apiVersion: v2\nname: db\nversion: 0.1.0\n",
		"charts/db/templates/secret.yaml":      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-db\n",
		"Chart.yaml.orig":                      "ignored by nothing, harmless",
		"templates/_helpers.tpl":               "{{- define \"x\" }}x{{ end }}",
		"README.md":                            "# web\n",
		"templates/tests/.keep":                "",
		"ci/values.yaml":                       "greeting: ci\n",
		"files/config.txt":                     "a file\n",
		"templates/NOTES.txt":                  "notes\n",
		"charts/db/values.yaml":                "{}\n",
		"charts/db/templates/_helpers.tpl":     "",
		"charts/db/templates/.helmignore.test": "",
	}
	for k, v := range extra {
		if v == "" {
			delete(extra, k)
		}
	}
	files := gittest.Chart("charts/web", "web", "1.0.0", extra)
	files["charts/web/Chart.yaml"] += "dependencies:\n- name: db\n  version: 0.1.0\n"
	repo.Commit(t, "main", "web with db", files)
	r, _ := testRenderer(t)
	rel := gitRelease("web", srv.RepoURL("charts"), "charts/web", v1alpha1.GitRef{Branch: "main"})
	res, err := renderGit(t, r, rel, &Credentials{CA: srv.CA()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Secret apps/web-db@0", "ConfigMap apps/web-web@0"}, ids(res.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}

	// A dependency listed but not vendored: Unsupported, as for an archive.
	files["charts/web/Chart.yaml"] += "- name: cache\n  version: 1.0.0\n  repository: https://charts.example.com\n"
	repo.Commit(t, "main", "web with cache", map[string]string{"charts/web/Chart.yaml": files["charts/web/Chart.yaml"]})
	r2, _ := testRenderer(t)
	_, err = renderGit(t, r2, rel, &Credentials{CA: srv.CA()})
	if reasons.Of(err, "") != v1alpha1.ReasonUnsupported || !strings.Contains(err.Error(), `"cache" 1.0.0`) {
		t.Errorf("a missing dependency: %v, want Unsupported naming it", err)
	}
}

func TestResolveGitRef(t *testing.T) {
	h := func(c byte) plumbing.Hash { return plumbing.NewHash(strings.Repeat(string(c), 40)) }
	refs := []*plumbing.Reference{
		plumbing.NewHashReference("refs/heads/main", h('1')),
		plumbing.NewHashReference("refs/tags/v1.0.0", h('a')), // annotated: the tag object
		plumbing.NewHashReference("refs/tags/v1.0.0^{}", h('2')),
		plumbing.NewHashReference("refs/tags/v1.2.0", h('3')),
		plumbing.NewHashReference("refs/tags/release-candidate", h('4')),
		plumbing.NewSymbolicReference("HEAD", "refs/heads/main"),
	}
	cases := map[string]struct {
		ref     v1alpha1.GitRef
		commit  string
		refName string
		err     string
	}{
		"branch":           {ref: v1alpha1.GitRef{Branch: "main"}, commit: h('1').String(), refName: "refs/heads/main"},
		"peeled tag":       {ref: v1alpha1.GitRef{Tag: "v1.0.0"}, commit: h('2').String(), refName: "refs/tags/v1.0.0"},
		"semver":           {ref: v1alpha1.GitRef{Semver: "~1.0"}, commit: h('2').String(), refName: "refs/tags/v1.0.0"},
		"semver highest":   {ref: v1alpha1.GitRef{Semver: ">=1"}, commit: h('3').String(), refName: "refs/tags/v1.2.0"},
		"commit":           {ref: v1alpha1.GitRef{Commit: h('9').String()}, commit: h('9').String()},
		"no branch":        {ref: v1alpha1.GitRef{Branch: "dev"}, err: `no branch "dev"`},
		"no tag in range":  {ref: v1alpha1.GitRef{Semver: "^2"}, err: "tags: release-candidate, v1.0.0, v1.2.0"},
		"semver not range": {ref: v1alpha1.GitRef{Semver: "newest"}, err: "not a semver range"},
		"nothing":          {err: "names no branch"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			commit, refName, err := resolveGitRef(refs, tc.ref)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one that says %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.commit, tc.refName}, []string{commit, refName}); diff != "" {
				t.Errorf("commit, ref (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommitStoreEvictsTheLeastRecentlyUsed(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	s := newCommitStore(dir, 2500, clk)
	add := func(name string) {
		t.Helper()
		clk.Step(time.Second)
		if _, err := s.add(name, func(d string) (string, error) {
			return name, os.WriteFile(filepath.Join(d, "pack"), make([]byte, 1000), 0o644)
		}); err != nil {
			t.Fatal(err)
		}
	}
	add("a")
	add("b")
	clk.Step(time.Second)
	if !s.has("a") { // a is now used more recently than b
		t.Fatal("a is not stored")
	}
	add("c") // 3000 bytes > 2500: b goes
	var got []string
	for _, n := range []string{"a", "b", "c"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			got = append(got, n)
		}
	}
	if diff := cmp.Diff([]string{"a", "c"}, got); diff != "" {
		t.Errorf("commits on disk (-want +got):\n%s", diff)
	}
	// A new process finds what is on disk.
	again := newCommitStore(dir, 2500, clk)
	if !again.has("c") || again.has("b") {
		t.Error("a new store does not find the commits on disk")
	}
}

func TestGitOverSSH(t *testing.T) {
	srv := gittest.NewServer(t, gitUser, gitPassword)
	sshSrv := gittest.NewSSHServer(t, srv)
	other := gittest.NewSSHServer(t, srv) // another host key, another accepted identity
	repo := srv.Repo(t, "platform/charts")
	c1 := repo.Commit(t, "main", "web 1.0.0", gittest.Chart("charts/web", "web", "1.0.0", nil))
	repo.Tag(t, "v1.0.0", c1, true)
	url := sshSrv.RepoURL("platform/charts")

	r, clk := testRenderer(t)
	creds := &Credentials{Identity: sshSrv.Identity, KnownHosts: sshSrv.KnownHosts}
	for _, ref := range []v1alpha1.GitRef{{Branch: "main"}, {Tag: "v1.0.0"}, {Semver: "^1"}} {
		res, err := renderGit(t, r, gitRelease("web", url, "charts/web", ref), creds)
		if err != nil {
			t.Fatalf("%+v: %v", ref, err)
		}
		if res.Commit != c1 || configMapVersion(t, res) != "1.0.0" {
			t.Errorf("%+v: commit %s, want %s", ref, res.Commit, c1)
		}
	}
	if got := sshSrv.Execs(); got != 2 {
		t.Errorf("the ssh server ran %d git-upload-pack, want 2: one listing, one fetch", got)
	}
	c2 := repo.Commit(t, "main", "web 1.1.0", gittest.Chart("charts/web", "web", "1.1.0", nil))
	clk.Step(5 * time.Minute)
	if res, err := renderGit(t, r, gitRelease("web", url, "charts/web", v1alpha1.GitRef{Branch: "main"}), creds); err != nil || res.Commit != c2 {
		t.Errorf("after a new commit: %v, %v; want commit %s", res, err, c2)
	}

	cases := map[string]struct {
		creds *Credentials
		says  string
	}{
		"an identity the server does not know": {creds: &Credentials{Identity: other.Identity, KnownHosts: sshSrv.KnownHosts}, says: "unable to authenticate"},
		"another host key":                     {creds: &Credentials{Identity: sshSrv.Identity, KnownHosts: other.KnownHosts}, says: "knownhosts: key is unknown"},
		"no known_hosts":                       {creds: &Credentials{Identity: sshSrv.Identity}, says: "has no known_hosts"},
		"no identity":                          {creds: nil, says: "needs spec.chart.git.secretRef with the keys identity"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, _ := testRenderer(t)
			_, err := renderGit(t, r, gitRelease("web", url, "charts/web", v1alpha1.GitRef{Branch: "main"}), tc.creds)
			if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v, want SourceNotReady that says %q", err, tc.says)
			}
			if err != nil && strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("the error shows the identity: %v", err)
			}
		})
	}
}

// A commit hash gives no access to what another repository (or other credentials)
// put in the cache: a commit named in the spec is fetched from the Release's own
// remote once before the cache serves it.
func TestGitCachedCommitIsServedOnlyToItsRemote(t *testing.T) {
	srv := gittest.NewServer(t, gitUser, gitPassword)
	private := srv.Repo(t, "private")
	secret := private.Commit(t, "main", "private chart", gittest.Chart("", "web", "1.0.0", nil))
	srv.Repo(t, "public").Commit(t, "main", "public", gittest.Chart("", "other", "1.0.0", nil))
	r, _ := testRenderer(t)
	if _, err := renderGit(t, r, gitRelease("a", srv.RepoURL("private"), "", v1alpha1.GitRef{Branch: "main"}), gitCreds(srv)); err != nil {
		t.Fatal(err)
	}
	fetches := srv.Fetches()

	_, err := renderGit(t, r, gitRelease("b", srv.RepoURL("public"), "", v1alpha1.GitRef{Commit: secret}), gitCreds(srv))
	if reasons.Of(err, "") != v1alpha1.ReasonSourceNotReady || !strings.Contains(err.Error(), "not our ref") {
		t.Errorf("the private commit through another repository: %v, want SourceNotReady from that repository", err)
	}
	res, err := renderGit(t, r, gitRelease("c", srv.RepoURL("private"), "", v1alpha1.GitRef{Commit: secret}), gitCreds(srv))
	if err != nil || res.Commit != secret {
		t.Fatalf("the commit through its own repository: %v, %v", res, err)
	}
	if got := srv.Fetches() - fetches; got != 1 {
		t.Errorf("%d fetches after the first render, want 1 (the refused one; its own remote's commit is cached)", got)
	}
}

// A file:// repository (when the operator allows it) is read in place, without a git
// binary; a new commit is seen at once.
func TestGitFileRepositoryWhenAllowed(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	commit := func(version string) string {
		t.Helper()
		for path, content := range gittest.Chart("charts/web", "web", version, nil) {
			full := filepath.Join(dir, path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := wt.AddGlob("charts"); err != nil {
			t.Fatal(err)
		}
		h, err := wt.Commit(version, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
	c1 := commit("1.0.0")
	r, err := newRenderer(Options{CacheDir: t.TempDir(), AllowGitFileURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	rel := gitRelease("web", "file://"+dir, "charts/web", v1alpha1.GitRef{Branch: "master"})
	res, err := renderGit(t, r, rel, nil)
	if err != nil || res.Commit != c1 || res.ChartVersion != "1.0.0" {
		t.Fatalf("file:// repository: %+v, %v; want commit %s", res, err, c1)
	}
	c2 := commit("1.1.0")
	if res, err := renderGit(t, r, rel, nil); err != nil || res.Commit != c2 || res.ChartVersion != "1.1.0" {
		t.Errorf("after a new commit: %+v, %v; want commit %s", res, err, c2)
	}
}

// Releases rendered at the same time share one listing and one fetch.
func TestGitConcurrentRendersShareOneListingAndOneFetch(t *testing.T) {
	srv := gittest.NewServer(t, gitUser, gitPassword)
	c1 := srv.Repo(t, "charts").Commit(t, "main", "web", gittest.Chart("charts/web", "web", "1.0.0", nil))
	r, _ := testRenderer(t)
	errs := make(chan error, 20)
	for i := range 20 {
		go func() {
			res, err := renderGit(t, r, gitRelease(fmt.Sprintf("r%d", i), srv.RepoURL("charts"), "charts/web", v1alpha1.GitRef{Branch: "main"}), gitCreds(srv))
			if err == nil && res.Commit != c1 {
				err = fmt.Errorf("commit %s, want %s", res.Commit, c1)
			}
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	want := map[string]int{"GET info/refs": 2, "POST git-upload-pack": 1}
	if diff := cmp.Diff(want, srv.Requests()); diff != "" {
		t.Errorf("requests of 20 concurrent renders (-want +got):\n%s", diff)
	}
}
