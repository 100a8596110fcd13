package controller

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// Helm hooks of real charts (decision 0063; docs/compatibility.md#helm-hooks-of-a-chart), on the corpus charts of
// test/corpus against the local control plane: kube-controller-manager runs the Jobs,
// kwok completes their pods, and the ServiceAccount admission plugin refuses a pod
// whose ServiceAccount does not exist yet. No observer: the tests send the /sync it
// would send when a batch completes.

// hookObject reads a hook object; nil when it does not exist or is being deleted.
func (e *env) hookObject(obj client.Object, namespace, name string) client.Object {
	e.t.Helper()
	err := e.client.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		e.t.Fatalf("get %T %s: %v", obj, name, err)
	case obj.GetDeletionTimestamp() != nil:
		return nil
	}
	return obj
}

type hookObjectRef struct {
	obj       func() client.Object
	namespace string
	name      string
}

func (e *env) admissionHookObjects(rel string) []hookObjectRef {
	name := rel + "-admission"
	cluster := e.ns + "-" + name
	return []hookObjectRef{
		{func() client.Object { return &corev1.ServiceAccount{} }, e.ns, name},
		{func() client.Object { return &rbacv1.Role{} }, e.ns, name},
		{func() client.Object { return &rbacv1.RoleBinding{} }, e.ns, name},
		{func() client.Object { return &rbacv1.ClusterRole{} }, "", cluster},
		{func() client.Object { return &rbacv1.ClusterRoleBinding{} }, "", cluster},
	}
}

// The ingress-nginx pattern (admission-webhooks/job-patch): the Jobs' ServiceAccount
// and RBAC are hooks of pre-install,pre-upgrade,post-install,post-upgrade with
// before-hook-creation,hook-succeeded. They exist before each Job starts (else its pod
// is refused), in the PreApply and again in the PostApply run; hook-succeeded deletes
// them and the Jobs once each phase is done; a later reconcile of the same render
// does not create them again. An upgrade runs them again.
func TestChartHookObjectsExistBeforeTheirJobsAndGoWhenSucceeded(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("awj", automatic(), chartName("admission-webhook-jobs"))

	// PreApply (pre-install): the RBAC, then the create Job.
	rel := e.waitHooksWaiting("awj", "Jobs awj-admission-create.")
	ref := renderRefOf(rel)
	if run := rel.Status.Hooks[0].Run; run != v1.HookRunInstall {
		t.Errorf("status.hooks run = %q, want Install", run)
	}
	create := e.chartJob("awj-admission-create", ref)
	if create == nil {
		t.Fatal("no create Job while WaitingForHooks names it")
	}
	if create.Spec.TTLSecondsAfterFinished != nil {
		t.Errorf("the create Job has ttlSecondsAfterFinished %d: convoy must find it after it ends", *create.Spec.TTLSecondsAfterFinished)
	}
	e.objectsExistBefore("PreApply", create)
	if d := e.deployment("awj-controller"); d != nil {
		t.Fatal("the Deployment exists while a PreApply hook runs")
	}
	// The Job's pod was admitted with its ServiceAccount: the Job completes.
	e.waitChartJobComplete("awj-admission-create", ref)

	// The phase is done: hook-succeeded deletes the RBAC and the Job; the apply and the
	// PostApply run follow, with the RBAC applied again for the patch Job.
	e.sync("awj", false)
	e.waitHooksWaiting("awj", "Jobs awj-admission-patch.")
	if e.deployment("awj-controller") == nil {
		t.Fatal("the Deployment is not applied while the PostApply hook runs")
	}
	if job := e.job("awj-admission-create"); job != nil && job.DeletionTimestamp == nil {
		t.Error("the create Job is still there after its phase succeeded (hook-succeeded)")
	}
	patch := e.chartJob("awj-admission-patch", ref)
	e.objectsExistBefore("PostApply", patch)
	e.waitChartJobComplete("awj-admission-patch", ref)

	e.sync("awj", false)
	e.waitApplied("awj", "True", v1.ReasonApplied)
	e.hookObjectsGone("after the PostApply phase succeeded")

	// A later reconcile of the same render runs no hook and re-creates nothing.
	n := e.reconciles("awj")
	e.sync("awj", false)
	e.waitReconciled("awj", n)
	e.settle("awj")
	e.hookObjectsGone("after a reconcile of the same render")
	if job := e.job("awj-admission-create"); job != nil {
		t.Error("a reconcile of the same render created the create Job again")
	}

	// An upgrade (a values change) runs the pre-upgrade and post-upgrade hooks.
	e.update("awj", values(`{"replicas": 2}`))
	rel = e.waitHooksWaiting("awj", "Jobs awj-admission-create.")
	upgraded := renderRefOf(rel)
	if upgraded == ref {
		t.Fatal("the values change made no new render")
	}
	if run := rel.Status.Hooks[0].Run; run != v1.HookRunUpgrade {
		t.Errorf("status.hooks run = %q, want Upgrade", run)
	}
	e.objectsExistBefore("PreApply of the upgrade", e.chartJob("awj-admission-create", upgraded))
	e.waitChartJobComplete("awj-admission-create", upgraded)
	e.sync("awj", false)
	e.waitHooksWaiting("awj", "Jobs awj-admission-patch.")
	e.waitChartJobComplete("awj-admission-patch", upgraded)
	e.sync("awj", false)
	e.waitApplied("awj", "True", v1.ReasonApplied)
	e.hookObjectsGone("after the upgrade's hooks succeeded")
}

