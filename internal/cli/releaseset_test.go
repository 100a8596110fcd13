package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// The releaseset commands against convoy apiserver: the test writes the statuses the
// ReleaseSet controller and the Release controller would write.

// createReleaseSet creates the ReleaseSet of testSet (status and approvals are the
// server's).
func createReleaseSet(t *testing.T, ns, name string) *v1.ReleaseSet {
	t.Helper()
	s := testSet(ns, name)
	s.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: name}
	s.Status = v1.ReleaseSetStatus{}
	out := &v1.ReleaseSet{}
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleaseSets).Body(s).Do(testCtx(t)).Into(out); err != nil {
		t.Fatalf("creating ReleaseSet %s/%s: %v", ns, name, err)
	}
	return out
}

// writeSetStatus sets the ReleaseSet's status through /status, as the controller
// would, for the generation it has.
func writeSetStatus(t *testing.T, ns, name string, change func(*v1.ReleaseSet)) {
	t.Helper()
	s, err := admin(t).GetReleaseSet(testCtx(t), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	change(s)
	s.Status.ObservedGeneration = s.Generation
	if err := admin(t).rest.Put().Namespace(ns).Resource(v1.ResourceReleaseSets).Name(name).SubResource("status").Body(s).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("writing the status of ReleaseSet %s/%s: %v", ns, name, err)
	}
}

// createSetRelease creates the Release that the set writes for cluster at revision
// (as the contract names and labels it) and writes its status.
func createSetRelease(t *testing.T, ns, set, cluster, revision string, status func(*v1.Release)) {
	t.Helper()
	r := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set + "-" + cluster,
			Labels:      map[string]string{v1.LabelReleaseSet: set, v1.LabelCluster: cluster},
			Annotations: map[string]string{v1.AnnotationReleaseSetRevision: revision}},
		Spec: v1.ReleaseSpec{Cluster: cluster, Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"}},
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleases).Body(r).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating Release %s: %v", r.Name, err)
	}
	t.Cleanup(func() { dropRelease(t, ns, r.Name) })
	writeStatus(t, ns, r.Name, status)
}

// dropRelease deletes a Release that no controller handles: it removes convoy's
// finalizer itself, so that the Release does not linger in the other tests' watches
// (the UI's list of every namespace).
func dropRelease(t *testing.T, ns, name string) {
	c := admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.rest.Delete().Namespace(ns).Resource(v1.ResourceReleases).Name(name).Do(ctx).Error(); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting Release %s/%s: %v", ns, name, err)
		return
	}
	if _, err := c.MergePatch(ctx, ns, name, "", []byte(`{"metadata":{"finalizers":null}}`)); err != nil && !apierrors.IsNotFound(errors.Unwrap(err)) {
		t.Errorf("removing the finalizer of Release %s/%s: %v", ns, name, err)
	}
}

