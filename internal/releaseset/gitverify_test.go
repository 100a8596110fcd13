package releaseset_test

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
	"kumodo.io/convoy/internal/testenv"
)

// TestSetSourceNeverResolvesToAnUnsignedCommit: a ReleaseSet whose template's chart
// from Git has verify resolves its branch to the signed tip; an unsigned commit
// pushed on the branch leaves status.source at the signed one, and Progressing says
// why (the commit and NoSignature); the next signed commit is resolved.
func TestSetSourceNeverResolvesToAnUnsignedCommit(t *testing.T) {
	f := newFleet(t, map[string]map[string]string{"a": nil})
	srv := gittest.NewServer(t, "deploy", "s3cret-git-password")
	repo := srv.Repo(t, "charts")
	signer := gittest.SSHKey(t)
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "git-creds"},
		Data: map[string][]byte{"username": []byte("deploy"), "password": []byte("s3cret-git-password"), "caFile": srv.CA()}})
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "release-signers"},
		Data: map[string][]byte{"keys": signer.Public}})
	c1 := repo.SignedCommit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil), signer)

	set := f.stagedSet("signed", `{}`)
	set.Spec.Template.Spec.Chart = v1.ChartSource{Git: &v1.GitChartSource{
		URL: srv.RepoURL("charts"), Ref: v1.GitRef{Branch: "main"}, Path: "web",
		SecretRef: &v1.LocalObjectReference{Name: "git-creds"},
		Verify:    &v1.GitVerification{SecretRef: v1.LocalObjectReference{Name: "release-signers"}},
	}}
	set.Spec.Template.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Second}
	f.create(set)
	sourceIs := func(commit string) func() (bool, string) {
		return func() (bool, string) {
			s := f.set("signed")
			return s.Status.Source != nil && s.Status.Source.Commit == commit, fmt.Sprintf("status.source %+v, conditions %s", s.Status.Source, conditions(s.Status.Conditions))
		}
	}
	testenv.Eventually(t, f.ctx, "the signed commit resolved", 90*time.Second, sourceIs(c1))

	c2 := repo.Commit(t, "main", "web 2.0.0, unsigned", gittest.Chart("web", "web", "2.0.0", nil))
	testenv.Eventually(t, f.ctx, "the unsigned commit refused", 90*time.Second, func() (bool, string) {
		s := f.set("signed")
		c := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionProgressing)
		ok := c != nil && strings.Contains(c.Message, "commit "+c2[:12]) && strings.Contains(c.Message, "NoSignature")
		return ok, fmt.Sprintf("status.source %+v, conditions %s", s.Status.Source, conditions(s.Status.Conditions))
	})
	testenv.Consistently(t, f.ctx, "status.source kept at the signed commit", 3*time.Second, sourceIs(c1))

	c3 := repo.SignedCommit(t, "main", "web 2.0.1", gittest.Chart("web", "web", "2.0.1", nil), signer)
	testenv.Eventually(t, f.ctx, "the next signed commit resolved", 90*time.Second, sourceIs(c3))
}