// objectsExistBefore checks that every hook object of the admission-webhook-jobs
// chart exists while job runs, created no later than the Job.
func (e *env) objectsExistBefore(phase string, job *batchv1.Job) {
	e.t.Helper()
	if job == nil {
		e.t.Fatalf("%s: no hook Job", phase)
	}
	for _, ref := range e.admissionHookObjects("awj") {
		obj := e.hookObject(ref.obj(), ref.namespace, ref.name)
		if obj == nil {
			e.t.Fatalf("%s: hook %T %s does not exist while Job %s runs", phase, ref.obj(), ref.name, job.Name)
		}
		created := obj.GetCreationTimestamp()
		if job.CreationTimestamp.Before(&created) {
			e.t.Errorf("%s: hook %T %s created at %s, after Job %s at %s", phase, obj, ref.name, created, job.Name, job.CreationTimestamp)
		}
	}
}

// hookObjectsGone checks that no hook object of the admission-webhook-jobs chart is
// left.
func (e *env) hookObjectsGone(when string) {
	e.t.Helper()
	for _, ref := range e.admissionHookObjects("awj") {
		e.eventually(fmt.Sprintf("%T %s gone %s", ref.obj(), ref.name, when), func() (bool, string) {
			return e.hookObject(ref.obj(), ref.namespace, ref.name) == nil, "it exists"
		})
	}
}

// deployment reads a Deployment of the test's namespace; nil when it does not exist.
func (e *env) deployment(name string) *appsv1.Deployment {
	e.t.Helper()
	d := &appsv1.Deployment{}
	if obj := e.hookObject(d, e.ns, name); obj == nil {
		return nil
	}
	return d
}

// Install vs upgrade (decision 0061): pre-install and post-install hooks run only
// for the first apply of a Release, pre-upgrade and post-upgrade for later renders; a
// database initialised on install is not initialised again by an upgrade, and a
// pre-install Secret keeps what the install wrote. The Release's deletion removes the
// hook objects too.
func TestInstallHooksRunOnceAndUpgradeHooksAfter(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("iuh", automatic(), chartName("install-upgrade-hooks"))

	rel := e.waitHooksWaiting("iuh", "Jobs init-db.")
	install := renderRefOf(rel)
	if s := e.secret("iuh-initial-password"); s == nil || string(s.Data["version"]) != "1" {
		t.Fatalf("pre-install Secret = %v, want it applied (weight -5) before the init-db Job", s)
	}
	if job := e.chartJob("migrate-db", install); job != nil {
		t.Error("the pre-upgrade Job runs on the install")
	}
	e.waitChartJobComplete("init-db", install)
	e.sync("iuh", false)
	e.waitHooksWaiting("iuh", "Jobs seed-data.")
	if job := e.chartJob("notify", install); job != nil {
		t.Error("the post-upgrade Job runs on the install")
	}
	e.waitChartJobComplete("seed-data", install)
	e.sync("iuh", false)
	e.waitApplied("iuh", "True", v1.ReasonApplied)

	e.update("iuh", values(`{"version": "2"}`))
	rel = e.waitHooksWaiting("iuh", "Jobs migrate-db.")
	upgrade := renderRefOf(rel)
	if upgrade == install {
		t.Fatal("the values change made no new render")
	}
	if job := e.chartJob("init-db", upgrade); job != nil {
		t.Error("the pre-install Job runs again on the upgrade")
	}
	e.waitChartJobComplete("migrate-db", upgrade)
	e.sync("iuh", false)
	e.waitHooksWaiting("iuh", "Jobs notify.")
	if job := e.chartJob("seed-data", upgrade); job != nil {
		t.Error("the post-install Job runs again on the upgrade")
	}
	e.waitChartJobComplete("notify", upgrade)
	e.sync("iuh", false)
	e.waitApplied("iuh", "True", v1.ReasonApplied)
	if cm := e.configMap("iuh-app"); cm == nil || cm.Data["version"] != "2" {
		t.Errorf("ConfigMap iuh-app = %v, want version 2", cm)
	}
	if s := e.secret("iuh-initial-password"); s == nil || string(s.Data["version"]) != "1" {
		t.Errorf("pre-install Secret after the upgrade = %v, want it kept as the install wrote it", s)
	}

	// The deletion leaves no hook object behind.
	if err := e.client.Delete(e.ctx, e.release("iuh")); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Release deleted", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "iuh"}, &v1.Release{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	e.eventually("the pre-install Secret deleted with the Release", func() (bool, string) {
		return e.hookObject(&corev1.Secret{}, e.ns, "iuh-initial-password") == nil, "it exists"
	})
}

