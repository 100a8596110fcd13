package observer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/test/corpus"
)

// corpusRun is one run of a corpus chart: its Release and what happened on the
// cluster.
type corpusRun struct {
	name   string
	events *objectEvents
}

// corpusCheck asserts what a corpus chart is for, beyond the run every chart gets:
// installed and upgraded are called once the Release is Ready with the install's and
// the upgrade's render, deleted once the Release is gone and nothing of it is left.
type corpusCheck struct {
	installed, upgraded, deleted func(e *env, r *corpusRun)
}

// corpusChecks are the checks of the corpus charts that hold patterns the generic
// run cannot see.
var corpusChecks = map[string]corpusCheck{
	"operator-hooks": {installed: operatorHooksInstalled, upgraded: operatorHooksUpgraded, deleted: operatorHooksDeleted},
	"large-umbrella": {installed: largeUmbrellaInstalled, upgraded: largeUmbrellaUpgraded, deleted: largeUmbrellaDeleted},
	"crd-versions":   {installed: crdVersionsApplied, upgraded: crdVersionsApplied},
}

// crdVersionsApplied: a CRD that keeps a version with served: false applies with its
// custom resources at the first attempt. The wave's wait for the CRDs' kinds waited
// for the unserved version too, ran to its timeout, and failed the apply with
// DeployFailed (a Warning event) before a retry passed.
func crdVersionsApplied(e *env, r *corpusRun) {
	e.t.Helper()
	var list eventsv1.EventList
	if err := e.client.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	for _, ev := range list.Items {
		if ev.Reason == v1.ReasonDeployFailed {
			e.t.Errorf("a %s event for %s: %s", ev.Reason, ev.Regarding.Name, ev.Note)
		}
	}
}

// hookGroup is a set of chart hooks of one event and weight, in the order Helm
// creates them: its kind order.
type hookGroup struct {
	what  string
	kinds []string
	// names are the objects' names; for a Job, its hook's name (the Job keeps the
	// chart's name and is labelled with the hook's name).
	names []string
	// namesSortOtherwise: the objects' names do not sort in kind order, so only Helm's
	// kind order (internal/hooks.Sort) gives the order of kinds.
	namesSortOtherwise bool
}

func (g hookGroup) has(ev objectEvent) bool {
	for i, kind := range g.kinds {
		if ev.Kind != kind {
			continue
		}
		if kind == "Job" && v1.HasNameLabel(ev.Labels, ev.Annotations, v1.LabelHook, g.names[i]) {
			return true
		}
		if kind != "Job" && ev.Name == g.names[i] {
			return true
		}
	}
	return false
}

// hookRuns waits until the group's objects were created runs times in all and
// checks that each run created them in the group's order; it returns the creations,
// by run.
func (e *env) hookRuns(r *corpusRun, g hookGroup, runs int) [][]objectEvent {
	e.t.Helper()
	want := runs * len(g.kinds)
	var created []objectEvent
	e.eventually(fmt.Sprintf("%d creations of the %s", want, g.what), func() (bool, string) {
		var err error
		created, err = r.events.matching(watch.Added, g.has)
		if err != nil {
			e.t.Fatal(err)
		}
		return len(created) >= want, fmt.Sprintf("created: %v", created)
	})
	if len(created) != want {
		e.t.Fatalf("the %s were created %d times, want %d (%d runs): %v", g.what, len(created), want, runs, created)
	}
	var out [][]objectEvent
	for i := range runs {
		run := created[i*len(g.kinds) : (i+1)*len(g.kinds)]
		var kinds []string
		for _, ev := range run {
			kinds = append(kinds, ev.Kind)
		}
		if !slices.Equal(kinds, g.kinds) {
			e.t.Errorf("run %d of the %s created %v, want Helm's kind order %v", i+1, g.what, run, g.kinds)
		}
		out = append(out, run)
	}
	return out
}

// happened returns the first event of type typ of kind/name; it fails the test when
// there is none.
func (e *env) happened(r *corpusRun, typ watch.EventType, kind, name string) objectEvent {
	e.t.Helper()
	var ev objectEvent
	e.eventually(fmt.Sprintf("%s %s %s", typ, kind, name), func() (bool, string) {
		var ok bool
		var err error
		ev, ok, err = r.events.first(typ, kind, name)
		if err != nil {
			e.t.Fatal(err)
		}
		return ok, "not seen"
	})
	return ev
}