// waitingForApproval is the status of a rollout whose canary stage is done and
// whose Manual stage main waits for /promote.
func waitingForApproval(revision string, since time.Time) func(*v1.ReleaseSet) {
	return func(s *v1.ReleaseSet) {
		ts := metav1.NewTime(since)
		s.Status.Revision = revision
		s.Status.Stages = []v1.StageStatus{stage("canary", v1.StageComplete, 1, 1, 1), stage("main", v1.StageWaitingForApproval, 2, 0, 0)}
		s.Status.Conditions = []metav1.Condition{
			{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Progressing", Message: "1 of 3 Releases Ready at the revision.", LastTransitionTime: ts},
			{Type: v1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: "WaitingForApproval", Message: "Stage main waits for approval.", LastTransitionTime: ts},
			{Type: v1.ConditionHalted, Status: metav1.ConditionFalse, Reason: "NotHalted", Message: "No Release failed.", LastTransitionTime: ts},
		}
		s.Status.Skipped = []v1.SkippedCluster{{Name: "prod-cn", Reason: v1.ReasonNamespaceNotAdmitted, Message: "Its namespaceSelector does not admit the namespace."}}
	}
}

// releaseset list and status read what convoy apiserver stores and print it as the
// formatting tests show (golden files); list's REVISION, STAGE and READY are what
// `kubectl get releasesets` (convoy apiserver's table, printed by the real kubectl)
// says.
func TestReleaseSetListAndStatusFromAPIServer(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	created := createReleaseSet(t, ns, "podinfo").CreationTimestamp.Time
	createReleaseSet(t, ns, "fresh")
	writeSetStatus(t, ns, "podinfo", waitingForApproval(revNew, created.Add(80*time.Minute)))
	ts := metav1.NewTime(created.Add(85 * time.Minute))
	createSetRelease(t, ns, "podinfo", "dev-1", revNew, func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonApplied, Message: "Applied and healthy.", LastTransitionTime: ts}}
	})
	createSetRelease(t, ns, "podinfo", "dev-2", revOld, func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonWaitingForSync,
			Message: "The render differs; the apply waits for /sync.", LastTransitionTime: ts}}
	})
	// Not the set's: a Release without the label is not listed.
	createRelease(t, ns, "podinfo-by-hand")
	t.Cleanup(func() { dropRelease(t, ns, "podinfo-by-hand") })

	later := func() time.Time { return created.Add(90*time.Minute + 30*time.Second) }
	unns := strings.NewReplacer(ns, "NAMESPACE")
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"releaseset_list_apiserver", []string{"releaseset", "list", "-n", ns}},
		{"releaseset_status_apiserver", []string{"releaseset", "status", "podinfo", "-n", ns}},
	} {
		res := pluginAt(t, later, tc.args...)
		if res.code != 0 {
			t.Errorf("%v: exit %d, stderr %s", tc.args, res.code, res.stderr)
			continue
		}
		// fresh was created just after podinfo: its AGE reads 90m too.
		golden(t, tc.golden, unns.Replace(res.stdout))
	}

	res := plugin(t, nil, "releaseset", "status", "podinfo", "-n", ns, "-o", "json")
	var got v1.ReleaseSet
	if err := json.Unmarshal([]byte(res.stdout), &got); res.code != 0 || err != nil {
		t.Fatalf("releaseset status -o json: exit %d, %v\n%s", res.code, err, res.stdout)
	}
	if got.Kind != "ReleaseSet" || got.Status.Revision != revNew || len(got.Status.Stages) != 2 {
		t.Errorf("releaseset status -o json: kind %q revision %q stages %v", got.Kind, got.Status.Revision, got.Status.Stages)
	}

	out, err := exec.CommandContext(testCtx(t), filepath.Join(env.cluster.BinDir(), "kubectl"),
		"--kubeconfig", env.kubeconfig, "get", "releasesets", "-n", ns).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get releasesets: %v\n%s", err, out)
	}
	list := plugin(t, nil, "releaseset", "list", "-n", ns)
	for _, column := range []string{"REVISION", "STAGE", "READY"} {
		p, k := tableCells(t, list.stdout, column), tableCells(t, string(out), column)
		if p["podinfo"] == "" || p["podinfo"] != k["podinfo"] {
			t.Errorf("%s of podinfo: releaseset list %q, kubectl get releasesets %q\n%s\n%s", column, p["podinfo"], k["podinfo"], list.stdout, out)
		}
	}
}

