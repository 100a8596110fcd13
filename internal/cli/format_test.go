package cli

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

var plain = Terminal{}

func releases() []v1.Release {
	return []v1.Release{
		*testRelease("team-a", "podinfo", rendered(refB, "6.7.1"), lastSuccessful(refB, "6.7.1"),
			applied(v1.ReasonApplied, "in sync"), healthy(v1.ReasonHealthy)),
		*testRelease("team-a", "redis", automatic(), onCluster("prod-eu", 1), rendered(refA, "18.0.0"),
			applied(v1.ReasonUnappliable, "template error"), healthy(v1.ReasonNotAssessed)),
		*testRelease("team-b", "new"),
	}
}

func TestFormatReleaseList(t *testing.T) {
	tests := map[string]struct {
		all  bool
		term Terminal
	}{
		"release_list":              {},
		"release_list_all":          {all: true},
		"release_list_color":        {term: Terminal{TTY: true, Color: true}},
		"release_list_tty_no_color": {term: Terminal{TTY: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			golden(t, name, FormatReleaseList(releases(), tc.all, now, tc.term))
		})
	}
}

func TestNoEscapeCodesWithoutColor(t *testing.T) {
	r := statusRelease()
	for name, out := range map[string]string{
		"list":     FormatReleaseList(releases(), true, now, Terminal{TTY: true}),
		"status":   FormatReleaseStatus(r, testInventory(), now, Terminal{TTY: true}),
		"history":  FormatHistory(r, historyRenders(), now, Terminal{TTY: true}),
		"clusters": FormatClusterList(clusters(), now, Terminal{TTY: true}),
	} {
		if strings.Contains(out, "\x1b") {
			t.Errorf("%s output has escape codes without colour:\n%q", name, out)
		}
	}
}

func TestColoredTableAligns(t *testing.T) {
	colored := FormatReleaseList(releases(), false, now, Terminal{TTY: true, Color: true})
	if !strings.Contains(colored, ansiGreen) {
		t.Fatalf("no colour in %q", colored)
	}
	if got, want := ansiSequence.ReplaceAllString(colored, ""), FormatReleaseList(releases(), false, now, plain); got != want {
		t.Errorf("coloured table without its escape codes differs from the plain one:\n%s\nwant\n%s", got, want)
	}
}

func statusRelease() *v1.Release {
	return testRelease("team-a", "podinfo", interval(5*time.Minute),
		rendered(refB, "6.7.1"), lastSuccessful(refA, "6.7.0"),
		applied(v1.ReasonWaitingForSyncWave, "Sync wave 1 is applied; wave 2 waits for its health."),
		healthy(v1.ReasonProgressing),
		condition(v1.ConditionReady, metav1.ConditionFalse, v1.ReasonWaitingForSyncWave, "Applied is False.", 5*time.Minute),
		syncRequested("2026-12-02T10:04:05Z", at(20*time.Minute)),
		pinned(refA, "incident 4711"),
		rollout(v1.RolloutProgressing, refB, refA, "Waiting for the render to become healthy."),
		wave(1, 2),
		hooks(v1.HookStatus{Name: "migrate", Batch: 0, Phase: v1.HookJobSucceeded, Job: "podinfo-migrate-9a2b0c1d2e"},
			v1.HookStatus{Name: "notify", Batch: 1, Phase: v1.HookJobRunning, Job: "podinfo-notify-9a2b0c1d2e"}),
	)
}

func testInventory() *v1.ReleaseInventory {
	dep := v1.ObjectReference{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "podinfo", Name: "podinfo"}
	svc := v1.ObjectReference{Version: "v1", Kind: "Service", Namespace: "podinfo", Name: "podinfo"}
	return &v1.ReleaseInventory{
		RenderRef: refB,
		Objects:   []v1.InventoryObject{{ObjectReference: svc}, {ObjectReference: dep, Wave: 1}},
		Status: v1.ReleaseInventoryStatus{
			RenderRef: refB, AssessedAt: at(time.Minute), Health: v1.HealthProgressing,
			Objects: []v1.ObjectHealth{{ObjectReference: svc, Health: v1.HealthHealthy},
				{ObjectReference: dep, Health: v1.HealthProgressing, Message: "1 of 2 replicas updated"}},
			Waves: []v1.WaveHealth{{Wave: 0, Health: v1.HealthHealthy}, {Wave: 1, Health: v1.HealthProgressing}},
			Drift: &v1.DriftStatus{Since: at(7 * time.Minute), Drifted: []v1.DriftedObject{{ObjectReference: dep, Fields: []string{"spec.replicas"}}}},
		},
	}
}

