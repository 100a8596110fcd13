package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

const setRevision = "sha256:0123456789abcdef"

// releaseSet builds a valid ReleaseSet with a canary stage and a Manual rest; options
// change it.
func releaseSet(ns, name string, opts ...func(*convoyv1alpha1.ReleaseSet)) *convoyv1alpha1.ReleaseSet {
	one := intstr.FromInt32(1)
	s := &convoyv1alpha1.ReleaseSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "ReleaseSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: convoyv1alpha1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			Template: convoyv1alpha1.ReleaseTemplate{
				Metadata: convoyv1alpha1.ReleaseTemplateMetadata{Labels: map[string]string{"team": "a"}},
				Spec:     release(ns, name).Spec,
			},
			Strategy: convoyv1alpha1.ReleaseSetStrategy{Stages: []convoyv1alpha1.Stage{
				{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}, MaxParallel: &one},
				{Name: "rest", Approval: convoyv1alpha1.ApprovalManual},
			}},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func createSet(t *testing.T, c *rest.RESTClient, s *convoyv1alpha1.ReleaseSet) (*convoyv1alpha1.ReleaseSet, error) {
	t.Helper()
	out := &convoyv1alpha1.ReleaseSet{}
	return out, c.Post().Namespace(s.Namespace).Resource(convoyv1alpha1.ResourceReleaseSets).Body(s).Do(ctx(t)).Into(out)
}

func mustCreateSet(t *testing.T, s *convoyv1alpha1.ReleaseSet) *convoyv1alpha1.ReleaseSet {
	t.Helper()
	out, err := createSet(t, admin(t), s)
	if err != nil {
		t.Fatalf("creating ReleaseSet %s/%s: %v", s.Namespace, s.Name, err)
	}
	return out
}

func getSet(t *testing.T, ns, name string) *convoyv1alpha1.ReleaseSet {
	t.Helper()
	out := &convoyv1alpha1.ReleaseSet{}
	if err := admin(t).Get().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name(name).Do(ctx(t)).Into(out); err != nil {
		t.Fatalf("getting ReleaseSet %s/%s: %v", ns, name, err)
	}
	return out
}

// updateSet PUTs s to the main resource or to a subresource ("" for the main resource).
func updateSet(t *testing.T, s *convoyv1alpha1.ReleaseSet, subresource string) *convoyv1alpha1.ReleaseSet {
	t.Helper()
	out := &convoyv1alpha1.ReleaseSet{}
	req := admin(t).Put().Namespace(s.Namespace).Resource(convoyv1alpha1.ResourceReleaseSets).Name(s.Name).Body(s)
	if subresource != "" {
		req = req.SubResource(subresource)
	}
	if err := req.Do(ctx(t)).Into(out); err != nil {
		t.Fatalf("updating ReleaseSet %s/%s %s: %v", s.Namespace, s.Name, subresource, err)
	}
	return out
}

func postPromote(c *rest.RESTClient, ctx context.Context, ns, name string) (*convoyv1alpha1.ReleaseSet, error) {
	out := &convoyv1alpha1.ReleaseSet{}
	err := c.Post().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name(name).
		SubResource(convoyv1alpha1.SubresourcePromote).Do(ctx).Into(out)
	return out, err
}

// waitingForApproval writes, as the controller would, a status of the set's current
// generation whose rest stage waits for approval.
func waitingForApproval(t *testing.T, s *convoyv1alpha1.ReleaseSet) *convoyv1alpha1.ReleaseSet {
	t.Helper()
	s = s.DeepCopy()
	s.Status = convoyv1alpha1.ReleaseSetStatus{
		ObservedGeneration: s.Generation, Revision: setRevision,
		Stages: []convoyv1alpha1.StageStatus{
			{Name: "canary", Phase: convoyv1alpha1.StageComplete, Clusters: 1, Updated: 1, Ready: 1},
			{Name: "rest", Phase: convoyv1alpha1.StageWaitingForApproval, Clusters: 3},
		},
	}
	return updateSet(t, s, convoyv1alpha1.SubresourceStatus)
}