// promote approves the stage that waits, and says which; the server's 409 (nothing
// waits, or a halt) comes out as a message that says why and what to do; a name
// typed wrong gets a suggestion.
func TestReleaseSetPromote(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createReleaseSet(t, ns, "podinfo")

	res := plugin(t, nil, "releaseset", "promote", "podinfo", "-n", ns)
	if res.code != ExitFailure || !strings.Contains(res.stderr, `cannot promote ReleaseSet "podinfo"`) || !strings.Contains(res.stderr, "has not observed") {
		t.Errorf("promote before the controller wrote a status: exit %d, stderr %q", res.code, res.stderr)
	}

	writeSetStatus(t, ns, "podinfo", waitingForApproval(revNew, time.Now()))
	res = plugin(t, nil, "releaseset", "promote", "podinfo", "-n", ns)
	if res.code != ExitOK {
		t.Fatalf("promote: exit %d, stderr %s", res.code, res.stderr)
	}
	s, err := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Approvals) != 1 || s.Approvals[0].Stage != "main" || s.Approvals[0].Revision != revNew || s.Approvals[0].ApprovedBy == "" {
		t.Fatalf("approvals after promote: %+v", s.Approvals)
	}
	want := "releaseset.convoy.kumodo.io/podinfo promoted: stage main approved at revision 0123456789 by " + s.Approvals[0].ApprovedBy + "\n"
	if res.stdout != want {
		t.Errorf("promote printed %q, want %q", res.stdout, want)
	}

	// The stage started: nothing waits any more.
	writeSetStatus(t, ns, "podinfo", func(s *v1.ReleaseSet) { s.Status.Stages[1].Phase = v1.StageProgressing })
	res = plugin(t, nil, "releaseset", "promote", "podinfo", "-n", ns)
	for _, w := range []string{"no stage waits for approval", "canary Complete, main Progressing", "WaitingForApproval", "kubectl convoy releaseset status podinfo"} {
		if res.code != ExitFailure || !strings.Contains(res.stderr, w) {
			t.Errorf("promote with no stage waiting: exit %d, stderr %q lacks %q", res.code, res.stderr, w)
		}
	}

	// A halt: promote does not override it.
	writeSetStatus(t, ns, "podinfo", func(s *v1.ReleaseSet) {
		s.Status.Stages[1].Phase = v1.StageWaitingForApproval
		s.Status.Conditions[2] = metav1.Condition{Type: v1.ConditionHalted, Status: metav1.ConditionTrue, Reason: v1.ReasonReleaseFailed,
			Message: "Release podinfo-dev-1 ended its rollout RolledBack.", LastTransitionTime: metav1.Now()}
	})
	res = plugin(t, nil, "releaseset", "promote", "podinfo", "-n", ns)
	for _, w := range []string{"halted", "podinfo-dev-1", "spec.template"} {
		if res.code != ExitFailure || !strings.Contains(res.stderr, w) {
			t.Errorf("promote of a halted set: exit %d, stderr %q lacks %q", res.code, res.stderr, w)
		}
	}

	res = plugin(t, nil, "releaseset", "status", "podinf", "-n", ns)
	if res.code != ExitFailure || !strings.Contains(res.stderr, `ReleaseSet "podinf" not found`) || !strings.Contains(res.stderr, `did you mean "podinfo"?`) {
		t.Errorf("status of a name typed wrong: exit %d, stderr %q", res.code, res.stderr)
	}
	// Shell completion offers the namespace's ReleaseSets.
	if res = plugin(t, nil, "__complete", "releaseset", "promote", "-n", ns, "po"); !strings.HasPrefix(res.stdout, "podinfo\n:4\n") {
		t.Errorf("completion of po: exit %d stdout %q stderr %s", res.code, res.stdout, res.stderr)
	}
}

// pause and resume merge-patch spec.paused and say so as kubectl does; status shows a
// paused set; -o yaml prints the ReleaseSet; a name typed wrong gets a suggestion.
func TestReleaseSetPauseAndResume(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	created := createReleaseSet(t, ns, "podinfo")

	res := plugin(t, nil, "releaseset", "pause", "podinfo", "-n", ns)
	if want := "releaseset.convoy.kumodo.io/podinfo paused\n"; res.code != ExitOK || res.stdout != want {
		t.Errorf("pause: exit %d, stdout %q (want %q), stderr %s", res.code, res.stdout, want, res.stderr)
	}
	s, err := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Spec.Paused || s.Generation != created.Generation+1 {
		t.Errorf("after pause: paused %t, generation %d (was %d)", s.Spec.Paused, s.Generation, created.Generation)
	}
	// Pausing a paused set changes nothing and says the same.
	if res = plugin(t, nil, "releaseset", "pause", "podinfo", "-n", ns); res.code != ExitOK || !strings.HasSuffix(res.stdout, " paused\n") {
		t.Errorf("pause again: exit %d, stdout %q, stderr %s", res.code, res.stdout, res.stderr)
	}
	if res = plugin(t, nil, "releaseset", "status", "podinfo", "-n", ns); res.code != ExitOK ||
		!strings.Contains(res.stdout, "Paused:           yes") || !strings.Contains(res.stdout, "kubectl convoy releaseset resume podinfo -n "+ns) {
		t.Errorf("status of a paused set: exit %d, stderr %s\n%s", res.code, res.stderr, res.stdout)
	}

	res = plugin(t, nil, "releaseset", "resume", "podinfo", "-n", ns, "-o", "yaml")
	var got v1.ReleaseSet
	if err := yaml.Unmarshal([]byte(res.stdout), &got); res.code != ExitOK || err != nil || got.Spec.Paused || got.Name != "podinfo" {
		t.Errorf("resume -o yaml: exit %d, %v, paused %t\n%s%s", res.code, err, got.Spec.Paused, res.stdout, res.stderr)
	}
	if s, _ := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo"); s.Spec.Paused {
		t.Error("spec.paused still true after resume")
	}
	if res = plugin(t, nil, "releaseset", "resume", "podinfo", "-n", ns); res.stdout != "releaseset.convoy.kumodo.io/podinfo resumed\n" {
		t.Errorf("resume: exit %d, stdout %q, stderr %s", res.code, res.stdout, res.stderr)
	}

	res = plugin(t, nil, "releaseset", "pause", "podinf", "-n", ns)
	if res.code != ExitFailure || !strings.Contains(res.stderr, `ReleaseSet "podinf" not found`) || !strings.Contains(res.stderr, `did you mean "podinfo"?`) {
		t.Errorf("pause of a name typed wrong: exit %d, stderr %q", res.code, res.stderr)
	}
}

