package receiver_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/receiver"
	"kumodo.io/convoy/internal/releaseset"
	"kumodo.io/convoy/internal/render/charttest"
	"kumodo.io/convoy/internal/render/gittest"
	"kumodo.io/convoy/internal/testenv"
)

// harborPush is the body Harbor posts for an artifact pushed to project charts,
// repository web, with tag.
func harborPush(host, tag string) []byte {
	return []byte(fmt.Sprintf(`{"type":"PUSH_ARTIFACT","occur_at":1765159445,"operator":"robot$ci",`+
		`"event_data":{"resources":[{"digest":"sha256:3b7f0e1c","tag":%q,"resource_url":"%s/charts/web:%s"}],`+
		`"repository":{"date_created":1765100000,"name":"web","namespace":"charts","repo_full_name":"charts/web","repo_type":"private"}}}`,
		tag, host, tag))
}

func chartVersion(rel *v1.Release) string {
	if rel.Status.Render == nil {
		return ""
	}
	return rel.Status.Render.ChartVersion
}

// A Harbor webhook (PUSH_ARTIFACT, the Auth Header sent as Authorization) makes a
// Release of an OCI chart with a version range, reconciled every hour, render the
// newly pushed version within seconds; a call with another Authorization is refused
// and refreshes nothing.
func TestHarborPushRendersTheNewChartVersion(t *testing.T) {
	e, _ := newEnv(t, receiver.Options{})
	reg := charttest.NewOCIRegistry(t)
	push := func(version string) {
		reg.Push(t, "charts", charttest.RawArchive(t, "web", "apiVersion: v2\nname: web\nversion: "+version+"\n"))
	}
	push("1.0.0")
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: v1.ReleaseSpec{
			Chart:      v1.ChartSource{Repository: reg.Repository("charts"), Name: "web", Version: ">=1.0.0 <2.0.0"},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(true), Interval: &metav1.Duration{Duration: hour}},
		},
	}
	if err := e.client.Create(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	e.waitApplied("web", "True", v1.ReasonApplied)
	if v := chartVersion(e.release("web")); v != "1.0.0" {
		t.Fatalf("chart version %q rendered, want 1.0.0", v)
	}
	token := []byte("harbor-auth-header")
	e.createReceiver("harbor", v1.ReceiverHarbor, "harbor-token", token)
	path := e.waitReady("harbor", "True", v1.ReasonServing).Status.WebhookPath
	e.waitServed(path)

	push("1.1.0")
	push("2.0.0") // out of the range
	// Another Authorization: 401, nothing read.
	if code, msg := e.call(path, harborPush(reg.Host, "1.1.0"), map[string]string{"Authorization": "Basic aGFyYm9yOnNlY3JldA==", "Content-Type": "application/json"}); code != http.StatusUnauthorized {
		t.Errorf("a wrong Authorization: %d %s, want 401", code, msg)
	}
	testenv.Consistently(t, e.ctx, "still chart 1.0.0", 2*time.Second, func() (bool, string) {
		v := chartVersion(e.release("web"))
		return v == "1.0.0", "chart version " + v
	})

	code, msg := e.call(path, harborPush(reg.Host, "1.1.0"), map[string]string{"Authorization": string(token), "Content-Type": "application/json"})
	if code != http.StatusOK {
		t.Fatalf("Harbor's call: %d %s, want 200", code, msg)
	}
	start := time.Now()
	testenv.Eventually(t, e.ctx, "chart 1.1.0 rendered and applied", 15*time.Second, func() (bool, string) {
		r := e.release("web")
		c := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
		return chartVersion(r) == "1.1.0" && c != nil && c.Reason == v1.ReasonApplied, fmt.Sprintf("render %+v, Applied %+v", r.Status.Render, c)
	})
	t.Logf("chart 1.1.0 applied %s after Harbor's call", time.Since(start).Round(time.Millisecond))
	if lc := e.receiver("harbor").Status.LastCall; lc == nil || lc.Result != "PUSH_ARTIFACT: refreshing 1 Release and 0 ReleaseSets" {
		t.Errorf("lastCall %+v, want PUSH_ARTIFACT refreshing 1 Release", lc)
	}
	if got := e.calls(v1.ReceiverHarbor, receiver.ResultAccepted); got != 1 {
		t.Errorf("%v accepted Harbor calls counted, want 1", got)
	}
	if got := e.calls(v1.ReceiverHarbor, receiver.ResultUnauthorized); got != 1 {
		t.Errorf("%v unauthorized Harbor calls counted, want 1", got)
	}
}