// A ReleaseSet is created, read, listed and watched like a Release.
func TestReleaseSetCreateGetListWatch(t *testing.T) {
	ns := testNamespace(t)
	created := mustCreateSet(t, releaseSet(ns, "podinfo"))
	if created.Generation != 1 || created.UID == "" {
		t.Errorf("created: generation %d, uid %q", created.Generation, created.UID)
	}
	if st := created.Spec.Strategy.Stages[0].Approval; st != convoyv1alpha1.ApprovalAutomatic {
		t.Errorf("the canary stage's approval = %q, want the default Automatic", st)
	}
	got := getSet(t, ns, "podinfo")
	if diff := cmp.Diff(created.Spec, got.Spec); diff != "" {
		t.Errorf("stored spec (-created +got):\n%s", diff)
	}
	mustCreateSet(t, releaseSet(ns, "other", func(s *convoyv1alpha1.ReleaseSet) { s.Labels = map[string]string{"tier": "web"} }))

	list := func(params ...string) []string {
		return listNames(t, convoyv1alpha1.ResourceReleaseSets, ns, params...)
	}
	if got := list(); !cmp.Equal(got, []string{"other", "podinfo"}) {
		t.Errorf("list = %v, want [other podinfo]", got)
	}
	if got := list("labelSelector", "tier=web"); !cmp.Equal(got, []string{"other"}) {
		t.Errorf("labelSelector tier=web: %v, want [other]", got)
	}
	if got := list("fieldSelector", "metadata.name=podinfo"); !cmp.Equal(got, []string{"podinfo"}) {
		t.Errorf("fieldSelector metadata.name=podinfo: %v, want [podinfo]", got)
	}
	err := admin(t).Get().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Param("fieldSelector", "spec.template.spec.cluster=x").Do(ctx(t)).Error()
	if statusCode(err) != http.StatusBadRequest {
		t.Errorf("an unsupported field selector: %v, want 400", err)
	}

	w, err := admin(t).Get().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).
		VersionedParams(&metav1.ListOptions{Watch: true, ResourceVersion: got.ResourceVersion}, metav1.ParameterCodec).Watch(ctx(t))
	if err != nil {
		t.Fatalf("watching: %v", err)
	}
	defer w.Stop()
	got.Spec.Template.Spec.Chart.Version = "6.7.2"
	want := updateSet(t, got, "").ResourceVersion
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch closed before the update")
			}
			if s, isSet := ev.Object.(*convoyv1alpha1.ReleaseSet); ev.Type == watch.Modified && isSet && s.ResourceVersion == want {
				return
			}
		case <-timeout:
			t.Fatal("the watch did not see the update within 30s")
		}
	}
}