// A user bound to the convoy-promote ClusterRole of deploy/rbac alone reads
// ReleaseSets (status says the Releases are not shown) and promotes, and may not
// sync a Release; without it, promote names the missing RBAC rule and the role, and
// approves nothing.
func TestReleaseSetPromoteNeedsItsOwnVerb(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createReleaseSet(t, ns, "podinfo")
	writeSetStatus(t, ns, "podinfo", waitingForApproval(revNew, time.Now()))
	createRelease(t, ns, "podinfo-dev-1")
	t.Cleanup(func() { dropRelease(t, ns, "podinfo-dev-1") })
	c, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "lead-" + testenv.RandomSuffix()
	read := rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releasesets"}, Verbs: []string{"get", "list", "watch"}}
	testenv.Grant(t, testCtx(t), c, ns, user, read)
	kubeconfig := userKubeconfig(t, user)
	as := func(args ...string) result {
		return plugin(t, nil, append([]string{"--kubeconfig", kubeconfig, "-n", ns}, args...)...)
	}

	res := as("releaseset", "promote", "podinfo")
	for _, w := range []string{"missing RBAC rule apiGroups: [convoy.kumodo.io], resources: [releasesets/promote], verbs: [create]", "convoy-promote"} {
		if res.code != ExitFailure || !strings.Contains(res.stderr, w) {
			t.Errorf("promote without the verb: exit %d, stderr %q lacks %q", res.code, res.stderr, w)
		}
	}
	if s, _ := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo"); len(s.Approvals) != 0 {
		t.Fatalf("a refused promote approved: %+v", s.Approvals)
	}

	role := deployClusterRole(t, "convoy-promote.yaml")
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user + "-promote"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := c.Create(testCtx(t), binding); err != nil {
		t.Fatal(err)
	}
	testenv.WaitAllowed(t, testCtx(t), c, ns, user,
		rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releasesets/promote"}, Verbs: []string{"create"}})
	// convoy apiserver may have cached the denial for a few seconds.
	testenv.Eventually(t, testCtx(t), "the user promotes with convoy-promote", 30*time.Second, func() (bool, string) {
		res := as("releaseset", "promote", "podinfo")
		return res.code == ExitOK && strings.Contains(res.stdout, "stage main approved"), res.stderr
	})
	if s, _ := admin(t).GetReleaseSet(testCtx(t), ns, "podinfo"); len(s.Approvals) != 1 || s.Approvals[0].ApprovedBy != user {
		t.Errorf("approvals: %+v, want one by %s", s.Approvals, user)
	}
	res = as("releaseset", "status", "podinfo")
	if res.code != ExitOK || !strings.Contains(res.stdout, "Releases:\n  not shown: you may not list releases") || !strings.Contains(res.stdout, "main ") {
		t.Errorf("status with convoy-promote: exit %d, stderr %s\n%s", res.code, res.stderr, res.stdout)
	}
	if res = as("releaseset", "list"); res.code != ExitOK || !strings.Contains(res.stdout, "podinfo") {
		t.Errorf("list with convoy-promote: exit %d, stderr %s", res.code, res.stderr)
	}
	if res = as("release", "sync", "podinfo-dev-1", "--any-render"); res.code != ExitFailure || !strings.Contains(res.stderr, "resources: [releases/sync]") {
		t.Errorf("sync with convoy-promote: exit %d, stderr %q", res.code, res.stderr)
	}
}