// A Receiver that selects a ReleaseSet: GitLab's push (X-Gitlab-Token) makes the set,
// whose template follows a branch and is resolved every hour, resolve the newly
// pushed commit at once (status.source.commit) and roll it out: its Release renders
// and applies that commit within seconds.
func TestGitLabPushRefreshesAReleaseSet(t *testing.T) {
	e, _ := newEnv(t, receiver.Options{})
	c1 := e.repo.Commit(t, "main", "web 1.0.0", gittest.Chart("web", "web", "1.0.0", nil))
	kubeconfig, err := os.ReadFile(host.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	e.createSecret(e.ns, "kubeconfig", map[string][]byte{"value": kubeconfig})
	fleet := testenv.RandomSuffix()
	cl := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "rcv-" + fleet, Labels: map[string]string{"fleet": fleet}},
		Spec:       v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: e.ns, Name: "kubeconfig"}}},
	}
	if err := e.client.Create(e.ctx, cl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(e.ctx, cl) })
	set := &v1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "fleet", Labels: map[string]string{"app": "web"}},
		Spec: v1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": fleet}},
			Template: v1.ReleaseTemplate{Spec: v1.ReleaseSpec{
				Chart: v1.ChartSource{Git: &v1.GitChartSource{URL: e.git.RepoURL("charts"), Ref: v1.GitRef{Branch: "main"},
					Path: "web", SecretRef: &v1.LocalObjectReference{Name: "git-creds"}}},
				SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(true), Interval: &metav1.Duration{Duration: hour}},
			}},
		},
	}
	if err := e.client.Create(e.ctx, set); err != nil {
		t.Fatal(err)
	}
	relName := releaseset.ReleaseName("fleet", cl.Name)
	e.waitSetRolledOut("fleet", relName, c1, time.Minute)

	token := []byte("gl-token")
	e.createReceiver("gitlab", v1.ReceiverGitLab, "gitlab-token", token)
	path := e.waitReady("gitlab", "True", v1.ReasonServing).Status.WebhookPath
	e.waitServed(path)
	c2 := e.repo.Commit(t, "main", "web 1.1.0", gittest.Chart("web", "web", "1.1.0", nil))
	body := []byte(`{"object_kind":"push","ref":"refs/heads/main","checkout_sha":"` + c2 + `"}`)
	if code, msg := e.call(path, body, map[string]string{"X-Gitlab-Token": string(token), "X-Gitlab-Event": "Push Hook"}); code != http.StatusOK {
		t.Fatalf("GitLab's call: %d %s, want 200", code, msg)
	}
	start := time.Now()
	e.waitSetRolledOut("fleet", relName, c2, 20*time.Second)
	t.Logf("commit rolled out by the set %s after GitLab's call", time.Since(start).Round(time.Millisecond))
	if lc := e.receiver("gitlab").Status.LastCall; lc == nil || !strings.HasPrefix(lc.Result, "Push Hook: refreshing ") || !strings.HasSuffix(lc.Result, " and 1 ReleaseSet") {
		t.Errorf("lastCall %+v, want a Push Hook refreshing the ReleaseSet", lc)
	}
}

// waitSetRolledOut waits until the set resolved commit (status.source.commit) and its
// Release rel applied it.
func (e *env) waitSetRolledOut(set, rel, commit string, within time.Duration) {
	e.t.Helper()
	testenv.Eventually(e.t, e.ctx, fmt.Sprintf("ReleaseSet %s at commit %s, rolled out", set, commit), within, func() (bool, string) {
		s := &v1.ReleaseSet{}
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: set}, s); err != nil {
			return false, err.Error()
		}
		if s.Status.Source == nil || s.Status.Source.Commit != commit {
			return false, fmt.Sprintf("status.source %+v", s.Status.Source)
		}
		r := &v1.Release{}
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: rel}, r); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
		return renderCommit(r) == commit && c != nil && c.Reason == v1.ReasonApplied,
			fmt.Sprintf("Release %s: render %+v, Applied %+v", rel, r.Status.Render, c)
	})
}