// Each invalid ReleaseSet is 422 naming the field, and nothing is stored.
func TestInvalidReleaseSetsAreRejected(t *testing.T) {
	ns := testNamespace(t)
	stages := func(stages ...convoyv1alpha1.Stage) func(*convoyv1alpha1.ReleaseSet) {
		return func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Strategy.Stages = stages }
	}
	percent := func(p string) *intstr.IntOrString { v := intstr.FromString(p); return &v }
	ring := &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}
	cases := map[string]struct {
		name   string
		mutate func(*convoyv1alpha1.ReleaseSet)
		field  string
	}{
		"template.spec as a Release's": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Spec.FailurePolicy = &convoyv1alpha1.FailurePolicy{Action: "Panic"}
		}, field: "spec.template.spec.failurePolicy.action"},
		"template with a cluster": {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Template.Spec.Cluster = "prod-eu" },
			field: "spec.template.spec.cluster"},
		"template with the set's label": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Labels = map[string]string{convoyv1alpha1.LabelReleaseSet: "x"}
		}, field: "spec.template.metadata.labels[convoy.kumodo.io/release-set]"},
		"duplicate stage names": {mutate: stages(convoyv1alpha1.Stage{Name: "a", ClusterSelector: ring}, convoyv1alpha1.Stage{Name: "a"}),
			field: "spec.strategy.stages[1].name"},
		"stage name not a DNS label": {mutate: stages(convoyv1alpha1.Stage{Name: "Canary"}), field: "spec.strategy.stages[0].name"},
		"rest with a selector": {mutate: stages(convoyv1alpha1.Stage{Name: "rest", ClusterSelector: ring}),
			field: "spec.strategy.stages[0].name"},
		"a stage without a selector before the last": {mutate: stages(convoyv1alpha1.Stage{Name: "all"}, convoyv1alpha1.Stage{Name: "b", ClusterSelector: ring}),
			field: "spec.strategy.stages[0].clusterSelector"},
		"invalid stage selector": {mutate: stages(convoyv1alpha1.Stage{Name: "a", ClusterSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "ring", Operator: "Near"}}}}),
			field: "spec.strategy.stages[0].clusterSelector.matchExpressions[0].operator"},
		"invalid cluster selector": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "not a value"}}
		}, field: "spec.clusterSelector.matchLabels"},
		"maxParallel 0": {mutate: stages(convoyv1alpha1.Stage{Name: "a", MaxParallel: func() *intstr.IntOrString { v := intstr.FromInt32(0); return &v }()}),
			field: "spec.strategy.stages[0].maxParallel"},
		"maxParallel 150%":  {mutate: stages(convoyv1alpha1.Stage{Name: "a", MaxParallel: percent("150%")}), field: "spec.strategy.stages[0].maxParallel"},
		"maxParallel words": {mutate: stages(convoyv1alpha1.Stage{Name: "a", MaxParallel: percent("half")}), field: "spec.strategy.stages[0].maxParallel"},
		"unknown approval":  {mutate: stages(convoyv1alpha1.Stage{Name: "a", Approval: "Sometimes"}), field: "spec.strategy.stages[0].approval"},
		"negative maxRemovals": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Strategy.MaxRemovals = func() *intstr.IntOrString { v := intstr.FromInt32(-1); return &v }()
		}, field: "spec.strategy.maxRemovals"},
		"maxRemovals words": {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Strategy.MaxRemovals = percent("a few") },
			field: "spec.strategy.maxRemovals"},
		"a name that leaves no room for its Releases": {name: strings.Repeat("a", 52), mutate: func(*convoyv1alpha1.ReleaseSet) {},
			field: "metadata.name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			setName := "invalid"
			if tc.name != "" {
				setName = tc.name
			}
			_, err := createSet(t, admin(t), releaseSet(ns, setName, tc.mutate))
			requireInvalid(t, err, tc.field)
		})
	}
	list := &convoyv1alpha1.ReleaseSetList{}
	if err := admin(t).Get().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Do(ctx(t)).Into(list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d ReleaseSets stored after rejected creates", len(list.Items))
	}

	// An update is validated too, and leaves the stored object as it was.
	s := mustCreateSet(t, releaseSet(ns, strings.Repeat("a", 51)))
	s.Spec.Template.Spec.Cluster = "prod-eu"
	err := admin(t).Put().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name(s.Name).Body(s).Do(ctx(t)).Error()
	requireInvalid(t, err, "spec.template.spec.cluster")
	if got := getSet(t, ns, s.Name); got.Spec.Template.Spec.Cluster != "" || got.Generation != 1 {
		t.Errorf("a rejected update stored cluster %q, generation %d", got.Spec.Template.Spec.Cluster, got.Generation)
	}
}

