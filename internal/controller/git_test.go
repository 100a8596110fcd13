package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/gittest"
)

const (
	gitUser     = "deploy"
	gitPassword = "s3cret-git-password"
)

// fromGit takes the chart from folder path of repoURL at branch, with the Secret
// git-creds, and reconciles every second (the ref listing is as old as the interval).
func fromGit(repoURL, path, branch string) releaseOption {
	return func(r *v1.Release) {
		r.Spec.Chart = v1.ChartSource{Git: &v1.GitChartSource{
			URL: repoURL, Ref: v1.GitRef{Branch: branch}, Path: path, SecretRef: &v1.LocalObjectReference{Name: "git-creds"},
		}}
		r.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Second}
	}
}

func (e *env) createGitSecret(name string, srv *gittest.Server, password string) {
	e.t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Data:       map[string][]byte{"username": []byte(gitUser), "password": []byte(password), "caFile": srv.CA()},
	}
	if err := e.client.Create(e.ctx, s); err != nil {
		e.t.Fatalf("create Secret %s: %v", name, err)
	}
}

// TestGitChartSourceFollowsTheBranch: two Releases of one chart folder in Git are
// applied from the branch's commit, fetched once for both; a new commit on the branch
// is a new render applied with its commit in status; a force push back applies the
// earlier commit again.
func TestGitChartSourceFollowsTheBranch(t *testing.T) {
	e := newEnv(t, envOptions{})
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "platform/charts")
	c1 := repo.Commit(t, "main", "web 1.0.0", gittest.Chart("charts/web", "web", "1.0.0", nil))
	e.createGitSecret("git-creds", srv, gitPassword)

	e.createRelease("a", automatic(), fromGit(srv.RepoURL("platform/charts"), "charts/web", "main"))
	e.createRelease("b", automatic(), fromGit(srv.RepoURL("platform/charts"), "charts/web", "main"))
	for _, name := range []string{"a", "b"} {
		rel := e.waitApplied(name, "True", v1.ReasonApplied)
		if rel.Status.Render == nil || rel.Status.Render.Commit != c1 || rel.Status.Render.ChartVersion != "1.0.0" {
			t.Errorf("%s: status.render = %+v, want commit %s, chart 1.0.0", name, rel.Status.Render, c1)
		}
		if rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.Commit != c1 {
			t.Errorf("%s: status.lastSuccessful = %+v, want commit %s", name, rel.Status.LastSuccessful, c1)
		}
		if cm := e.configMap(name + "-web"); cm == nil || cm.Data["version"] != "1.0.0" {
			t.Errorf("ConfigMap %s-web = %+v, want version 1.0.0", name, cm)
		}
	}
	if got := srv.Fetches(); got != 1 {
		t.Errorf("the Git server sent %d packs for two Releases of one commit, want 1", got)
	}
	if rs := e.renders("a"); len(rs) != 1 || rs[0].Chart.Commit != c1 {
		t.Errorf("Renders of a: %+v, want one of commit %s", rs, c1)
	}

	c2 := repo.Commit(t, "main", "web 1.1.0", gittest.Chart("charts/web", "web", "1.1.0", nil))
	for _, name := range []string{"a", "b"} {
		e.eventually(name+" applied at the new commit", func() (bool, string) {
			rel := e.release(name)
			cm := e.configMap(name + "-web")
			ok := rel.Status.LastSuccessful != nil && rel.Status.LastSuccessful.Commit == c2 &&
				rel.Status.Render != nil && rel.Status.Render.Commit == c2 && cm != nil && cm.Data["version"] == "1.1.0"
			return ok, fmt.Sprintf("render %+v, lastSuccessful %+v, ConfigMap %+v: %s", rel.Status.Render, rel.Status.LastSuccessful, cm, appliedMessage(rel))
		})
	}
	if got := srv.Fetches(); got != 2 {
		t.Errorf("the Git server sent %d packs for two commits, want 2", got)
	}

	// git push --force: the branch is back at c1, whose render is reused.
	repo.SetBranch(t, "main", c1)
	e.eventually("a applied at the earlier commit", func() (bool, string) {
		rel := e.release("a")
		cm := e.configMap("a-web")
		ok := rel.Status.LastSuccessful != nil && rel.Status.LastSuccessful.Commit == c1 && cm != nil && cm.Data["version"] == "1.0.0"
		return ok, fmt.Sprintf("lastSuccessful %+v, ConfigMap %+v", rel.Status.LastSuccessful, cm)
	})
	if got := srv.Fetches(); got != 2 {
		t.Errorf("the Git server sent %d packs, want 2: c1 is cached", got)
	}
	if rs := e.renders("a"); len(rs) != 2 {
		t.Errorf("a has %d Renders, want 2 (c1's reused)", len(rs))
	}
}

