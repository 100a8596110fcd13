package tenancy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// TestLockdownAppliesAsTheNamespacesServiceAccount: the control. What the team's
// ServiceAccount may do is done: the chart's ConfigMap is applied.
func TestLockdownAppliesAsTheNamespacesServiceAccount(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, true)
	tm.release("web", "configmap")
	if c := tm.applied("web", v1.ReasonApplied); c.Status != metav1.ConditionTrue {
		t.Errorf("Applied is %s", c.Status)
	}
	if err := tm.admin.Get(tm.ctx, client.ObjectKeyFromObject(configMap(tm.ns, "web")), &corev1.ConfigMap{}); err != nil {
		t.Errorf("the chart's ConfigMap: %v", err)
	}
}

// TestLockdownWithoutTheServiceAccountAppliesNothing: a namespace without the
// default ServiceAccount gets ServiceAccountNotFound saying which one to create.
func TestLockdownWithoutTheServiceAccountAppliesNothing(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, false)
	tm.release("web", "configmap")
	c := tm.applied("web", v1.ReasonServiceAccountNotFound)
	for _, want := range []string{"ServiceAccount " + tm.ns + "/" + deployer, "create it in namespace"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the message %q does not contain %q", c.Message, want)
		}
	}
	tm.nothingApplied("web")
}

// TestLockdownRefusesAClusterRoleBinding: (a) a chart's ClusterRoleBinding.
func TestLockdownRefusesAClusterRoleBinding(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, true)
	tm.release("crb", "clusterrolebinding")
	tm.refused("crb", `resource "clusterrolebindings"`, "crb-"+tm.ns+"-admin")
	tm.absent(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "crb-" + tm.ns + "-admin"}})
	tm.nothingApplied("crb")
}

// TestLockdownRefusesOtherNamespaces: (b) writes into kube-system or another team's
// namespace through targetNamespace, a hard-coded namespace, a hook Job or a
// mutation.
func TestLockdownRefusesOtherNamespaces(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, true)
	other := newTeam(t, true)
	toNamespace := func(ns string) func(*v1.Release) {
		return func(r *v1.Release) { r.Spec.TargetNamespace = ns }
	}
	moveTo := func(ns string) func(*v1.Release) {
		return func(r *v1.Release) {
			r.Mutations = []v1.Mutation{{Target: v1.MutationTarget{Kind: "ConfigMap"}, JSONPatch: []v1.JSONPatchOperation{
				{Op: "replace", Path: "/metadata/namespace", Value: &runtime.RawExtension{Raw: []byte(`"` + ns + `"`)}}}}}
		}
	}

	tm.release("to-system", "configmap", toNamespace("kube-system"))
	tm.release("to-other", "configmap", toNamespace(other.ns))
	tm.release("hardcoded", "hardcoded")
	// convoy runs a chart's hook Job in the Release's target namespace, whatever
	// namespace the chart gives it: here another team's.
	tm.release("hook", "hook", toNamespace(other.ns))
	tm.release("mutated", "configmap", moveTo("kube-system"))

	tm.refused("to-system", `resource "configmaps"`, `namespace "kube-system"`)
	tm.absent(configMap("kube-system", "to-system"))
	tm.refused("to-other", `resource "configmaps"`, `namespace "`+other.ns+`"`)
	tm.absent(configMap(other.ns, "to-other"))
	tm.refused("hardcoded", `resource "configmaps"`, `namespace "kube-system"`, "hardcoded-"+tm.ns)
	tm.absent(configMap("kube-system", "hardcoded-"+tm.ns))
	tm.nothingApplied("hardcoded")
	tm.refused("hook", `resource "jobs"`, `namespace "`+other.ns+`"`)
	var jobs batchv1.JobList
	if err := tm.admin.List(tm.ctx, &jobs, client.InNamespace(other.ns)); err != nil || len(jobs.Items) > 0 {
		t.Errorf("Jobs in the other team's namespace: %d (%v)", len(jobs.Items), err)
	}
	tm.absent(configMap(other.ns, "hook"))
	tm.nothingApplied("hook")
	tm.refused("mutated", `resource "configmaps"`, `namespace "kube-system"`)
	tm.absent(configMap("kube-system", "mutated"))
	tm.nothingApplied("mutated")
}