// Only a change to spec changes the generation; the main resource keeps status and
// approvals; /status writes only status.
func TestReleaseSetGenerationOnlyOnSpec(t *testing.T) {
	ns := testNamespace(t)
	s := mustCreateSet(t, releaseSet(ns, "podinfo", func(s *convoyv1alpha1.ReleaseSet) {
		s.Approvals = []convoyv1alpha1.StageApproval{{Stage: "rest", Revision: setRevision}}
		s.Status.Revision = setRevision
	}))
	if s.Generation != 1 || s.Approvals != nil || s.Status.Revision != "" {
		t.Fatalf("create: generation %d, approvals %v, status %+v; want 1, no approvals, no status", s.Generation, s.Approvals, s.Status)
	}

	s.Labels = map[string]string{"tier": "web"}
	s.Annotations = map[string]string{"note": "x"}
	s = updateSet(t, s, "")
	if s.Generation != 1 {
		t.Errorf("generation after a label and annotation change = %d, want 1", s.Generation)
	}

	// /status writes status, and nothing else.
	in := s.DeepCopy()
	in.Status.ObservedGeneration, in.Status.Revision = 1, setRevision
	in.Spec.Template.Spec.Chart.Version = "ignored"
	in.Labels = nil
	in.Approvals = []convoyv1alpha1.StageApproval{{Stage: "rest", Revision: setRevision}}
	got := updateSet(t, in, convoyv1alpha1.SubresourceStatus)
	if got.Status.Revision != setRevision || got.Generation != 1 || got.Spec.Template.Spec.Chart.Version != s.Spec.Template.Spec.Chart.Version ||
		got.Labels["tier"] != "web" || got.Approvals != nil {
		t.Errorf("/status: status %+v, generation %d, chart version %q, labels %v, approvals %v; want only the status written",
			got.Status, got.Generation, got.Spec.Template.Spec.Chart.Version, got.Labels, got.Approvals)
	}

	// The main resource keeps status and approvals; a spec change bumps the generation.
	got = waitingForApproval(t, got)
	promoted, err := postPromote(admin(t), ctx(t), ns, "podinfo")
	if err != nil {
		t.Fatalf("POST /promote: %v", err)
	}
	in = promoted.DeepCopy()
	in.Status = convoyv1alpha1.ReleaseSetStatus{}
	in.Approvals = nil
	in.Spec.Template.Spec.Chart.Version = "6.7.2"
	got = updateSet(t, in, "")
	if got.Generation != 2 {
		t.Errorf("generation after a spec change = %d, want 2", got.Generation)
	}
	if !cmp.Equal(got.Status, promoted.Status) || !cmp.Equal(got.Approvals, promoted.Approvals) {
		t.Errorf("the main resource changed status or approvals:\nstatus %+v\napprovals %+v", got.Status, got.Approvals)
	}
	// Server-side apply of the spec alone keeps them too.
	manifest := `{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"ReleaseSet","metadata":{"name":"podinfo","namespace":"` + ns + `"},
"spec":{"template":{"spec":{"chart":{"repository":"https://charts.example.com","name":"podinfo","version":"6.7.3"}}}},"approvals":[]}`
	applied := &convoyv1alpha1.ReleaseSet{}
	if err := admin(t).Patch(types.ApplyPatchType).Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("podinfo").
		Param("fieldManager", "alice").Param("force", "true").Body([]byte(manifest)).Do(ctx(t)).Into(applied); err != nil {
		t.Fatalf("server-side apply: %v", err)
	}
	if applied.Generation != 3 || !cmp.Equal(applied.Approvals, promoted.Approvals) {
		t.Errorf("after apply: generation %d, approvals %+v; want 3 and the approvals kept", applied.Generation, applied.Approvals)
	}
}