// TestGitChartSourceManualMode: in manual mode a new commit is rendered (status.render
// names it) and waits for /sync; lastSuccessful keeps the commit applied.
func TestGitChartSourceManualMode(t *testing.T) {
	e := newEnv(t, envOptions{})
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	c1 := repo.Commit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil))
	e.createGitSecret("git-creds", srv, gitPassword)

	e.createRelease("m", fromGit(srv.RepoURL("charts"), "web", "main"))
	e.waitApplied("m", "False", v1.ReasonWaitingForSync)
	e.sync("m", false)
	rel := e.waitApplied("m", "True", v1.ReasonApplied)
	if rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.Commit != c1 {
		t.Fatalf("lastSuccessful = %+v, want commit %s", rel.Status.LastSuccessful, c1)
	}

	c2 := repo.Commit(t, "main", "web 1.1.0", gittest.Chart("web", "web", "1.1.0", nil))
	rel = e.waitApplied("m", "False", v1.ReasonWaitingForSync)
	if rel.Status.Render == nil || rel.Status.Render.Commit != c2 {
		t.Errorf("status.render = %+v, want the new commit %s rendered", rel.Status.Render, c2)
	}
	if rel.Status.LastSuccessful.Commit != c1 {
		t.Errorf("lastSuccessful.commit = %s before /sync, want %s", rel.Status.LastSuccessful.Commit, c1)
	}
	if cm := e.configMap("m-web"); cm == nil || cm.Data["version"] != "1.0.0" {
		t.Errorf("ConfigMap m-web = %+v before /sync, want version 1.0.0", cm)
	}
	e.sync("m", false)
	e.eventually("the new commit applied after /sync", func() (bool, string) {
		rel := e.release("m")
		cm := e.configMap("m-web")
		ok := rel.Status.LastSuccessful != nil && rel.Status.LastSuccessful.Commit == c2 && cm != nil && cm.Data["version"] == "1.1.0"
		return ok, fmt.Sprintf("lastSuccessful %+v, ConfigMap %+v: %s", rel.Status.LastSuccessful, cm, appliedMessage(rel))
	})
}

// TestGitChartSourceErrors: wrong credentials and a folder that is not a chart are
// SourceNotReady with the remote's message; the password is in no status and no event.
func TestGitChartSourceErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	files := gittest.Chart("charts/web", "web", "1.0.0", nil)
	files["docs/index.md"] = "# docs\n"
	repo.Commit(t, "main", "web", files)
	e.createGitSecret("git-creds", srv, "wrong-password")

	e.createRelease("creds", automatic(), fromGit(srv.RepoURL("charts"), "charts/web", "main"))
	rel := e.waitApplied("creds", "False", v1.ReasonSourceNotReady)
	msg := appliedMessage(rel)
	if !strings.Contains(msg, "check the credentials of spec.chart.git.secretRef") {
		t.Errorf("Applied message %q does not say to check the credentials", msg)
	}

	right := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "git-creds-ok"},
		Data: map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPassword), "caFile": srv.CA()}}
	if err := e.client.Create(e.ctx, right); err != nil {
		t.Fatal(err)
	}
	e.createRelease("docs", automatic(), fromGit(srv.RepoURL("charts"), "docs", "main"), func(r *v1.Release) {
		r.Spec.Chart.Git.SecretRef.Name = "git-creds-ok"
	})
	rel = e.waitApplied("docs", "False", v1.ReasonSourceNotReady)
	if msg := appliedMessage(rel); !strings.Contains(msg, "is not a chart") {
		t.Errorf("Applied message %q does not say the folder is not a chart", msg)
	}

	var events eventsv1.EventList
	if err := e.client.List(e.ctx, &events, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"creds", "docs"} {
		rel := e.release(name)
		for _, c := range rel.Status.Conditions {
			if strings.Contains(c.Message, "password") && (strings.Contains(c.Message, gitPassword) || strings.Contains(c.Message, "wrong-password")) {
				t.Errorf("condition %s of %s shows a password: %s", c.Type, name, c.Message)
			}
		}
	}
	for _, ev := range events.Items {
		if strings.Contains(ev.Note, gitPassword) || strings.Contains(ev.Note, "wrong-password") {
			t.Errorf("event %s shows a password: %s", ev.Reason, ev.Note)
		}
	}
}

// TestGitChartSourceOverSSH: a Release of a chart from an ssh:// repository, with the
// identity and known_hosts of its Secret, is applied at the branch's commit.
func TestGitChartSourceOverSSH(t *testing.T) {
	e := newEnv(t, envOptions{})
	srv := gittest.NewServer(t, gitUser, gitPassword)
	sshSrv := gittest.NewSSHServer(t, srv)
	c1 := srv.Repo(t, "charts").Commit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil))
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "git-creds"},
		Data:       map[string][]byte{"identity": sshSrv.Identity, "known_hosts": sshSrv.KnownHosts},
	}
	if err := e.client.Create(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	e.createRelease("s", automatic(), fromGit(sshSrv.RepoURL("charts"), "web", "main"))
	rel := e.waitApplied("s", "True", v1.ReasonApplied)
	if rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.Commit != c1 {
		t.Errorf("lastSuccessful = %+v, want commit %s", rel.Status.LastSuccessful, c1)
	}
	if cm := e.configMap("s-web"); cm == nil || cm.Data["version"] != "1.0.0" {
		t.Errorf("ConfigMap s-web = %+v, want version 1.0.0", cm)
	}
}

// TestGitChartSourceSteadyStateWritesNothing: a Release of a chart from Git whose
// branch does not move reconciles every second and writes nothing, and the Git
// server sends no pack.
func TestGitChartSourceSteadyStateWritesNothing(t *testing.T) {
	counter := &requestCounter{}
	e := newEnv(t, envOptions{requests: counter})
	srv := gittest.NewServer(t, gitUser, gitPassword)
	srv.Repo(t, "charts").Commit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil))
	e.createGitSecret("git-creds", srv, gitPassword)
	e.createRelease("steady", automatic(), fromGit(srv.RepoURL("charts"), "web", "main"))
	e.waitApplied("steady", "True", v1.ReasonApplied)
	fetches := srv.Fetches()
	for _, line := range e.steadyRequests(counter, "steady") {
		// Automatic mode's drift check is a dry run.
		if !strings.HasPrefix(line, "GET ") && !strings.Contains(line, "dryRun=All") {
			t.Errorf("a steady reconcile wrote: %s", line)
		}
	}
	if got := srv.Fetches(); got != fetches {
		t.Errorf("the Git server sent %d packs in the steady state, want none", got-fetches)
	}
}