// get reads an object of the cluster; nil when there is none.
func (e *env) get(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	e.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := e.client.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		e.t.Fatalf("get %s %s: %v", gvk.Kind, name, err)
	}
	return u
}

// mustGet reads an object of the cluster; it fails the test when there is none.
func (e *env) mustGet(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	e.t.Helper()
	u := e.get(gvk, namespace, name)
	if u == nil {
		e.t.Fatalf("%s %s/%s does not exist", gvk.Kind, namespace, name)
	}
	return u
}

var (
	gvkRole     = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}
	gvkRB       = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}
	gvkCR       = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	gvkCRB      = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}
	gvkSA       = schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}
	gvkCM       = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	gvkPVC      = schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}
	gvkPDB      = schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}
	gvkSTS      = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	gvkDS       = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	gvkDeploy   = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	gvkVWC      = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
	gvkCRD      = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	gvkEPSlices = schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSliceList"}
)

// --- operator-hooks ---

// The groups of hooks of operator-hooks, for the Release name in the namespace ns.
func upgradeCRDsHooks(name, ns string) hookGroup {
	cluster := name + "-admin-upgrade-crds-" + ns
	return hookGroup{what: "pre-install,pre-upgrade hooks of weight 1 (upgrade-crds)",
		kinds:              []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Job"},
		names:              []string{name + "-update-crds", cluster, cluster, name + "-update-crds-hook"},
		namesSortOtherwise: true}
}

func startupCheckHooks(name string) hookGroup {
	rbac := name + "-startupapicheck:create-cert"
	return hookGroup{what: "post-install hooks of weight -5 and 1 (startupapicheck)",
		kinds: []string{"ServiceAccount", "Role", "RoleBinding", "Job"},
		names: []string{name + "-startupapicheck", rbac, rbac, name + "-startupapicheck"}}
}

func preDeleteHooks(name string) hookGroup {
	n := name + "-cleanup"
	return hookGroup{what: "pre-delete hooks of weight 0",
		kinds: []string{"ServiceAccount", "Role", "RoleBinding", "Job"},
		names: []string{n, n, n, name + "-delete-webhook-configs"}}
}

// colonNamed checks that the objects named with ':' exist on the cluster.
func (e *env) colonNamed(r *corpusRun) {
	e.t.Helper()
	cluster := e.ns + "-" + r.name + "-webhook:subjectaccessreviews"
	e.mustGet(gvkRole, e.ns, r.name+":leaderelection")
	e.mustGet(gvkRB, e.ns, r.name+":leaderelection")
	e.mustGet(gvkCR, "", cluster)
	e.mustGet(gvkCRB, "", cluster)
}

// policySettings checks that the ConfigMap the webhook matches holds level, and
// that the webhook's Service has no endpoints.
func (e *env) policySettings(r *corpusRun, level string) {
	e.t.Helper()
	cm := e.mustGet(gvkCM, e.ns, r.name+"-policy-settings")
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "level"); got != level {
		e.t.Errorf("ConfigMap %s-policy-settings has level %q, want %q", r.name, got, level)
	}
	e.mustGet(gvkVWC, "", e.ns+"-"+r.name+"-policy")
	slices := &unstructured.UnstructuredList{}
	slices.SetGroupVersionKind(gvkEPSlices)
	if err := e.client.List(e.ctx, slices, client.InNamespace(e.ns), client.MatchingLabels{"kubernetes.io/service-name": r.name + "-policy"}); err != nil {
		e.t.Fatal(err)
	}
	for _, s := range slices.Items {
		if eps, _, _ := unstructured.NestedSlice(s.Object, "endpoints"); len(eps) > 0 {
			e.t.Errorf("the webhook's Service has endpoints (EndpointSlice %s): the pattern is a webhook without any", s.GetName())
		}
	}
}