// POST /promote approves the stage that waits, as the requesting user (200); it is
// 409 when no stage waits or the set is halted, 404 for a missing set, and 403 for a
// user without create on releasesets/promote.
func TestReleaseSetPromote(t *testing.T) {
	ns := testNamespace(t)
	s := waitingForApproval(t, mustCreateSet(t, releaseSet(ns, "podinfo")))
	user := "approver-" + testenv.RandomSuffix()
	approver := grant(t, ns, user, rule(convoyv1alpha1.ResourceReleaseSets+"/"+convoyv1alpha1.SubresourcePromote, "create"))

	start := time.Now().Add(-time.Second)
	got, err := postPromote(approver, ctx(t), ns, "podinfo")
	if err != nil {
		t.Fatalf("POST /promote: %v", err)
	}
	if len(got.Approvals) != 1 {
		t.Fatalf("approvals = %+v, want one", got.Approvals)
	}
	a := got.Approvals[0]
	if a.Stage != "rest" || a.Revision != setRevision || a.ApprovedBy != user || a.ApprovedAt == nil || a.ApprovedAt.Time.Before(start.Truncate(time.Second)) {
		t.Errorf("approval = %+v, want rest at %s by %s, now", a, setRevision, user)
	}
	if got.Generation != s.Generation || !cmp.Equal(got.Spec, s.Spec) || !cmp.Equal(got.Status, s.Status) {
		t.Errorf("/promote changed more than approvals: generation %d→%d", s.Generation, got.Generation)
	}
	if stored := getSet(t, ns, "podinfo"); !cmp.Equal(stored.Approvals, got.Approvals) {
		t.Errorf("stored approvals %+v, want %+v", stored.Approvals, got.Approvals)
	}

	// The controller started the stage: nothing waits.
	got.Status.Stages[1].Phase = convoyv1alpha1.StageProgressing
	got = updateSet(t, got, convoyv1alpha1.SubresourceStatus)
	_, err = postPromote(approver, ctx(t), ns, "podinfo")
	if statusCode(err) != http.StatusConflict || !strings.Contains(err.Error(), "no stage waits for approval") {
		t.Errorf("POST /promote with no stage waiting: %v, want 409 saying no stage waits", err)
	}

	// Halted: a promote does not override it.
	got.Status.Stages[1].Phase = convoyv1alpha1.StageWaitingForApproval
	got.Status.Stages[0].Phase = convoyv1alpha1.StageHalted
	got.Status.Conditions = []metav1.Condition{{Type: convoyv1alpha1.ConditionHalted, Status: metav1.ConditionTrue,
		Reason: convoyv1alpha1.ReasonReleaseFailed, Message: "Release podinfo-dev-1 RolledBack", LastTransitionTime: metav1.Now()}}
	updateSet(t, got, convoyv1alpha1.SubresourceStatus)
	_, err = postPromote(approver, ctx(t), ns, "podinfo")
	if statusCode(err) != http.StatusConflict || !strings.Contains(err.Error(), "halted") {
		t.Errorf("POST /promote of a halted set: %v, want 409 saying halted", err)
	}
	if stored := getSet(t, ns, "podinfo"); len(stored.Approvals) != 1 || stored.Approvals[0].ApprovedBy != user {
		t.Errorf("a refused promote changed approvals: %+v", stored.Approvals)
	}

	if _, err := postPromote(admin(t), ctx(t), ns, "missing"); statusCode(err) != http.StatusNotFound {
		t.Errorf("POST /promote of a missing set: %v, want 404", err)
	}
	reader := grant(t, ns, "reader-"+testenv.RandomSuffix(), rule(convoyv1alpha1.ResourceReleaseSets, "get", "list", "watch", "update", "patch"))
	if _, err := postPromote(reader, ctx(t), ns, "podinfo"); statusCode(err) != http.StatusForbidden {
		t.Errorf("POST /promote without releasesets/promote: %v, want 403", err)
	}
}