// examples/releaseset.yaml, which docs/fleets.md walks through, has only fields the
// API knows and passes convoy apiserver's validation; releaseset list shows it.
func TestReleaseSetExampleIsAccepted(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "releaseset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := &v1.ReleaseSet{}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		t.Fatalf("examples/releaseset.yaml: %v", err)
	}
	s.Namespace = ns
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleaseSets).Body(s).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating examples/releaseset.yaml: %v", err)
	}
	if res := plugin(t, nil, "releaseset", "list", "-n", ns); res.code != ExitOK || !strings.HasPrefix(strings.Split(res.stdout, "\n")[1], s.Name+" ") {
		t.Errorf("releaseset list: exit %d, stderr %s\n%s", res.code, res.stderr, res.stdout)
	}
}

// releaseset status reads the Clusters of a set with clusterOverrides: each
// Release's row names the overrides its Cluster's labels select, and --show-values
// prints their values for it with $(cluster.…) replaced; a user who may not list
// Clusters still gets the status, with the overrides not shown and why.
func TestReleaseSetStatusOverridesFromAPIServer(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	fleet := "ovr-" + testenv.RandomSuffix()
	eu, us := fleet+"-eu", fleet+"-us"
	createFleetCluster(t, eu, map[string]string{"fleet": fleet, "region": "eu-west-1"})
	createFleetCluster(t, us, map[string]string{"fleet": fleet, "region": "us-east-1", "size": "large"})
	set := testSet(ns, "podinfo")
	set.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}
	set.Status = v1.ReleaseSetStatus{}
	set.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": fleet}}
	set.Spec.ClusterOverrides = []v1.ClusterOverride{
		{ClusterSelector: &metav1.LabelSelector{}, Values: raw(`{"host":"$(cluster.name).$(cluster.labels['region']).example.com"}`)},
		{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"size": "large"}}, Values: raw(`{"replicas":6}`)},
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource(v1.ResourceReleaseSets).Body(set).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("creating the ReleaseSet: %v", err)
	}
	writeSetStatus(t, ns, "podinfo", waitingForApproval(revNew, time.Now()))
	for _, c := range []string{eu, us} {
		createSetRelease(t, ns, "podinfo", c, revNew, func(r *v1.Release) {})
	}

	res := plugin(t, nil, "releaseset", "status", "podinfo", "-n", ns, "--show-values")
	if res.code != 0 {
		t.Fatalf("releaseset status --show-values: exit %d, stderr %s", res.code, res.stderr)
	}
	// The OVERRIDES cell of each Cluster's row, by the header's column.
	cells := map[string]string{}
	lines := strings.Split(res.stdout[strings.Index(res.stdout, "Releases:\n")+len("Releases:\n"):], "\n")
	at := strings.Index(lines[0], "OVERRIDES")
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 && len(l) > at && at > 0 {
			cells[f[0]] = strings.Fields(l[at:])[0]
		}
	}
	if cells[eu] != "0" || cells[us] != "0,1" {
		t.Errorf("OVERRIDES: %v, want %s 0 and %s 0,1\n%s", cells, eu, us, res.stdout)
	}
	for _, want := range []string{
		"  " + eu + " (overrides 0):\n    host: " + eu + ".eu-west-1.example.com\n",
		"  " + us + " (overrides 0,1):\n    host: " + us + ".us-east-1.example.com\n    replicas: 6\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("releaseset status --show-values lacks %q:\n%s", want, res.stdout)
		}
	}

	if wide := plugin(t, nil, "releaseset", "status", "podinfo", "-n", ns, "-o", "wide"); wide.code != 0 || wide.stdout != res.stdout {
		t.Errorf("releaseset status -o wide: exit %d, stderr %s; want the output of --show-values, got\n%s", wide.code, wide.stderr, wide.stdout)
	}

	kube, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "set-reader-" + testenv.RandomSuffix()
	read := rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releases", "releasesets"}, Verbs: []string{"get", "list"}}
	testenv.Grant(t, testCtx(t), kube, ns, user, read)
	testenv.WaitAllowed(t, testCtx(t), kube, ns, user, read)
	res = plugin(t, nil, "--kubeconfig", userKubeconfig(t, user), "releaseset", "status", "podinfo", "-n", ns)
	if res.code != 0 || !strings.Contains(res.stdout, "overrides not shown: you may not list clusters") {
		t.Errorf("releaseset status without list on Clusters: exit %d, stderr %s\n%s", res.code, res.stderr, res.stdout)
	}
}