// Delete hooks (decision 0066), the gatekeeper/kyverno pattern: deleting a Release
// runs its pre-delete hooks while its objects still exist, then deletes the objects,
// then runs its post-delete hooks; nothing of the chart is left.
func TestDeleteHooksRunAroundTheDeletion(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("pdh", automatic(), chartName("pre-delete-hooks"))
	rel := e.waitApplied("pdh", "True", v1.ReasonApplied)
	ref := renderRefOf(rel)
	if job := e.chartJob("pdh-remove-webhook", ref); job != nil {
		t.Fatal("a pre-delete Job ran on the install")
	}

	if err := e.client.Delete(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	var pre *batchv1.Job
	e.eventually("the pre-delete Job", func() (bool, string) {
		pre = e.chartJob("pdh-remove-webhook", ref)
		return pre != nil, "no Job"
	})
	if e.deployment("pdh-webhook") == nil {
		t.Error("the Deployment is gone while the pre-delete hook runs")
	}
	if e.hookObject(&corev1.ServiceAccount{}, e.ns, "pdh-cleanup") == nil {
		t.Error("the pre-delete hook's ServiceAccount does not exist while its Job runs")
	}
	pre = e.waitChartJobComplete("pdh-remove-webhook", ref)
	// The delete hook's Job keeps the chart's name, like the install's and upgrade's.
	if got, want := pre.Annotations[v1.AnnotationHookRun], hooks.RunID(hooks.RunDelete, v1.HookPreApply, ref); got != want {
		t.Errorf("Job pdh-remove-webhook annotation %s = %q, want %q", v1.AnnotationHookRun, got, want)
	}

	var post *batchv1.Job
	e.eventually("the post-delete Job", func() (bool, string) {
		post = e.chartJob("pdh-cleanup-crds", ref)
		return post != nil, "no Job"
	})
	if d := e.deployment("pdh-webhook"); d != nil {
		t.Error("the post-delete Job runs while the Deployment exists")
	}
	if post.CreationTimestamp.Before(pre.Status.CompletionTime) {
		t.Errorf("the post-delete Job was created at %s, before the pre-delete Job completed at %s", post.CreationTimestamp, pre.Status.CompletionTime)
	}
	e.eventually("the Release deleted", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "pdh"}, &v1.Release{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	e.eventually("no hook Job or hook object left", func() (bool, string) {
		for _, o := range []struct {
			obj  client.Object
			name string
		}{
			{&batchv1.Job{}, "pdh-remove-webhook"},
			{&batchv1.Job{}, "pdh-cleanup-crds"},
			{&corev1.ServiceAccount{}, "pdh-cleanup"},
		} {
			if e.hookObject(o.obj, e.ns, o.name) != nil {
				return false, fmt.Sprintf("%T %s exists", o.obj, o.name)
			}
		}
		return true, ""
	})
}

// A failed pre-delete hook holds the deletion and says so on the Release; with
// deletionPolicy Orphan the deletion goes on without the hooks and leaves the objects.
func TestAFailedPreDeleteHookHoldsTheDeletionUntilOrphan(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("pdf", automatic(), chartName("pre-delete-hooks"), values(`{"failPreDelete": true}`))
	rel := e.waitApplied("pdf", "True", v1.ReasonApplied)
	if err := e.client.Delete(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	rel = e.waitApplied("pdf", "False", v1.ReasonHookFailed)
	c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
	for _, want := range []string{"pdf-remove-webhook", "deletion waits", "--force", "Orphan"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("HookFailed message %q does not say %q", c.Message, want)
		}
	}
	if e.deployment("pdf-webhook") == nil {
		t.Fatal("the objects were deleted although the pre-delete hook failed")
	}
	// A forced /sync runs the failed hook again (a new Job); it fails again, and the
	// deletion still waits.
	ref := renderRefOf(rel)
	first := e.chartJob("pdf-remove-webhook", ref)
	e.sync("pdf", true)
	e.eventually("the pre-delete Job run again", func() (bool, string) {
		job := e.chartJob("pdf-remove-webhook", ref)
		if job == nil || (first != nil && job.UID == first.UID) {
			return false, "the first Job, or none"
		}
		return e.release("pdf").Status.LastHandledForceSyncAt != nil, "lastHandledForceSyncAt not written"
	})
	e.waitApplied("pdf", "False", v1.ReasonHookFailed)
	if e.deployment("pdf-webhook") == nil {
		t.Fatal("the objects were deleted although the re-run pre-delete hook failed")
	}

	// The edit to Orphan, an update event, reconciles the held deletion at once: the
	// test's resync is 10 minutes, and a held deletion is not polled (decision 0173).
	e.update("pdf", func(r *v1.Release) { r.Spec.DeletionPolicy = v1.DeletionPolicyOrphan })
	e.eventually("the Release deleted", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "pdf"}, &v1.Release{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	if e.deployment("pdf-webhook") == nil {
		t.Error("deletionPolicy Orphan deleted the Deployment")
	}
}
