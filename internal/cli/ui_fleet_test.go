package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