// TestLockdownRefusesReadingOtherSecrets: (c) a lookup of another team's Secret (the
// Release's targetNamespace is that team's namespace, which the render allows lookups
// in), and a valuesFrom Secret that the Release's ServiceAccount may not read. The
// Secret's data is in no Render.
func TestLockdownRefusesReadingOtherSecrets(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, true)
	other := newTeam(t, true)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other.ns, Name: "team-secret"},
		StringData: map[string]string{"password": "s3cr3t-of-the-other-team"}}
	if err := tm.admin.Create(tm.ctx, secret); err != nil {
		t.Fatal(err)
	}
	tm.release("lookup", "lookup", func(r *v1.Release) { r.Spec.TargetNamespace = other.ns })
	tm.refused("lookup", `resource "secrets"`, `secrets "team-secret"`, `namespace "`+other.ns+`"`)

	// valuesFrom names no namespace: it reads the Release's own. Acting as a
	// ServiceAccount that may read ConfigMaps only, the Secret is refused.
	serviceAccount(t, tm.ctx, tm.admin, tm.ns, "configmaps-only",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}})
	values := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tm.ns, Name: "values"},
		StringData: map[string]string{"values.yaml": "password: s3cr3t-values"}}
	if err := tm.admin.Create(tm.ctx, values); err != nil {
		t.Fatal(err)
	}
	tm.release("values", "configmap", func(r *v1.Release) {
		r.Spec.ServiceAccountName = "configmaps-only"
		r.Spec.ValuesFrom = []v1.ValuesReference{{Kind: v1.ValuesSourceSecret, Name: "values"}}
	})
	c := tm.applied("values", v1.ReasonForbidden)
	for _, want := range []string{`User "` + saUser(tm.ns, "configmaps-only") + `" cannot get resource "secrets"`, `secrets "values"`} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the message %q does not contain %q", c.Message, want)
		}
	}
	tm.nothingApplied("lookup")
	tm.nothingApplied("values")

	var renders v1.RenderList
	if err := tm.admin.List(tm.ctx, &renders, client.InNamespace(tm.ns)); err != nil {
		t.Fatal(err)
	}
	for _, r := range renders.Items {
		if b, _ := json.Marshal(r); strings.Contains(string(b), "s3cr3t") {
			t.Errorf("Render %s holds the Secret's data", r.Name)
		}
	}
}

// TestLockdownRefusesAClusterThatDoesNotSelectTheNamespace: (d) a Cluster whose
// namespaceSelector does not select the team's namespace.
func TestLockdownRefusesAClusterThatDoesNotSelectTheNamespace(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, true)
	kubeconfig, err := os.ReadFile(host.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.admin.Create(tm.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: tm.ns + "-kubeconfig"},
		Data: map[string][]byte{v1.DefaultKubeconfigKey: kubeconfig}}); err != nil {
		t.Fatal(err)
	}
	cluster := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-" + tm.ns},
		Spec: v1.ClusterSpec{
			Kubeconfig:        v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: "default", Name: tm.ns + "-kubeconfig"}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}},
		},
	}
	if err := tm.admin.Create(tm.ctx, cluster); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tm.admin.Delete(tm.ctx, cluster) })
	tm.release("remote", "configmap", func(r *v1.Release) { r.Spec.Cluster = cluster.Name })
	c := tm.applied("remote", v1.ReasonClusterNotReady)
	for _, want := range []string{`Cluster "` + cluster.Name + `" does not admit Releases of namespace "` + tm.ns + `"`, "namespaceSelector"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the message %q does not contain %q", c.Message, want)
		}
	}
	tm.nothingApplied("remote")
}

// TestLockdownDeletesAsTheServiceAccount: deleting a Release deletes what it applied,
// as its ServiceAccount; once the ServiceAccount is gone, the deletion leaves the
// objects in place rather than deleting them with the controller's own rights.
func TestLockdownDeletesAsTheServiceAccount(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, true)
	serviceAccount(t, tm.ctx, tm.admin, tm.ns, "short-lived", everything)
	tm.release("deleted", "configmap")
	tm.release("orphaned", "configmap", func(r *v1.Release) { r.Spec.ServiceAccountName = "short-lived" })
	tm.applied("deleted", v1.ReasonApplied)
	tm.applied("orphaned", v1.ReasonApplied)

	if err := tm.admin.Delete(tm.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: tm.ns, Name: "short-lived"}}); err != nil {
		t.Fatal(err)
	}
	// A change of the Release shows when the controller knows the ServiceAccount is gone.
	orphaned := &v1.Release{}
	if err := tm.user.Get(tm.ctx, client.ObjectKey{Namespace: tm.ns, Name: "orphaned"}, orphaned); err != nil {
		t.Fatal(err)
	}
	orphaned.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"changed":true}`)}
	if err := tm.user.Update(tm.ctx, orphaned); err != nil {
		t.Fatal(err)
	}
	tm.applied("orphaned", v1.ReasonServiceAccountNotFound)

	for _, name := range []string{"deleted", "orphaned"} {
		if err := tm.user.Delete(tm.ctx, &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: tm.ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"deleted", "orphaned"} {
		testenv.Eventually(t, tm.ctx, "Release "+name+" gone", time.Minute, func() (bool, string) {
			err := tm.admin.Get(tm.ctx, client.ObjectKey{Namespace: tm.ns, Name: name}, &v1.Release{})
			return apierrors.IsNotFound(err), fmt.Sprintf("%v", err)
		})
	}
	tm.absent(configMap(tm.ns, "deleted"))
	if err := tm.admin.Get(tm.ctx, client.ObjectKeyFromObject(configMap(tm.ns, "orphaned")), &corev1.ConfigMap{}); err != nil {
		t.Errorf("the ConfigMap of the Release whose ServiceAccount is gone: %v; want it left in place", err)
	}
}