// Discovery lists releasesets with their verbs, /status, and /promote as a create
// (POST) whose kind is ReleaseSet (it answers with the set; it has no options kind).
func TestReleaseSetDiscovery(t *testing.T) {
	testenv.Integration(t)
	list, err := discovery.NewDiscoveryClientForConfigOrDie(env.admin).ServerResourcesForGroupVersion(convoyv1alpha1.SchemeGroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	type resource struct {
		Kind       string
		Namespaced bool
		Verbs      []string
	}
	got := map[string]resource{}
	for _, r := range list.APIResources {
		if strings.HasPrefix(r.Name, convoyv1alpha1.ResourceReleaseSets) {
			verbs := slices.Clone([]string(r.Verbs))
			slices.Sort(verbs)
			got[r.Name] = resource{r.Kind, r.Namespaced, verbs}
		}
	}
	want := map[string]resource{
		"releasesets":         {"ReleaseSet", true, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}},
		"releasesets/status":  {"ReleaseSet", true, []string{"get", "patch", "update"}},
		"releasesets/promote": {"ReleaseSet", true, []string{"create"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovery of releasesets (-want +got):\n%s", diff)
	}
}

// A ValidatingAdmissionPolicy that matches CONNECT on every subresource sees a
// /promote without an object and lets it through: the promote works as without it.
func TestReleaseSetPromoteUnderAdmissionPolicy(t *testing.T) {
	ns := testNamespace(t)
	denyProbe(t, ns)
	waitingForApproval(t, mustCreateSet(t, releaseSet(ns, "podinfo")))
	got, err := postPromote(admin(t), ctx(t), ns, "podinfo")
	if err != nil || len(got.Approvals) != 1 {
		t.Fatalf("POST /promote under the policy: %v, approvals %+v", err, got.Approvals)
	}
}

// A user who may write releasesets but not releases gets nothing through a set: 403
// naming the missing verb, on create and on an update of spec; with create, update
// and delete on releases the same request is allowed. A delete needs delete on
// releases. Writes of metadata alone are left to RBAC on releasesets.
func TestReleaseSetTenancy(t *testing.T) {
	ns := testNamespace(t)
	sets := rule(convoyv1alpha1.ResourceReleaseSets, "get", "list", "watch", "create", "update", "patch")
	setsOnly := grant(t, ns, "sets-only-"+testenv.RandomSuffix(), sets)
	_, err := createSet(t, setsOnly, releaseSet(ns, "podinfo"))
	if statusCode(err) != http.StatusForbidden || !strings.Contains(err.Error(), `cannot create resource "releases"`) {
		t.Fatalf("create as a user who may not create releases: %v, want 403 naming create on releases", err)
	}

	noDelete := grant(t, ns, "no-delete-"+testenv.RandomSuffix(), sets, rule(convoyv1alpha1.ResourceReleases, "create", "update"))
	_, err = createSet(t, noDelete, releaseSet(ns, "podinfo"))
	if statusCode(err) != http.StatusForbidden || !strings.Contains(err.Error(), `cannot delete resource "releases"`) {
		t.Fatalf("create as a user who may not delete releases: %v, want 403 naming delete on releases", err)
	}

	writer := grant(t, ns, "writer-"+testenv.RandomSuffix(), sets, rule(convoyv1alpha1.ResourceReleases, "create", "update", "delete"))
	if _, err := createSet(t, writer, releaseSet(ns, "podinfo")); err != nil {
		t.Fatalf("create as a user who may write releases: %v", err)
	}

	// Updates: PUT and PATCH.
	s := getSet(t, ns, "podinfo")
	s.Spec.Template.Spec.Chart.Version = "6.7.2"
	err = setsOnly.Put().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("podinfo").Body(s).Do(ctx(t)).Error()
	if statusCode(err) != http.StatusForbidden {
		t.Errorf("PUT as a user who may not write releases: %v, want 403", err)
	}
	patch := []byte(`{"spec":{"template":{"spec":{"chart":{"version":"6.7.3"}}}}}`)
	err = setsOnly.Patch(types.MergePatchType).Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("podinfo").Body(patch).Do(ctx(t)).Error()
	if statusCode(err) != http.StatusForbidden {
		t.Errorf("PATCH as a user who may not write releases: %v, want 403", err)
	}
	if got := getSet(t, ns, "podinfo"); got.Generation != 1 {
		t.Errorf("generation %d after refused updates, want 1", got.Generation)
	}
	// A write of metadata alone changes no Release: RBAC on releasesets decides (the
	// garbage collector, which may not create Releases, removes its finalizers so).
	meta := []byte(`{"metadata":{"labels":{"tier":"web"},"finalizers":["example.com/hold"]}}`)
	if err := setsOnly.Patch(types.MergePatchType).Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("podinfo").
		Body(meta).Do(ctx(t)).Error(); err != nil {
		t.Errorf("PATCH of labels and finalizers as a user who may not write releases: %v", err)
	}
	if err := setsOnly.Patch(types.JSONPatchType).Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("podinfo").
		Body([]byte(`[{"op":"remove","path":"/metadata/finalizers"}]`)).Do(ctx(t)).Error(); err != nil {
		t.Errorf("removing the finalizer as a user who may not write releases: %v", err)
	}
	// Deleting a set deletes its Releases: it needs delete on releases.
	deleter := grant(t, ns, "deleter-"+testenv.RandomSuffix(), rule(convoyv1alpha1.ResourceReleaseSets, "get", "delete", "deletecollection"))
	err = deleter.Delete().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("podinfo").Do(ctx(t)).Error()
	if statusCode(err) != http.StatusForbidden || !strings.Contains(err.Error(), `cannot delete resource "releases"`) {
		t.Errorf("DELETE as a user who may not delete releases: %v, want 403 naming delete on releases", err)
	}
	err = deleter.Delete().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Do(ctx(t)).Error()
	if statusCode(err) != http.StatusForbidden {
		t.Errorf("DELETE of the collection as a user who may not delete releases: %v, want 403", err)
	}
	getSet(t, ns, "podinfo")
	// Server-side apply that would create a set is checked as a create.
	apply := []byte(`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"ReleaseSet","metadata":{"name":"applied","namespace":"` + ns + `"},
"spec":{"template":{"spec":{"chart":{"repository":"https://charts.example.com","name":"podinfo"}}}}}`)
	err = setsOnly.Patch(types.ApplyPatchType).Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("applied").
		Param("fieldManager", "sets-only").Body(apply).Do(ctx(t)).Error()
	if statusCode(err) != http.StatusForbidden {
		t.Errorf("server-side apply creating a set as a user who may not write releases: %v, want 403", err)
	}
	err = writer.Patch(types.MergePatchType).Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("podinfo").Body(patch).Do(ctx(t)).Error()
	if err != nil {
		t.Errorf("PATCH as a user who may write releases: %v", err)
	}
	if err := admin(t).Delete().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).Name("podinfo").Do(ctx(t)).Error(); err != nil {
		t.Errorf("DELETE as the admin: %v", err)
	}
}

// kubectl get releasesets says where the rollout stands.
func TestReleaseSetTable(t *testing.T) {
	ns := testNamespace(t)
	waitingForApproval(t, mustCreateSet(t, releaseSet(ns, "podinfo")))
	mustCreateSet(t, releaseSet(ns, "fresh"))

	raw, err := admin(t).Get().Namespace(ns).Resource(convoyv1alpha1.ResourceReleaseSets).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx(t))
	if err != nil {
		t.Fatalf("GET as Table: %v", err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			columns = append(columns, strings.ToUpper(c.Name))
		}
	}
	if want := []string{"NAME", "REVISION", "STAGE", "READY", "AGE"}; !cmp.Equal(columns, want) {
		t.Errorf("columns = %v, want %v", columns, want)
	}
	rows := map[string][]interface{}{}
	for _, row := range table.Rows {
		rows[row.Cells[0].(string)] = row.Cells[1:4]
	}
	want := map[string][]interface{}{
		"podinfo": {"0123456789", "rest (WaitingForApproval)", "1/4"},
		"fresh":   {"", "", ""},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("REVISION, STAGE, READY cells (-want +got):\n%s", diff)
	}
}