func TestFormatReleaseStatus(t *testing.T) {
	tests := map[string]struct {
		r   *v1.Release
		inv *v1.ReleaseInventory
	}{
		"release_status":     {r: statusRelease(), inv: testInventory()},
		"release_status_new": {r: testRelease("team-a", "new")},
		"release_status_transient": {r: testRelease("team-a", "redis", automatic(), rendered(refA, "18.0.0"),
			applied(v1.ReasonSourceNotReady, "The chart cannot be fetched: 503."),
			syncRequested("not-a-time", nil),
			func(r *v1.Release) {
				r.Spec.SyncPolicy.RetryBackoff = &v1.RetryBackoff{Initial: &metav1.Duration{Duration: 10 * time.Second}}
			})},
		"release_status_pending": {r: testRelease("team-a", "podinfo", rendered(refB, "6.7.1"), lastSuccessful(refA, "6.7.0"),
			applied(v1.ReasonWaitingForSync, "Render differs; the apply waits for /sync."),
			syncRequested("2026-12-02T10:04:05Z", at(time.Hour)),
			func(r *v1.Release) {
				r.Annotations[v1.AnnotationSyncForceRequestedAt] = "2026-12-02T10:04:05Z"
				r.Generation = 2
			})},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			golden(t, name, FormatReleaseStatus(tc.r, tc.inv, now, plain))
		})
	}
}

func historyRenders() []v1.Render {
	return []v1.Render{
		testRender("podinfo", refB, "6.7.1", 7, 10*time.Minute),
		testRender("podinfo", refA, "6.7.0", 6, 2*time.Hour),
		testRender("podinfo", "sha256:0000000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "6.6.0", 6, 48*time.Hour),
	}
}

func TestFormatHistory(t *testing.T) {
	rolledBack := testRelease("team-a", "podinfo", rendered(refB, "6.7.1"), lastSuccessful(refA, "6.7.0"),
		rollout(v1.RolloutRolledBack, refB, refA, "Not healthy in 5m; rolled back."))
	tests := map[string]*v1.Release{
		"release_history":            statusRelease(),
		"release_history_rolledback": rolledBack,
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			golden(t, name, FormatHistory(r, historyRenders(), now, plain))
		})
	}
}

// A Release whose chart comes from Git: history has a COMMIT column, status names
// the commit of the current and last successful renders.
func TestFormatHistoryOfAChartFromGit(t *testing.T) {
	const c1, c2 = "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98"
	r := testRelease("team-a", "podinfo", rendered(refB, "6.7.1"), lastSuccessful(refA, "6.7.0"), func(r *v1.Release) {
		r.Status.Render.Commit, r.Status.LastSuccessful.Commit = c2, c1
	})
	renders := historyRenders()[:2]
	renders[0].Chart.Commit, renders[1].Chart.Commit = c2, c1
	golden(t, "release_history_git", FormatHistory(r, renders, now, plain))
	status := FormatReleaseStatus(r, nil, now, plain)
	r.Spec.Chart = v1.ChartSource{Git: &v1.GitChartSource{URL: "https://git.example.com/charts.git", Ref: v1.GitRef{Branch: "main"}, Path: "charts/podinfo"}}
	status = FormatReleaseStatus(r, nil, now, plain)
	for _, want := range []string{"chart 6.7.1 at commit fedcba987654,", "chart 6.7.0 at commit 0123456789ab,",
		"Chart:            charts/podinfo of https://git.example.com/charts.git at branch main"} {
		if !strings.Contains(status, want) {
			t.Errorf("status does not say %q:\n%s", want, status)
		}
	}
}

// A Render whose chart was verified: history has a VERIFIED column with the
// provider and the signer's key (shortened) or identity.
func TestFormatHistoryOfVerifiedCharts(t *testing.T) {
	r := testRelease("team-a", "podinfo", rendered(refB, "6.7.1"), lastSuccessful(refA, "6.7.0"))
	renders := historyRenders()
	renders[0].Annotations = map[string]string{v1.AnnotationVerified: `{"provider":"helm","identity":"3F1C8A2B9D0E4F6712345678ABCDEF0123456789","time":"2026-12-08T02:00:00Z"}`}
	renders[1].Annotations = map[string]string{v1.AnnotationVerified: `{"provider":"cosign","identity":"https://github.com/example/charts/.github/workflows/release.yaml@refs/tags/v6.7.0"}`}
	golden(t, "release_history_verified", FormatHistory(r, renders, now, plain))
}

func clusters() []v1.Cluster {
	ready := v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-eu", CreationTimestamp: *at(72 * time.Hour)},
		Spec:       v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: "convoy-system", Name: "prod-eu-kubeconfig"}}},
		Status: v1.ClusterStatus{KubernetesVersion: "v1.37.2", Conditions: []metav1.Condition{
			{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Reachable", Message: "Version v1.37.2.", LastTransitionTime: *at(72 * time.Hour)}}},
	}
	down := v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "staging", CreationTimestamp: *at(time.Hour)},
		Spec: v1.ClusterSpec{
			Kubeconfig:        v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: "convoy-system", Name: "staging", Key: "kubeconfig"}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "staging"}},
		},
		Status: v1.ClusterStatus{Conditions: []metav1.Condition{
			{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Unreachable", Message: "Connection refused; check the kubeconfig Secret.", LastTransitionTime: *at(10 * time.Minute)}}},
	}
	return []v1.Cluster{ready, down}
}

func TestFormatClusters(t *testing.T) {
	golden(t, "cluster_list", FormatClusterList(clusters(), now, plain))
	cs := clusters()
	golden(t, "cluster_status", FormatClusterStatus(&cs[1], now, plain))
	golden(t, "cluster_status_new", FormatClusterStatus(&v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, now, plain))
}
