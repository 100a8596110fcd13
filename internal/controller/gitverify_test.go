package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/gittest"
)

// verifiedBy verifies the chart's commit with the keys of Secret secret.
func verifiedBy(secret string) releaseOption {
	return func(r *v1.Release) {
		r.Spec.Chart.Git.Verify = &v1.GitVerification{SecretRef: v1.LocalObjectReference{Name: secret}}
	}
}

func (e *env) createKeysSecret(name string, keys ...[]byte) {
	e.t.Helper()
	var all []byte
	for _, k := range keys {
		all = append(all, k...)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}, Data: map[string][]byte{"keys": all}}
	if err := e.client.Create(e.ctx, s); err != nil {
		e.t.Fatalf("create Secret %s: %v", name, err)
	}
}

// renderCommits lists the commits of name's Render objects.
func (e *env) renderCommits(name string) []string {
	e.t.Helper()
	var out []string
	for _, r := range e.renders(name) {
		out = append(out, r.Chart.Commit)
	}
	return out
}

// TestGitVerifiedCommits: a Release with spec.chart.git.verify applies a commit a
// trusted key signed (SSH or PGP); an unsigned commit pushed on its branch is
// Applied=False VerificationFailed naming it, is never rendered (no Render of it),
// and in manual mode a /sync does not apply it; a signed commit after it is applied
// (in manual mode by that /sync, still pending).
func TestGitVerifiedCommits(t *testing.T) {
	e := newEnv(t, envOptions{})
	srv := gittest.NewServer(t, gitUser, gitPassword)
	sshKey, pgpKey := gittest.SSHKey(t), gittest.PGPKey(t, "release")
	e.createGitSecret("git-creds", srv, gitPassword)
	e.createKeysSecret("release-signers", []byte("# the release team\n"), sshKey.Public, pgpKey.Public)

	// One env for both modes: its helpers fail the test itself, so no subtests.
	for _, mode := range []string{"automatic", "manual"} {
		func() {
			name := "v-" + mode
			repo := srv.Repo(t, "charts-"+mode)
			c1 := repo.SignedCommit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil), sshKey)
			opts := []releaseOption{fromGit(srv.RepoURL("charts-"+mode), "web", "main"), verifiedBy("release-signers")}
			if mode == "automatic" {
				opts = append(opts, automatic())
			}
			e.createRelease(name, opts...)
			if mode == "manual" {
				e.waitApplied(name, "False", v1.ReasonWaitingForSync)
				e.sync(name, false)
			}
			rel := e.waitApplied(name, "True", v1.ReasonApplied)
			if rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.Commit != c1 {
				t.Fatalf("%s: lastSuccessful = %+v, want the signed commit %s", name, rel.Status.LastSuccessful, c1)
			}
			if cm := e.configMap(name + "-web"); cm == nil || cm.Data["version"] != "1.0.0" {
				t.Fatalf("ConfigMap %s-web = %+v, want version 1.0.0", name, cm)
			}

			c2 := repo.Commit(t, "main", "web 2.0.0, unsigned", gittest.Chart("web", "web", "2.0.0", nil))
			rel = e.waitApplied(name, "False", v1.ReasonVerificationFailed)
			msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message
			for _, s := range []string{"commit " + c2[:12], "NoSignature", "release-signers"} {
				if !strings.Contains(msg, s) {
					t.Errorf("%s: Applied message %q does not say %q", name, msg, s)
				}
			}
			if mode == "manual" {
				e.sync(name, false)
			}
			e.consistently(name+": the unsigned commit neither rendered nor applied", 3*time.Second, func() (bool, string) {
				rel := e.release(name)
				cm := e.configMap(name + "-web")
				c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
				commits := e.renderCommits(name)
				ok := cm != nil && cm.Data["version"] == "1.0.0" && rel.Status.LastSuccessful.Commit == c1 &&
					c != nil && c.Reason == v1.ReasonVerificationFailed && len(commits) == 1 && commits[0] == c1
				return ok, fmt.Sprintf("ConfigMap %+v, lastSuccessful %+v, Applied %+v, Renders of commits %v", cm, rel.Status.LastSuccessful, c, commits)
			})

			// In manual mode the /sync made on the unsigned commit applied nothing and
			// stays pending: it applies the render current when it is handled (a plain
			// /sync approves no render in particular), the signed commit's.
			c3 := repo.SignedCommit(t, "main", "web 2.0.1", gittest.Chart("web", "web", "2.0.1", nil), pgpKey)
			e.eventually(name+": the signed commit after it applied", func() (bool, string) {
				rel := e.release(name)
				cm := e.configMap(name + "-web")
				ok := rel.Status.LastSuccessful != nil && rel.Status.LastSuccessful.Commit == c3 && cm != nil && cm.Data["version"] == "2.0.1"
				return ok, fmt.Sprintf("lastSuccessful %+v, ConfigMap %+v: %s", rel.Status.LastSuccessful, cm, appliedMessage(rel))
			})
		}()
	}
}

// TestRequireVerifiedChartsGit: with --require-verified-charts, a Release of a chart
// from Git without spec.chart.git.verify is refused (VerificationFailed, told to set
// spec.chart.git.verify), nothing of it rendered or applied; one with it, on a commit a
// trusted key signed, is applied and status.render.verified names the provider git
// and the key.
func TestRequireVerifiedChartsGit(t *testing.T) {
	e := newEnv(t, envOptions{requireVerifiedCharts: true})
	srv := gittest.NewServer(t, gitUser, gitPassword)
	key := gittest.PGPKey(t, "release")
	e.createGitSecret("git-creds", srv, gitPassword)
	e.createKeysSecret("release-signers", key.Public)
	repo := srv.Repo(t, "charts")
	signed := repo.SignedCommit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil), key)

	e.createRelease("unverified", automatic(), fromGit(srv.RepoURL("charts"), "web", "main"))
	rel := e.waitApplied("unverified", "False", v1.ReasonVerificationFailed)
	msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message
	for _, s := range []string{"verification is required", "set spec.chart.git.verify"} {
		if !strings.Contains(msg, s) {
			t.Errorf("Applied message %q does not say %q", msg, s)
		}
	}

	e.createRelease("verified", automatic(), fromGit(srv.RepoURL("charts"), "web", "main"), verifiedBy("release-signers"))
	rel = e.waitApplied("verified", "True", v1.ReasonApplied)
	if rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.Commit != signed {
		t.Errorf("lastSuccessful = %+v, want the signed commit %s", rel.Status.LastSuccessful, signed)
	}
	if v := rel.Status.Render.Verified; v == nil || v.Provider != "git" || v.Identity != key.Fingerprint {
		t.Errorf("status.render.verified = %+v, want git and the key %s", v, key.Fingerprint)
	}
	if cm := e.configMap("verified-web"); cm == nil || cm.Data["version"] != "1.0.0" {
		t.Errorf("ConfigMap verified-web = %+v, want version 1.0.0 applied", cm)
	}

	// The refused Release has stayed refused meanwhile (it reconciles every second).
	e.consistently("the unverified Release neither rendered nor applied", 2*time.Second, func() (bool, string) {
		rel := e.release("unverified")
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		ok := c != nil && c.Reason == v1.ReasonVerificationFailed && rel.Status.Render == nil &&
			len(e.renders("unverified")) == 0 && e.configMap("unverified-web") == nil
		return ok, fmt.Sprintf("Applied %+v, render %+v, %d Renders", c, rel.Status.Render, len(e.renders("unverified")))
	})
}