func operatorHooksInstalled(e *env, r *corpusRun) {
	e.t.Helper()
	deployment := e.happened(r, watch.Added, "Deployment", r.name+"-controller")

	pre := e.hookRuns(r, upgradeCRDsHooks(r.name, e.ns), 1)[0]
	if job := pre[len(pre)-1]; !before(job, deployment) {
		e.t.Errorf("the pre-install Job %s was created after the Deployment (%s)", job, deployment)
	}
	post := e.hookRuns(r, startupCheckHooks(r.name), 1)[0]
	if !before(deployment, post[0]) {
		e.t.Errorf("the post-install hooks started (%s) before the Deployment was created (%s)", post[0], deployment)
	}
	// hook-succeeded: the post-install hooks are gone once the install is done.
	for _, ev := range post[:3] {
		gvk := map[string]schema.GroupVersionKind{"ServiceAccount": gvkSA, "Role": gvkRole, "RoleBinding": gvkRB}[ev.Kind]
		e.eventually(fmt.Sprintf("post-install hook %s %s deleted (hook-succeeded)", ev.Kind, ev.Name), func() (bool, string) {
			u := e.get(gvk, e.ns, ev.Name)
			return u == nil || u.GetDeletionTimestamp() != nil, "it exists"
		})
	}

	e.colonNamed(r)
	webhook := e.happened(r, watch.Added, "ValidatingWebhookConfiguration", e.ns+"-"+r.name+"-policy")
	matched := e.happened(r, watch.Added, "ConfigMap", r.name+"-policy-settings")
	if !before(webhook, matched) {
		e.t.Errorf("the webhook configuration (%s) was not applied before the ConfigMap it matches (%s)", webhook, matched)
	}
	e.policySettings(r, "baseline")
	e.mustGet(gvkPDB, e.ns, r.name+"-controller")
}

func operatorHooksUpgraded(e *env, r *corpusRun) {
	e.t.Helper()
	runs := e.hookRuns(r, upgradeCRDsHooks(r.name, e.ns), 2)
	// The Job keeps the chart's name (as Helm's before-hook-creation), created again for
	// the upgrade's run: hookRuns saw it created twice; the second is the new render's.
	if a, b := runs[0][3].Annotations[v1.AnnotationHookRun], runs[1][3].Annotations[v1.AnnotationHookRun]; a == "" || a == b {
		e.t.Errorf("the pre-upgrade Job %s is not a run of its own: hook runs %q then %q", runs[1][3].Name, a, b)
	}
	if a, b := runs[0][3].Name, runs[1][3].Name; a != b {
		e.t.Errorf("the pre-upgrade Job is named %s, the pre-install one %s: want the chart's one name", b, a)
	}
	// post-install only: the upgrade does not run the startup check again.
	e.hookRuns(r, startupCheckHooks(r.name), 1)
	e.colonNamed(r)
	// The update of the matched ConfigMap went through the unreachable webhook.
	e.policySettings(r, "restricted")
}

func operatorHooksDeleted(e *env, r *corpusRun) {
	e.t.Helper()
	run := e.hookRuns(r, preDeleteHooks(r.name), 1)[0]
	deleted := e.happened(r, watch.Deleted, "Deployment", r.name+"-controller")
	if job := run[len(run)-1]; !before(job, deleted) {
		e.t.Errorf("the pre-delete Job %s was created after the Deployment was deleted (%s)", job, deleted)
	}
}

// --- large-umbrella ---

// largeCRDs are the CRDs of large-umbrella's crds subchart: name and file.
var largeCRDs = map[string]string{
	"scrapers.telemetry.corpus.example.com":     "scrapers.yaml",
	"alertrouters.telemetry.corpus.example.com": "alertrouters.yaml",
}

// serverSideCRDs checks that the CRDs on the cluster hold the chart's whole schema,
// were applied server-side by convoy and carry no last-applied annotation.
func (e *env) serverSideCRDs() {
	e.t.Helper()
	for name, file := range largeCRDs {
		crd := e.mustGet(gvkCRD, "", name)
		if _, ok := crd.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			e.t.Errorf("CRD %s has a last-applied-configuration annotation: it was applied client-side", name)
		}
		applied := false
		for _, mf := range crd.GetManagedFields() {
			applied = applied || (mf.Manager == v1.FieldManager && mf.Operation == "Apply")
		}
		if !applied {
			e.t.Errorf("CRD %s has no server-side apply entry of field manager %s: %v", name, v1.FieldManager, crd.GetManagedFields())
		}
		b, err := os.ReadFile(filepath.Join(corpus.Dir("large-umbrella"), "charts", "crds", "crds", file))
		if err != nil {
			e.t.Fatal(err)
		}
		var want map[string]any
		if err := yaml.Unmarshal(b, &want); err != nil {
			e.t.Fatal(err)
		}
		if live, wanted := schemaJSON(e, crd.Object), schemaJSON(e, want); !bytes.Equal(live, wanted) {
			e.t.Errorf("CRD %s on the cluster has a schema of %d bytes, not the chart's %d (file of %d bytes)", name, len(live), len(wanted), len(b))
		}
	}
}