// kubectl finds ReleaseSets by their short name and prints where the rollout stands;
// kubectl explain describes the stages from the OpenAPI document.
func TestKubectlGetAndExplainReleaseSets(t *testing.T) {
	ns := testNamespace(t)
	kubectl := filepath.Join(env.cluster.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("kubectl is not built (%v): run hack/kube/build.sh kubectl", err)
	}
	waitingForApproval(t, mustCreateSet(t, releaseSet(ns, "podinfo")))
	cache := t.TempDir() // no discovery or OpenAPI cached by an earlier kubectl
	kubectlOut := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx(t), kubectl, append([]string{"--kubeconfig", env.cluster.KubeconfigPath(),
			"--cache-dir", cache}, args...)...).CombinedOutput()
		return string(out), err
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := kubectlOut(args...)
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return out
	}
	lines := strings.Split(strings.TrimSpace(run("-n", ns, "get", "relset")), "\n")
	if len(lines) != 2 || !slices.Equal(strings.Fields(lines[0]), []string{"NAME", "REVISION", "STAGE", "READY", "AGE"}) {
		t.Fatalf("kubectl get relset:\n%s", strings.Join(lines, "\n"))
	}
	if got := strings.Fields(lines[1]); len(got) != 6 || got[0] != "podinfo" || got[1] != "0123456789" ||
		got[2] != "rest" || got[3] != "(WaitingForApproval)" || got[4] != "1/4" {
		t.Errorf("kubectl get relset row: %q", lines[1])
	}
	wide := run("-n", ns, "get", "releasesets", "-o", "wide")
	for _, want := range []string{"UPDATED", "SKIPPED", "MESSAGE"} {
		if !strings.Contains(wide, want) {
			t.Errorf("kubectl get -o wide lacks %s:\n%s", want, wide)
		}
	}
	// The aggregator fetches convoy apiserver's OpenAPI document a little after the
	// APIService became Available.
	var explain string
	testenv.Eventually(t, ctx(t), "kubectl explain releaseset", time.Minute, func() (bool, string) {
		var err error
		explain, err = kubectlOut("explain", "releaseset.spec.strategy.stages")
		return err == nil, explain
	})
	for _, want := range []string{"maxParallel", "approval", "clusterSelector", "Manual"} {
		if !strings.Contains(explain, want) {
			t.Errorf("kubectl explain releaseset.spec.strategy.stages lacks %q:\n%s", want, explain)
		}
	}
}
