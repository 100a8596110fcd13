package cli

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/ui"
)

// The UI streams ReleaseSets; a user who may read them but not promote is offered
// no Promote (/api/access) and the UI refuses the request before it reaches the API;
// with create on releasesets/promote the same user's Promote approves the stage
// that waits and the UI answers which.
func TestUIPromoteFollowsRBAC(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createReleaseSet(t, ns, "podinfo")
	writeSetStatus(t, ns, "podinfo", waitingForApproval(revNew, time.Now()))
	kube, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "lead-" + testenv.RandomSuffix()
	read := rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releases", "releasesets"}, Verbs: []string{"get", "list", "watch"}}
	testenv.Grant(t, testCtx(t), kube, ns, user, read)
	testenv.WaitAllowed(t, testCtx(t), kube, ns, user, rbacv1.PolicyRule{APIGroups: read.APIGroups, Resources: []string{"releasesets"}, Verbs: []string{"list"}})
	kubeconfig := userKubeconfig(t, user)

	base := startUI(t, "--kubeconfig", kubeconfig, "-n", ns)
	s := openStream(t, base)
	s.next(t, "the ReleaseSet in the snapshot", func(m ui.Message) bool {
		return m.Op == "put" && m.Kind == ui.KindReleaseSet && m.Key == ns+"/podinfo"
	})
	code, access := call(t, http.MethodGet, base+"api/access?namespace="+ns, nil, "")
	if code != 200 || access["promote"] != false {
		t.Fatalf("access of a reader: %d %v, want promote false", code, access)
	}
	code, body := call(t, http.MethodPost, base+"api/releasesets/"+ns+"/podinfo/promote", write, "")
	if code != http.StatusForbidden || !strings.Contains(fmt.Sprint(body["error"]), "may not create releasesets/promote") {
		t.Errorf("promote by a reader: %d %v, want 403 from the UI", code, body)
	}
	if set, _ := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo"); len(set.Approvals) != 0 {
		t.Errorf("a refused promote approved: %+v", set.Approvals)
	}

	promote := rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releasesets/promote"}, Verbs: []string{"create"}}
	role := &rbacv1.Role{}
	if err := kube.Get(testCtx(t), client.ObjectKey{Namespace: ns, Name: user}, role); err != nil {
		t.Fatal(err)
	}
	role.Rules = append(role.Rules, promote)
	if err := kube.Update(testCtx(t), role); err != nil {
		t.Fatal(err)
	}
	testenv.WaitAllowed(t, testCtx(t), kube, ns, user, promote)
	base = startUI(t, "--kubeconfig", kubeconfig, "-n", ns)
	if code, access = call(t, http.MethodGet, base+"api/access?namespace="+ns, nil, ""); access["promote"] != true {
		t.Fatalf("access after the grant: %d %v", code, access)
	}
	testenv.Eventually(t, testCtx(t), "the UI's promote goes through", 30*time.Second, func() (bool, string) {
		code, body = call(t, http.MethodPost, base+"api/releasesets/"+ns+"/podinfo/promote", write, "")
		return code == 200, fmt.Sprint(code, body)
	})
	if body["stage"] != "main" || body["revision"] != revNew {
		t.Errorf("promote answered %v, want stage main at %s", body, revNew)
	}
	if set, _ := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo"); len(set.Approvals) != 1 || set.Approvals[0].ApprovedBy != user {
		t.Errorf("approvals: %+v, want one by %s", set.Approvals, user)
	}
}

// createFleetCluster creates a Cluster with labels and deletes it after the test.
func createFleetCluster(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	createCluster(t, &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: "convoy-system", Name: name + "-kubeconfig"}}},
	})
}