func schemaJSON(e *env, crd map[string]any) []byte {
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	if len(versions) == 0 {
		e.t.Fatal("a CRD without versions")
	}
	s, _, _ := unstructured.NestedFieldNoCopy(versions[0].(map[string]any), "schema", "openAPIV3Schema")
	b, err := json.Marshal(s)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// failurePolicy is the failurePolicy of the IsInstall webhook of large-umbrella.
func (e *env) failurePolicy(r *corpusRun) string {
	e.t.Helper()
	vwc := e.mustGet(gvkVWC, "", e.ns+"-"+r.name+"-operator")
	hooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
	if len(hooks) != 1 {
		e.t.Fatalf("the webhook configuration has %d webhooks, want 1", len(hooks))
	}
	p, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "failurePolicy")
	return p
}

// ephemeralStorage is the ephemeral-storage request of the first container of a
// workload.
func ephemeralStorage(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	s, _, _ := unstructured.NestedString(cs[0].(map[string]any), "resources", "requests", "ephemeral-storage")
	return s
}

func largeUmbrellaInstalled(e *env, r *corpusRun) {
	e.t.Helper()
	e.serverSideCRDs()
	if p := e.failurePolicy(r); p != "Ignore" {
		e.t.Errorf("after the install the webhook's failurePolicy is %q, want Ignore (.Release.IsInstall)", p)
	}
	// The four subcharts and the database's own dependency (the library's preset).
	sts := e.mustGet(gvkSTS, e.ns, r.name+"-database")
	if ready, _, _ := unstructured.NestedInt64(sts.Object, "status", "readyReplicas"); ready != 1 {
		e.t.Errorf("StatefulSet %s has %d ready replicas, want 1", sts.GetName(), ready)
	}
	if s := ephemeralStorage(sts); s != "50Mi" {
		e.t.Errorf("StatefulSet %s requests ephemeral-storage %q, want 50Mi (common.resources.preset nano)", sts.GetName(), s)
	}
	pvc := e.mustGet(gvkPVC, e.ns, "data-"+r.name+"-database-0")
	if phase, _, _ := unstructured.NestedString(pvc.Object, "status", "phase"); phase != "Bound" {
		e.t.Errorf("PersistentVolumeClaim %s is %s, want Bound", pvc.GetName(), phase)
	}
	ds := e.mustGet(gvkDS, e.ns, r.name+"-agent")
	desired, _, _ := unstructured.NestedInt64(ds.Object, "status", "desiredNumberScheduled")
	ready, _, _ := unstructured.NestedInt64(ds.Object, "status", "numberReady")
	if desired != 2 || ready != desired {
		e.t.Errorf("DaemonSet %s has %d of %d pods ready, want one on each of the 2 nodes", ds.GetName(), ready, desired)
	}
	if s := ephemeralStorage(ds); s != "20Mi" {
		e.t.Errorf("DaemonSet %s requests ephemeral-storage %q, want 20Mi", ds.GetName(), s)
	}
	e.mustGet(gvkDeploy, e.ns, r.name+"-dashboards")
	e.mustGet(gvkPDB, e.ns, r.name+"-operator")
	e.mustGet(gvkPDB, e.ns, r.name+"-database")
}

func largeUmbrellaUpgraded(e *env, r *corpusRun) {
	e.t.Helper()
	if p := e.failurePolicy(r); p != "Fail" {
		e.t.Errorf("after the upgrade the webhook's failurePolicy is %q, want Fail (.Release.IsInstall false)", p)
	}
	e.serverSideCRDs()
}

func largeUmbrellaDeleted(e *env, r *corpusRun) {
	e.t.Helper()
	// The claims of volumeClaimTemplates belong to the StatefulSet controller, not to
	// the chart: they stay, as after helm uninstall.
	if e.get(gvkPVC, e.ns, "data-"+r.name+"-database-0") == nil {
		e.t.Error("the StatefulSet's claim was deleted with the Release; helm uninstall leaves it")
	}
	// CRDs stay too.
	for name := range largeCRDs {
		e.mustGet(gvkCRD, "", name)
	}
}
