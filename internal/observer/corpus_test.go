package observer

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/test/corpus"
)

// corpusValues are the values of the install of each corpus chart and of its
// upgrade: a change that makes a new render. A chart added to the corpus needs an
// entry. subchart-deps names a StorageClass (standard) the local control plane does
// not have, so its persistence is off; large-umbrella's claims take the default
// class.
var corpusValues = map[string]struct{ install, upgrade string }{
	"admission-webhook-jobs": {`{}`, `{"replicas": 2}`},
	"crd-versions":           {`{}`, `{"size": 2}`},
	"crds":                   {`{}`, `{"policy": {"mode": "audit"}}`},
	"generated":              {`{}`, `{"greeting": "hi"}`},
	"install-upgrade-hooks":  {`{}`, `{"version": "2"}`},
	"keep-on-uninstall":      {`{}`, `{"replicas": 2}`},
	"large-umbrella":         {`{}`, `{"global": {"podAnnotations": {"corpus.example.com/revision": "2"}}}`},
	"lookup":                 {`{}`, `{"greeting": "hi"}`},
	"operator-hooks":         {`{}`, `{"policyLevel": "restricted"}`},
	"pre-delete-hooks":       {`{}`, `{"replicas": 2}`},
	"schema":                 {`{}`, `{"replicaCount": 2}`},
	"subchart-deps": {`{"database": {"persistence": {"enabled": false}}}`,
		`{"database": {"persistence": {"enabled": false}}, "replicaCount": 3}`},
}

// leftoverKinds are the kinds the corpus charts create, searched for what a deleted
// Release left behind.
var leftoverKinds = []struct {
	gvk        schema.GroupVersionKind
	namespaced bool
}{
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, true},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, true},
	{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, true},
	{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, true},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, true},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, true},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, true},
	{schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, true},
	{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, false},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}, false},
	{schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}, false},
}

// Every chart of the pattern corpus (test/corpus) with the release controller and the
// observer, in automatic and in manual mode: the install reaches Applied and Healthy
// (hooks carried through by the observer's /syncs), an upgrade (a values change) makes
// a new render and reaches them again, a steady window (periodic reconciles every
// second in automatic mode) writes nothing and keeps the render ref, and the deletion
// leaves nothing of the Release behind but CRDs and objects with resource-policy keep.
// Charts with entries in corpusChecks are also checked for what they are for, from
// what happened on the cluster (corpus_patterns_test.go).
func TestCorpusChartsInstallUpgradeSteadyAndDelete(t *testing.T) {
	patterns, err := corpus.Charts()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := chartrepo.Build(filepath.Dir(corpus.Dir(patterns[0])))
	if err != nil {
		t.Fatal(err)
	}
	charts := httptest.NewServer(repo)
	t.Cleanup(charts.Close)

	for _, pattern := range patterns {
		vals, ok := corpusValues[pattern]
		if !ok {
			t.Errorf("corpus chart %s has no values in corpusValues", pattern)
			continue
		}
		for _, automatic := range []bool{true, false} {
			mode := map[bool]string{true: "automatic", false: "manual"}[automatic]
			t.Run(pattern+"/"+mode, func(t *testing.T) {
				e := newEnv(t)
				e.startController()
				e.startObserver(observerOptions{})
				name := "corpus"
				rel := &v1.Release{
					ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
					Spec: v1.ReleaseSpec{
						Chart:      v1.ChartSource{Repository: charts.URL, Name: pattern},
						Values:     &runtime.RawExtension{Raw: []byte(vals.install)},
						SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(automatic)},
					},
				}
				if automatic {
					rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: time.Second}
				}
				check, run := corpusChecks[pattern], &corpusRun{name: name}
				if check.installed != nil {
					run.events = e.recordEvents()
				}
				e.create(rel)

				first := e.corpusReady(name, automatic, "")
				if check.installed != nil {
					check.installed(e, run)
				}
				e.corpusSteady(name, first)

				e.corpusUpdate(name, vals.upgrade)
				second := e.corpusReady(name, automatic, first)
				if check.upgraded != nil {
					check.upgraded(e, run)
				}
				e.corpusSteady(name, second)

				kept := e.kept(name)
				if err := e.client.Delete(e.ctx, e.release(name)); err != nil {
					t.Fatal(err)
				}
				e.eventually("the Release deleted", func() (bool, string) {
					err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &v1.Release{})
					return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
				})
				e.eventually("nothing left but CRDs and kept objects", func() (bool, string) {
					left := e.leftovers(name)
					return len(left) == 0, "left: " + strings.Join(left, ", ")
				})
				if now := e.kept(name); !slices.Equal(now, kept) {
					t.Errorf("objects with resource-policy keep after the deletion: %v, want %v", now, kept)
				}
				if check.deleted != nil {
					check.deleted(e, run)
				}
			})
		}
	}
}