// The fleet view: the list says where each set's rollout stands; a set's page shows
// its stages as lanes with each Cluster's Release (or "not started"), offers Promote
// for the stage that waits, and follows the watch: after Promote the controller's
// next status and the new Release show without a reload, and Promote goes away. A
// user who may not promote sees no Promote, and nobody sees it for a halted set.
func TestUIBrowserFleetLanesAndPromote(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	fleet := "fleet-" + testenv.RandomSuffix()
	dev := func(i int) string { return fmt.Sprintf("%s-dev-%d", fleet, i) }
	createFleetCluster(t, dev(1), map[string]string{"fleet": fleet, "ring": "canary"})
	createFleetCluster(t, dev(2), map[string]string{"fleet": fleet, "ring": "main"})
	createFleetCluster(t, dev(3), map[string]string{"fleet": fleet, "ring": "main"})

	set := testSet(ns, "podinfo")
	set.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}
	set.Status = v1.ReleaseSetStatus{}
	set.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": fleet}}
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleaseSets).Body(set).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating the ReleaseSet: %v", err)
	}
	writeSetStatus(t, ns, "podinfo", waitingForApproval(revNew, time.Now()))
	readyNow := func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonApplied, Message: "ready", LastTransitionTime: metav1.Now()}}
	}
	createSetRelease(t, ns, "podinfo", dev(1), revNew, readyNow)

	base := startUI(t)
	ctx := browser(t)
	setRow := `[data-releaseset="` + ns + `/podinfo"]`
	run(t, ctx, "open the fleet list", chromedp.Navigate(base+"#/releasesets"),
		textIs(setRow+` [data-testid=stage]`, "main (WaitingForApproval)"), textIs(setRow+` [data-testid=ready]`, "1/3"))
	screenshot(t, ctx, "fleets")

	lane := func(stage string) string { return `[data-stage="` + stage + `"]` }
	chip := func(stage string, i int) string {
		return lane(stage) + ` [data-cluster="` + dev(i) + `"] [data-testid=state]`
	}
	run(t, ctx, "open the ReleaseSet", chromedp.Click(chromedp.CSS(setRow+` a`)),
		textIs(lane("canary")+` [data-testid=phase]`, "Complete"), textIs(chip("canary", 1), "Ready"),
		textIs(lane("main")+` [data-testid=phase]`, "WaitingForApproval"),
		textIs(chip("main", 2), "not started"), textIs(chip("main", 3), "not started"),
		textIs(`[data-testid=reason-Progressing]`, "WaitingForApproval"),
		textHas(`[data-skipped=prod-cn]`, v1.ReasonNamespaceNotAdmitted),
		textIs(`[data-testid=promote]`, "Promote stage main"))
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-stage="canary"] [data-cluster="`+dev(1)+`"] a').getAttribute('href')`))
	if err != nil || href != "#/releases/"+ns+"/podinfo-"+dev(1) {
		t.Errorf("the canary chip links to %q (%v), want the Release's page", href, err)
	}
	screenshot(t, ctx, "fleet-waiting-for-approval")

	run(t, ctx, "press Promote", chromedp.Click(chromedp.CSS(`[data-testid=promote]`)),
		textHas(`[data-testid=promoted]`, "Approved stage main"))
	s, err := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo")
	if err != nil || len(s.Approvals) != 1 || s.Approvals[0].Stage != "main" || s.Approvals[0].Revision != revNew {
		t.Fatalf("approvals after Promote: %+v (%v)", s.Approvals, err)
	}

	// What the controller would do next: the stage starts and dev-2 gets the revision.
	writeSetStatus(t, ns, "podinfo", func(s *v1.ReleaseSet) { s.Status.Stages[1] = stage("main", v1.StageProgressing, 2, 1, 0) })
	createSetRelease(t, ns, "podinfo", dev(2), revNew, func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonProgressing, Message: "progressing", LastTransitionTime: metav1.Now()}}
	})
	run(t, ctx, "the rollout moves on live", textIs(lane("main")+` [data-testid=phase]`, "Progressing"),
		textIs(chip("main", 2), "Updating"), textIs(chip("main", 3), "not started"))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=promote]').length`)); err != nil || n != 0 {
		t.Errorf("Promote still offered when no stage waits: %d (%v)", n, err)
	}
	screenshot(t, ctx, "fleet-progressing")

	// A reader: the same page, no Promote.
	writeSetStatus(t, ns, "podinfo", func(s *v1.ReleaseSet) { s.Status.Stages[1] = stage("main", v1.StageWaitingForApproval, 2, 1, 0) })
	c, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "viewer-" + testenv.RandomSuffix()
	testenv.Grant(t, testCtx(t), c, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releasesets", "releases"}, Verbs: []string{"get", "list", "watch"}})
	testenv.WaitAllowed(t, testCtx(t), c, ns, user, rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releasesets"}, Verbs: []string{"list"}})
	reader := startUI(t, "--kubeconfig", userKubeconfig(t, user), "-n", ns)
	run(t, ctx, "open the set as a reader", chromedp.Navigate(reader+"#/releasesets/"+ns+"/podinfo"),
		textIs(lane("main")+` [data-testid=phase]`, "WaitingForApproval"), visible(`.actions[data-access=loaded]`))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=promote]').length`)); err != nil || n != 0 {
		t.Errorf("a reader is offered Promote: %d (%v)", n, err)
	}

	// A halt: the page says which Release and why, and offers no Promote, which
	// would not override it.
	writeSetStatus(t, ns, "podinfo", func(s *v1.ReleaseSet) {
		s.Status.Stages[1] = stage("main", v1.StageHalted, 2, 1, 0)
		s.Status.Conditions[2] = metav1.Condition{Type: v1.ConditionHalted, Status: metav1.ConditionTrue, Reason: v1.ReasonReleaseFailed,
			Message: "Release podinfo-" + dev(2) + " ended its rollout RolledBack.", LastTransitionTime: metav1.Now()}
	})
	run(t, ctx, "open the halted set as its admin", chromedp.Navigate(base+"#/releasesets/"+ns+"/podinfo"),
		textHas(`[data-testid=halted]`, "podinfo-"+dev(2)+" ended its rollout RolledBack"),
		textIs(lane("main")+` [data-testid=phase]`, "Halted"), visible(`.actions[data-access=loaded]`))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=promote]').length`)); err != nil || n != 0 {
		t.Errorf("Promote offered for a halted set: %d (%v)", n, err)
	}
}

