package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// A ValidatingAdmissionPolicy of the host cluster that matches every operation,
// CONNECT included, on every resource and subresource, and allows what it sees, changes
// nothing on the convoy API: convoy apiserver's admission evaluates it for a /sync as
// for any write, and /sync, /status, /pin, /mutations, /lifecycle and the Release
// itself work as without it. The policy sees a /sync's query parameters (SyncOptions),
// as it sees a pods/exec's PodExecOptions: it can deny a forced sync.
func TestValidatingAdmissionPolicyMatchingConnectOnEveryResource(t *testing.T) {
	ns := testNamespace(t)
	denyProbe(t, ns)
	c := admin(t)

	// CREATE and CONNECT (/sync, with and without force).
	r := create(t, release(ns, "podinfo"))
	synced, err := postSync(c, ctx(t), ns, "podinfo", "")
	if err != nil {
		t.Fatalf("POST /sync under the policy: %v", err)
	}
	if !syncTimeFormat.MatchString(synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt]) {
		t.Errorf("POST /sync: sync-requested-at = %q", synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
	}
	onlyChanged(t, r, synced, "sync")
	forced, err := postSync(c, ctx(t), ns, "podinfo", "true")
	if err != nil {
		t.Fatalf("POST /sync?force=true under the policy: %v", err)
	}
	if a := forced.Annotations; a[convoyv1alpha1.AnnotationSyncForceRequestedAt] == "" ||
		a[convoyv1alpha1.AnnotationSyncForceRequestedAt] != a[convoyv1alpha1.AnnotationSyncRequestedAt] {
		t.Errorf("POST /sync?force=true: annotations = %v, want both sync times equal", a)
	}

	// The admission kind of /sync is the kind of its options, in discovery too.
	raw, err := c.Get().AbsPath("/apis", convoyv1alpha1.SchemeGroupVersion.String()).DoRaw(ctx(t))
	if err != nil {
		t.Fatalf("discovery of %s: %v", convoyv1alpha1.SchemeGroupVersion, err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	kind := "(not listed)"
	for _, res := range list.APIResources {
		if res.Name == "releases/sync" {
			kind = res.Kind
		}
	}
	if kind != "SyncOptions" {
		t.Errorf("discovery: releases/sync has kind %s, want SyncOptions", kind)
	}

	// The policy sees force: it denies a forced sync of "no-force", before any write.
	create(t, release(ns, "no-force"))
	if _, err := postSync(c, ctx(t), ns, "no-force", ""); err != nil {
		t.Fatalf("POST /sync of no-force: %v", err)
	}
	_, err = postSync(c, ctx(t), ns, "no-force", "true")
	if statusCode(err) != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "no forced sync") {
		t.Errorf("POST /sync?force=true of no-force: %v, want 422 from the policy", err)
	}
	if a := get(t, ns, "no-force").Annotations; a[convoyv1alpha1.AnnotationSyncForceRequestedAt] != "" {
		t.Errorf("a denied forced sync wrote %s", a[convoyv1alpha1.AnnotationSyncForceRequestedAt])
	}

	// UPDATE and PATCH of each subresource that takes a Release.
	r = get(t, ns, "podinfo")
	r.Status.LastSuccessful = &convoyv1alpha1.LastSuccessful{RenderRef: refA}
	r = update(t, r, convoyv1alpha1.SubresourceStatus)
	if r.Status.LastSuccessful == nil {
		t.Fatalf("PUT /status under the policy stored no status")
	}
	in := r.DeepCopy()
	in.Pin = &convoyv1alpha1.Pin{RenderRef: refB, Reason: "incident 4711"}
	if got := update(t, in, convoyv1alpha1.SubresourcePin); got.Pin == nil || got.Pin.RenderRef != refB {
		t.Errorf("PUT /pin under the policy: pin = %+v", got.Pin)
	}
	if got, err := mergePatch(c, ctx(t), ns, "podinfo", convoyv1alpha1.SubresourcePin,
		map[string]interface{}{"pin": map[string]interface{}{"renderRef": nil, "reason": "freeze"}}); err != nil || got.Pin == nil || got.Pin.RenderRef != refA {
		t.Errorf("PATCH /pin under the policy: %v, pin %+v", err, got.Pin)
	}
	in = get(t, ns, "podinfo")
	in.Mutations = []convoyv1alpha1.Mutation{{
		Target:    convoyv1alpha1.MutationTarget{Kind: "Service", Name: "podinfo"},
		JSONPatch: []convoyv1alpha1.JSONPatchOperation{{Op: "remove", Path: "/metadata/labels/tier"}},
	}}
	if got := update(t, in, convoyv1alpha1.SubresourceMutations); len(got.Mutations) != 1 {
		t.Errorf("PUT /mutations under the policy: mutations = %+v", got.Mutations)
	}
	lifecycle := map[string]interface{}{"lifecycle": map[string]interface{}{"hooks": []interface{}{
		map[string]interface{}{"name": "migrate", "phase": "PreApply", "job": jobSpec()},
	}}}
	if got, err := mergePatch(c, ctx(t), ns, "podinfo", convoyv1alpha1.SubresourceLifecycle, lifecycle); err != nil ||
		got.Lifecycle == nil || len(got.Lifecycle.Hooks) != 1 {
		t.Errorf("PATCH /lifecycle under the policy: %v, lifecycle %+v", err, got.Lifecycle)
	}
	for _, sub := range []string{convoyv1alpha1.SubresourceStatus, convoyv1alpha1.SubresourcePin,
		convoyv1alpha1.SubresourceMutations, convoyv1alpha1.SubresourceLifecycle} {
		if err := c.Get().Namespace(ns).Resource("releases").Name("podinfo").SubResource(sub).Do(ctx(t)).Error(); err != nil {
			t.Errorf("GET /%s under the policy: %v", sub, err)
		}
	}

	// UPDATE, PATCH and DELETE of the Release.
	in = get(t, ns, "podinfo")
	in.Labels = map[string]string{"team": "a"}
	update(t, in, "")
	if _, err := mergePatch(c, ctx(t), ns, "podinfo", "", map[string]interface{}{"spec": map[string]interface{}{
		"chart": map[string]interface{}{"version": "6.7.2"}}}); err != nil {
		t.Errorf("PATCH of the Release under the policy: %v", err)
	}
	if err := c.Delete().Namespace(ns).Resource("releases").Name("podinfo").Do(ctx(t)).Error(); err != nil {
		t.Errorf("DELETE of the Release under the policy: %v", err)
	}
}

// denyProbe creates, in the host cluster, a ValidatingAdmissionPolicy and its binding
// (validationActions Deny, failurePolicy Fail) that match every operation on every
// resource and subresource in namespace ns: the policy allows every request but two
// markers, the creation of a Release named vap-probe and a forced /sync of the Release
// no-force. It returns once convoy apiserver enforces it (the probe is denied) and
// deletes both at the end of the test.
func denyProbe(t *testing.T, ns string) {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(env.admin)
	api := kube.AdmissionregistrationV1()
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "everything-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*/*"},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{
				{Expression: `request.name != "vap-probe"`, Message: "probe denied"},
				{
					Expression: `!(request.subResource == "sync" && request.name == "no-force" && has(object.force) && object.force)`,
					Message:    "no forced sync of no-force",
				},
			},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx(t), policy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ValidatingAdmissionPolicy %s: %v", policy.Name, err)
	}
	t.Cleanup(func() {
		_ = api.ValidatingAdmissionPolicies().Delete(context.Background(), policy.Name, metav1.DeleteOptions{})
	})
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ValidatingAdmissionPolicyBinding %s: %v", binding.Name, err)
	}
	t.Cleanup(func() {
		_ = api.ValidatingAdmissionPolicyBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})

	// convoy apiserver reads policies and bindings through informers of the host.
	probe := release(ns, "vap-probe")
	testenv.Eventually(t, ctx(t), "convoy apiserver to enforce the policy", time.Minute, func() (bool, string) {
		err := admin(t).Post().Namespace(ns).Resource("releases").Body(probe).Do(ctx(t)).Error()
		if err == nil {
			return false, "the probe Release was created"
		}
		return strings.Contains(err.Error(), "probe denied"), err.Error()
	})
}