// corpusReady brings the Release name to Applied, Healthy and Ready with a render
// other than old (a /sync first in manual mode) and returns its render ref.
func (e *env) corpusReady(name string, automatic bool, old string) string {
	e.t.Helper()
	e.eventually("a render other than "+old, func() (bool, string) {
		r := e.release(name).Status.Render
		return r != nil && r.Ref != old, fmt.Sprintf("render %+v", r)
	})
	if !automatic {
		e.waitCondition(name, v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
		e.sync(name)
	}
	e.waitCondition(name, v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied)
	e.waitCondition(name, v1.ConditionHealthy, metav1.ConditionTrue, v1.ReasonHealthy)
	rel := e.waitCondition(name, v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	return rel.Status.Render.Ref
}

// corpusSteady checks a steady window: no write to the Release or its inventory and
// the same render ref, over several periodic reconciles (automatic mode) or the
// observer's quiet (manual mode).
func (e *env) corpusSteady(name, ref string) {
	e.t.Helper()
	rel, inv := e.release(name), e.inventory(name)
	e.consistently("no write in a steady window", 4*time.Second, func() (bool, string) {
		now, nowInv := e.release(name), e.inventory(name)
		switch {
		case now.Status.Render == nil || now.Status.Render.Ref != ref:
			return false, fmt.Sprintf("render ref %v, want %s", now.Status.Render, ref)
		case now.ResourceVersion != rel.ResourceVersion:
			return false, fmt.Sprintf("the Release was written: resourceVersion %s → %s, status %+v", rel.ResourceVersion, now.ResourceVersion, now.Status)
		case nowInv.ResourceVersion != inv.ResourceVersion:
			return false, fmt.Sprintf("the ReleaseInventory was written: resourceVersion %s → %s", inv.ResourceVersion, nowInv.ResourceVersion)
		}
		return true, ""
	})
}

// corpusUpdate sets the values of the Release name.
func (e *env) corpusUpdate(name, values string) {
	e.t.Helper()
	e.eventually("the values updated", func() (bool, string) {
		rel := e.release(name)
		rel.Spec.Values = &runtime.RawExtension{Raw: []byte(values)}
		err := e.client.Update(e.ctx, rel)
		return err == nil, fmt.Sprintf("update: %v", err)
	})
}

// leftovers lists the objects that carry the convoy labels of the Release name and
// are neither CRDs nor kept.
func (e *env) leftovers(name string) []string {
	e.t.Helper()
	return e.labelled(name, false)
}

// kept lists the objects that carry the convoy labels of the Release name and
// helm.sh/resource-policy keep.
func (e *env) kept(name string) []string {
	e.t.Helper()
	return e.labelled(name, true)
}

// labelled lists the objects of leftoverKinds that carry the convoy labels of the
// Release name, with (kept) or without helm.sh/resource-policy keep.
func (e *env) labelled(name string, kept bool) []string {
	e.t.Helper()
	var out []string
	for _, k := range leftoverKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		opts := []client.ListOption{client.MatchingLabels{v1.LabelReleaseName: name, v1.LabelReleaseNamespace: e.ns}}
		if k.namespaced {
			opts = append(opts, client.InNamespace(e.ns))
		}
		if err := e.client.List(e.ctx, list, opts...); err != nil {
			e.t.Fatalf("list %s: %v", k.gvk.Kind, err)
		}
		for _, o := range list.Items {
			if strings.EqualFold(strings.TrimSpace(o.GetAnnotations()["helm.sh/resource-policy"]), "keep") != kept {
				continue
			}
			out = append(out, k.gvk.Kind+" "+o.GetName())
		}
	}
	return out
}
