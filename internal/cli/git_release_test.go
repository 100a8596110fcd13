package cli

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

const gitCommitA, gitCommitB = "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98"

// createGitRelease creates a Release of a chart from Git with two Renders, of
// gitCommitA and gitCommitB, and the status the controller writes for them: the
// current render at gitCommitB, the last successful at gitCommitA.
func createGitRelease(t *testing.T, ns, name string) {
	t.Helper()
	r := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.ReleaseSpec{Chart: v1.ChartSource{Git: &v1.GitChartSource{
			URL: "https://git.example.com/platform/charts.git", Ref: v1.GitRef{Branch: "main"}, Path: "charts/podinfo",
		}}},
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource("releases").Body(r).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating Release %s/%s: %v", ns, name, err)
	}
	for ref, commit := range map[string]string{refA: gitCommitA, refB: gitCommitB} {
		rd := &v1.Render{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1.RenderRef(ref).RenderName(name), Labels: map[string]string{v1.LabelRelease: name}},
			RenderRef:  ref, Release: name, Chart: v1.RenderChart{Name: "podinfo", Version: "6.7.1", Commit: commit}, ObjectCount: 1,
			Manifests: gz(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: podinfo\n  namespace: "+ns+"\n"),
		}
		if err := admin(t).rest.Post().Namespace(ns).Resource("renders").Body(rd).Do(testCtx(t)).Error(); err != nil {
			t.Fatalf("creating Render: %v", err)
		}
	}
	writeStatus(t, ns, name, func(r *v1.Release) {
		r.Status.Render = &v1.RenderStatus{Ref: refB, ChartVersion: "6.7.1", Commit: gitCommitB}
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: refA, ChartVersion: "6.7.1", Commit: gitCommitA}
	})
}

// kubectl convoy release history and release status of a Release of a chart from
// Git, against the API server: history has a COMMIT column with each Render's
// commit, status names the folder, repository and ref and the commits of the
// current and last successful renders.
func TestGitReleaseHistoryAndStatusShowCommits(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createGitRelease(t, ns, "podinfo")

	res := plugin(t, nil, "release", "history", "podinfo", "-n", ns)
	if res.code != 0 {
		t.Fatalf("history: exit %d stderr %s", res.code, res.stderr)
	}
	lines := strings.Split(res.stdout, "\n")
	if !strings.Contains(lines[0], "COMMIT") {
		t.Errorf("history has no COMMIT column:\n%s", res.stdout)
	}
	for ref, commit := range map[string]string{refA: ShortCommit(gitCommitA), refB: ShortCommit(gitCommitB)} {
		found := false
		for _, l := range lines {
			found = found || strings.Contains(l, ShortRef(ref)) && strings.Contains(l, commit)
		}
		if !found {
			t.Errorf("history has no row of render %s at commit %s:\n%s", ShortRef(ref), commit, res.stdout)
		}
	}

	res = plugin(t, nil, "release", "status", "podinfo", "-n", ns)
	if res.code != 0 {
		t.Fatalf("status: exit %d stderr %s", res.code, res.stderr)
	}
	for _, want := range []string{
		"charts/podinfo of https://git.example.com/platform/charts.git at branch main",
		"chart 6.7.1 at commit " + ShortCommit(gitCommitB),
		"chart 6.7.1 at commit " + ShortCommit(gitCommitA),
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("status does not say %q:\n%s", want, res.stdout)
		}
	}
}

// The UI's Release page names the Git folder, repository and ref, and shows the
// commits of the current and last successful renders and of each Render in the
// history short, with the full hash on hover (title).
func TestUIBrowserGitSourceAndCommits(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createGitRelease(t, ns, "podinfo")
	base := startUI(t, "-n", ns)
	ctx := browser(t)
	run(t, ctx, "open the Release", chromedp.Navigate(base+"#/releases/"+ns+"/podinfo"),
		textIs(`[data-testid=git-source]`, "charts/podinfo of https://git.example.com/platform/charts.git at branch main"),
		textIs(`[data-testid=render-commit]`, ShortCommit(gitCommitB)),
		textIs(`[data-testid=last-successful-commit]`, ShortCommit(gitCommitA)),
		textHas(`[data-render="`+refA+`"]`, ShortCommit(gitCommitA)),
		textHas(`[data-render="`+refB+`"]`, ShortCommit(gitCommitB)))
	titles, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`['[data-testid=render-commit] abbr', '[data-testid=last-successful-commit] abbr', '[data-render="`+refA+`"] abbr'].map(s => document.querySelector(s)?.title || '')`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{gitCommitB, gitCommitA, gitCommitA}; strings.Join(titles, " ") != strings.Join(want, " ") {
		t.Errorf("the full commits on hover (title) = %q, want %q", titles, want)
	}
	screenshot(t, ctx, "release-git")
}