// The fleet view shows round two's fields and says what to do in each state: the
// source the set resolved; per stage the unavailable and baking Releases against
// maxUnavailable and bakeTime and when it started, with the deadline counting down;
// per Cluster the clusterOverrides that select it and their values with
// $(cluster.…) replaced; and for a halt (StageDeadlineExceeded, ReleaseFailed,
// MassRemoval) or a pause why, and what to do. Promote explains a mass removal (it
// acknowledges the held removals, listed) and acknowledges it; it is disabled, with
// the resume command, while the set is paused.
func TestUIBrowserFleetStates(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	fleet := "fleet-" + testenv.RandomSuffix()
	dev := func(i int) string { return fmt.Sprintf("%s-dev-%d", fleet, i) }
	createFleetCluster(t, dev(1), map[string]string{"fleet": fleet, "ring": "canary", "region": "eu-west-1"})
	createFleetCluster(t, dev(2), map[string]string{"fleet": fleet, "ring": "main", "size": "large"})
	createFleetCluster(t, dev(3), map[string]string{"fleet": fleet, "ring": "main"})

	half := intstr.FromString("50%")
	set := testSet(ns, "podinfo")
	set.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}
	set.Status = v1.ReleaseSetStatus{}
	set.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": fleet}}
	set.Spec.Strategy.Stages[0].BakeTime = &metav1.Duration{Duration: 10 * time.Minute}
	set.Spec.Strategy.Stages[1].Approval = ""
	set.Spec.Strategy.Stages[1].MaxUnavailable = &half
	set.Spec.Strategy.Stages[1].BakeTime = &metav1.Duration{Duration: 5 * time.Minute}
	set.Spec.Strategy.Stages[1].ProgressDeadline = &metav1.Duration{Duration: 15 * time.Minute}
	set.Spec.ClusterOverrides = []v1.ClusterOverride{
		{ClusterSelector: &metav1.LabelSelector{}, Values: raw(`{"region":"$(cluster.labels['region'])"}`)},
		{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "main"}}, Values: raw(`{"replicas":3,"ingress":{"host":"$(cluster.name).example.com"}}`)},
		{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"size": "large"}}, Values: raw(`{"replicas":6}`)},
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleaseSets).Body(set).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating the ReleaseSet: %v", err)
	}
	started := time.Now().Add(-11 * time.Minute)
	progressing := func(s *v1.ReleaseSet) {
		ts := metav1.NewTime(time.Now())
		s.Status.Revision = revNew
		s.Status.Source = &v1.ReleaseSetSource{ChartVersion: "6.7.1", ValuesDigest: "sha256:4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e"}
		s.Status.Stages = []v1.StageStatus{
			{Name: "canary", Phase: v1.StageComplete, Clusters: 1, Updated: 1, Ready: 1,
				StartedAt: ptrTime(started.Add(-20 * time.Minute)), CompletedAt: ptrTime(started)},
			{Name: "main", Phase: v1.StageProgressing, Clusters: 2, Updated: 2, Ready: 1, Unavailable: 1, Baking: 1, StartedAt: ptrTime(started)},
		}
		s.Status.Conditions = []metav1.Condition{
			{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Progressing", Message: "2 of 3 Releases Ready at the revision.", LastTransitionTime: ts},
			{Type: v1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: "Progressing", Message: "Stage main rolls out.", LastTransitionTime: ts},
			{Type: v1.ConditionHalted, Status: metav1.ConditionFalse, Reason: "NotHalted", Message: "No Release failed.", LastTransitionTime: ts},
		}
		s.Status.HeldRemovals = nil
	}
	halt := func(reason, msg string) func(*v1.ReleaseSet) {
		return func(s *v1.ReleaseSet) {
			progressing(s)
			s.Status.Stages[1].Phase = v1.StageHalted
			s.Status.Conditions[1] = metav1.Condition{Type: v1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: reason, Message: "The rollout is halted.", LastTransitionTime: metav1.Now()}
			s.Status.Conditions[2] = metav1.Condition{Type: v1.ConditionHalted, Status: metav1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
		}
	}
	writeSetStatus(t, ns, "podinfo", progressing)
	readyNow := func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonApplied, Message: "ready", LastTransitionTime: metav1.Now()}}
	}
	for i := 1; i <= 3; i++ {
		createSetRelease(t, ns, "podinfo", dev(i), revNew, readyNow)
	}

	base := startUI(t)
	ctx := browser(t)
	lane := func(stage string) string { return `[data-stage="` + stage + `"]` }
	chip := func(i int) string { return `[data-cluster="` + dev(i) + `"] [data-testid=overrides]` }
	values := func(i int) string { return `[data-override-cluster="` + dev(i) + `"] [data-testid=override-values]` }
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	run(t, ctx, "open the progressing set", chromedp.Navigate(base+"#/releasesets/"+ns+"/podinfo"),
		textIs(`[data-testid=source]`, "chart 6.7.1, values 4f1c2d3e4f"),
		textIs(lane("main")+` [data-testid=stage-unavailable]`, "1 unavailable (max 50% = 1)"),
		textIs(lane("main")+` [data-testid=stage-baking]`, "1 baking (bake 5m)"),
		textHas(lane("main")+` [data-testid=stage-timing]`, "started 11m ago, deadline in 3m"),
		textIs(lane("canary")+` [data-testid=stage-baking]`, "0 baking (bake 10m)"),
		textIs(lane("canary")+` [data-testid=stage-timing]`, "started 31m ago, completed 11m ago"),
		textIs(chip(1), "overrides 0"), textIs(chip(2), "overrides 0,1,2"), textIs(chip(3), "overrides 0,1"),
		textHas(values(1), `"region": "eu-west-1"`),
		textHas(values(2), `"host": "`+dev(2)+`.example.com"`), textHas(values(2), `"replicas": 6`),
		textHas(values(3), `"region": ""`), textHas(values(3), `"replicas": 3`),
		visible(`.actions[data-access=loaded]`))
	timing := lane("main") + ` [data-testid=stage-timing]`
	first, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(timing)+`).innerText`))
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "the deadline counts down without a change of the set", waitText(timing, "a countdown other than "+strconv.Quote(first),
		func(s string) bool { return s != first && strings.Contains(s, "deadline in 3m") }))
	if n := count(`[data-testid=halted], [data-testid=paused], [data-testid=promote]`); n != 0 {
		t.Errorf("a progressing set shows %d halt, pause or Promote elements, want none", n)
	}
	screenshot(t, ctx, "fleet-round2-progressing")

	writeSetStatus(t, ns, "podinfo", func(s *v1.ReleaseSet) {
		halt(v1.ReasonStageDeadlineExceeded, "Stage main did not complete within its progressDeadline 15m.")(s)
		s.Status.Stages[1].StartedAt = ptrTime(time.Now().Add(-20 * time.Minute))
	})
	run(t, ctx, "a stage deadline passed", textHas(`[data-testid=halted]`, "Halted (StageDeadlineExceeded): Stage main did not complete"),
		textHas(`[data-testid=halt-help]`, "see why the stage's Releases are not Ready"),
		textIs(lane("main")+` [data-testid=stage-timing]`, "started 20m ago, deadline passed"))
	if n := count(`[data-testid=promote]`); n != 0 {
		t.Errorf("Promote offered at a passed deadline: %d", n)
	}
	screenshot(t, ctx, "fleet-round2-deadline")

	writeSetStatus(t, ns, "podinfo", halt(v1.ReasonReleaseFailed, "Release podinfo-"+dev(3)+" cannot be applied (Unappliable)."))
	run(t, ctx, "a Release failed", textHas(`[data-testid=halted]`, "Halted (ReleaseFailed): Release podinfo-"+dev(3)+" cannot be applied"),
		textHas(`[data-testid=halt-help]`, "fix what failed, then change spec.template or spec.clusterOverrides"))
	if n := count(`[data-testid=promote]`); n != 0 {
		t.Errorf("Promote offered for a failed Release: %d", n)
	}

	held := []string{"podinfo-" + dev(2), "podinfo-" + dev(3)}
	writeSetStatus(t, ns, "podinfo", func(s *v1.ReleaseSet) {
		halt(v1.ReasonMassRemoval, "2 of the 3 Releases would be deleted at once, more than spec.strategy.maxRemovals allows (0).")(s)
		s.Status.HeldRemovals = held
	})
	run(t, ctx, "a mass removal", textHas(`[data-testid=halted]`, "Halted (MassRemoval): 2 of the 3 Releases"),
		textIs(`[data-testid=held-removals]`, strings.Join(held, "\n")),
		textHas(`[data-testid=halt-help]`, "if the removal is meant, Promote acknowledges it"),
		textIs(`[data-testid=promote]`, "Promote: acknowledge the removal of 2 Releases"),
		textIs(`[data-testid=promote-why]`, "Acknowledges the removal of "+strings.Join(held, ", ")+"; approves nothing else."))
	screenshot(t, ctx, "fleet-round2-mass-removal")
	run(t, ctx, "acknowledge the removal", chromedp.Click(chromedp.CSS(`[data-testid=promote]`)),
		textIs(`[data-testid=promoted]`, "Acknowledged the removal of 2 Releases: "+strings.Join(held, ", ")+"."))
	if s, err := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo"); err != nil || s.RemovalAcknowledgement == nil ||
		strings.Join(s.RemovalAcknowledgement.Releases, ",") != strings.Join(held, ",") || len(s.Approvals) != 0 {
		t.Fatalf("after Promote: acknowledgement %+v, approvals %+v (%v), want the held removals acknowledged and nothing approved", s.RemovalAcknowledgement, s.Approvals, err)
	}

	// Paused while a Manual stage waits: Promote is there, disabled, and says to resume.
	if _, err := admin(t).PatchReleaseSet(testCtx(t), ns, "podinfo", []byte(`{"spec":{"paused":true}}`)); err != nil {
		t.Fatal(err)
	}
	writeSetStatus(t, ns, "podinfo", func(s *v1.ReleaseSet) {
		progressing(s)
		s.Status.Stages[1] = stage("main", v1.StageWaitingForApproval, 2, 0, 0)
		s.Status.Conditions[1] = metav1.Condition{Type: v1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: v1.ReasonPaused, Message: "The ReleaseSet is paused (spec.paused).", LastTransitionTime: metav1.Now()}
	})
	resume := "kubectl convoy releaseset resume podinfo -n " + ns
	run(t, ctx, "a paused set", chromedp.Navigate(base+"#/releasesets/"+ns+"/podinfo"),
		textHas(`[data-testid=paused]`, resume), textIs(`[data-testid=promote]`, "Promote stage main"),
		textHas(`[data-testid=promote-why]`, "paused"), textHas(`[data-testid=promote-why]`, resume))
	disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid=promote]').disabled`))
	if err != nil || !disabled {
		t.Errorf("Promote of a paused set: disabled %v (%v), want disabled", disabled, err)
	}
	if n := count(`[data-testid=halted]`); n != 0 {
		t.Errorf("a paused set shows a halt: %d", n)
	}
	screenshot(t, ctx, "fleet-round2-paused")
}

func ptrTime(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }
