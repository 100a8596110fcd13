package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// Lifecycle hooks (docs/hooks.md) against the local
// control plane: kube-controller-manager runs the Jobs and kwok's simulated node
// completes their pods. The observer is not running here: the tests drive the next
// step with /sync (as the observer would when a batch completes) or with the periodic
// reconcile (interval), as each test says.

type hookOption func(*v1.Hook)

// hook adds a lifecycle hook whose Job kwok completes, unless opts change it.
func hook(name string, phase v1.HookPhase, batch int32, opts ...hookOption) releaseOption {
	return func(r *v1.Release) {
		if r.Lifecycle == nil {
			r.Lifecycle = &v1.Lifecycle{}
		}
		h := v1.Hook{Name: name, Phase: phase, Batch: batch, Job: &batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: name, Image: "registry.example/hook:1"}},
			}},
		}}
		for _, o := range opts {
			o(&h)
		}
		r.Lifecycle.Hooks = append(r.Lifecycle.Hooks, h)
	}
}

// unschedulable keeps the hook's pod off every node, so that the Job times out.
func unschedulable(timeout time.Duration) hookOption {
	return func(h *v1.Hook) {
		h.Job.Template.Spec.NodeSelector = map[string]string{"convoy.kumodo.io/test": "no-such-node"}
		h.Timeout = &metav1.Duration{Duration: timeout}
	}
}

// job reads the Job name of the test's namespace; nil when it does not exist.
func (e *env) job(name string) *batchv1.Job {
	e.t.Helper()
	job := &batchv1.Job{}
	err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, job)
	if err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		e.t.Fatalf("get Job %s: %v", name, err)
	}
	return job
}

// hookJob reads the Job of the lifecycle hook hook for the render ref; nil when it
// does not exist.
func (e *env) hookJob(release, hook, ref string) *batchv1.Job {
	e.t.Helper()
	return e.job(jobName(release, hook, ref))
}

func jobName(rel, hook, ref string) string { return hooks.JobName(rel, hook, ref) }

// chartJob reads the chart's hook Job name (its name as the chart has it) when a run
// of the render ref created it (v1.AnnotationHookRun); nil otherwise.
func (e *env) chartJob(name, ref string) *batchv1.Job {
	e.t.Helper()
	job := e.job(name)
	if job == nil || !strings.HasSuffix(job.Annotations[v1.AnnotationHookRun], "/"+ref) {
		return nil
	}
	return job
}

// waitJobComplete waits until the Job of the lifecycle hook hook for ref has succeeded.
func (e *env) waitJobComplete(rel, hook, ref string) *batchv1.Job {
	e.t.Helper()
	return e.waitComplete("the Job of hook "+hook, func() *batchv1.Job { return e.hookJob(rel, hook, ref) })
}

// waitChartJobComplete waits until the chart's hook Job name of a run of the render
// ref has succeeded.
func (e *env) waitChartJobComplete(name, ref string) *batchv1.Job {
	e.t.Helper()
	return e.waitComplete("the chart's hook Job "+name, func() *batchv1.Job { return e.chartJob(name, ref) })
}

// waitComplete waits until the Job that get reads has succeeded.
func (e *env) waitComplete(what string, get func() *batchv1.Job) *batchv1.Job {
	e.t.Helper()
	var job *batchv1.Job
	e.eventually(what+" complete", func() (bool, string) {
		job = get()
		if job == nil {
			return false, "no Job"
		}
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("Job status %+v", job.Status)
	})
	return job
}

// waitHooksWaiting waits until name is WaitingForHooks with a message naming job.
func (e *env) waitHooksWaiting(name, job string) *v1.Release {
	e.t.Helper()
	var rel *v1.Release
	e.eventually("WaitingForHooks naming "+job, func() (bool, string) {
		rel = e.release(name)
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		if c == nil {
			return false, "no Applied condition"
		}
		return c.Reason == v1.ReasonWaitingForHooks && strings.Contains(c.Message, job),
			fmt.Sprintf("Applied=%s/%s: %s", c.Status, c.Reason, c.Message)
	})
	return rel
}

func renderRefOf(rel *v1.Release) string {
	if rel.Status.Render == nil {
		return ""
	}
	return rel.Status.Render.Ref
}

// Two PreApply batches run in order before anything is applied, the apply follows,
// then the PostApply batch; the Release ends Applied. No interval: each next step is
// started by a /sync, as the observer sends one when a batch completes.
func TestHookBatchesRunInOrderAroundTheApply(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(),
		hook("migrate", v1.HookPreApply, 0), hook("seed", v1.HookPreApply, 1), hook("notify", v1.HookPostApply, 0))

	rel := e.waitHooksWaiting("web", "web-migrate-")
	ref := renderRefOf(rel)
	if cm := e.configMap("web-config"); cm != nil {
		t.Fatalf("web-config exists while PreApply batch 0 runs")
	}
	if e.hookJob("web", "seed", ref) != nil {
		t.Fatalf("the Job of batch 1 exists while batch 0 runs")
	}
	if got := rel.Status.Hooks; len(got) != 1 || got[0].Name != "migrate" || got[0].Job != jobName("web", "migrate", ref) || got[0].RenderRef != ref {
		t.Fatalf("status.hooks = %+v, want the running batch 0 (migrate) of render %s", got, ref)
	}
	if inv := e.inventory("web"); inv == nil {
		t.Fatalf("no ReleaseInventory while the first hook batch runs: the observer could not follow it")
	}
	migrate := e.waitJobComplete("web", "migrate", ref)
	for k, v := range map[string]string{v1.LabelReleaseName: "web", v1.LabelReleaseNamespace: e.ns, v1.LabelHook: "migrate"} {
		if migrate.Labels[k] != v {
			t.Errorf("hook Job label %s = %q, want %q", k, migrate.Labels[k], v)
		}
	}

	e.sync("web", false)
	e.waitHooksWaiting("web", "web-seed-")
	if cm := e.configMap("web-config"); cm != nil {
		t.Fatalf("web-config exists while PreApply batch 1 runs")
	}
	seed := e.waitJobComplete("web", "seed", ref)

	// The apply follows; then the PostApply batch runs with the render applied.
	e.sync("web", false)
	rel = e.waitHooksWaiting("web", "web-notify-")
	if ls := rel.Status.LastSuccessful; ls == nil || ls.RenderRef != ref {
		t.Errorf("lastSuccessful = %+v while the PostApply batch runs, want render %s", ls, ref)
	}
	cm := e.configMap("web-config")
	if cm == nil {
		t.Fatal("web-config not applied before the PostApply batch")
	}
	if !migrate.CreationTimestamp.Time.Before(seed.CreationTimestamp.Time) && !migrate.CreationTimestamp.Equal(&seed.CreationTimestamp) {
		t.Errorf("batch 1 Job created at %s, before batch 0's at %s", seed.CreationTimestamp, migrate.CreationTimestamp)
	}
	if done := seed.Status.CompletionTime; done == nil || cm.CreationTimestamp.Before(done) {
		t.Errorf("web-config created at %s, before the last PreApply Job completed at %v", cm.CreationTimestamp, done)
	}
	notify := e.waitJobComplete("web", "notify", ref)
	if notify.CreationTimestamp.Before(&cm.CreationTimestamp) {
		t.Errorf("the PostApply Job was created at %s, before the apply at %s", notify.CreationTimestamp, cm.CreationTimestamp)
	}

	e.sync("web", false)
	rel = e.waitApplied("web", "True", v1.ReasonApplied)
	if len(rel.Status.Hooks) != 0 {
		t.Errorf("status.hooks = %+v after the hooks are done, want none", rel.Status.Hooks)
	}
}

// A hook Job that times out gives HookFailed and nothing is applied; the periodic
// reconcile does not run it again; a forced sync does, and with the hook fixed the
// render is applied. No interval at first (and no observer, resync 10 minutes): only
// the requeue at the hook's timeout can notice the timeout.
func TestHookFailedHoldsTheRenderUntilAForcedSync(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), hook("migrate", v1.HookPreApply, 0, unschedulable(2*time.Second)))

	rel := e.waitApplied("web", "False", v1.ReasonHookFailed)
	ref := renderRefOf(rel)
	job := jobName("web", "migrate", ref)
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); !strings.Contains(c.Message, job) || !strings.Contains(c.Message, "timed out") {
		t.Errorf("HookFailed message %q does not name Job %s and the timeout", c.Message, job)
	}
	if cm := e.configMap("web-config"); cm != nil {
		t.Fatal("web-config applied although the PreApply hook failed")
	}
	first := e.hookJob("web", "migrate", ref)

	// The periodic reconcile (interval 1 s, a spec change) does not run it again.
	e.update("web", interval(time.Second))
	n := e.reconciles("web")
	e.waitReconciled("web", n+2)
	if again := e.hookJob("web", "migrate", ref); again == nil || again.UID != first.UID {
		t.Fatalf("the failed hook Job was run again by the periodic reconcile")
	}
	e.waitApplied("web", "False", v1.ReasonHookFailed)
	if cm := e.configMap("web-config"); cm != nil {
		t.Fatal("web-config applied at a periodic reconcile after HookFailed")
	}

	// A forced sync runs it again: a new Job, which fails again. (HookFailed is still
	// the status from before: wait for the forced reconcile to be handled first.)
	forceAt := e.sync("web", true).Annotations[v1.AnnotationSyncForceRequestedAt]
	e.eventually("a new Job of the failed hook", func() (bool, string) {
		j := e.hookJob("web", "migrate", ref)
		return j != nil && j.UID != first.UID, fmt.Sprintf("Job %v", j != nil)
	})
	e.eventually("the forced sync handled", func() (bool, string) {
		got := e.release("web").Status.LastHandledForceSyncAt
		return got != nil && got.UTC().Format(time.RFC3339) == forceAt, fmt.Sprintf("lastHandledForceSyncAt %v, force requested at %s", got, forceAt)
	})
	e.waitApplied("web", "False", v1.ReasonHookFailed)

	// With the hook fixed (through the main resource: used at the next reconcile), a
	// forced sync runs it anew and the render is applied.
	e.update("web", func(r *v1.Release) {
		r.Lifecycle.Hooks[0].Job.Template.Spec.NodeSelector = nil
		r.Lifecycle.Hooks[0].Timeout = nil
	})
	e.sync("web", true)
	e.waitApplied("web", "True", v1.ReasonApplied)
	if cm := e.configMap("web-config"); cm == nil {
		t.Fatal("web-config not applied after the fixed hook succeeded")
	}
}

// An unchanged render does not run its hooks again at the periodic reconcile (the
// Jobs keep their UIDs); a new render runs its own, and once they succeeded the hook
// Jobs of the older render are deleted. The periodic reconcile (interval 1 s) drives
// every step.
func TestHookJobsRunOncePerRenderAndOldOnesAreDeleted(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second), hook("migrate", v1.HookPreApply, 0), hook("notify", v1.HookPostApply, 0))
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	first := renderRefOf(rel)
	migrate, notify := e.hookJob("web", "migrate", first), e.hookJob("web", "notify", first)
	if migrate == nil || notify == nil {
		t.Fatalf("hook Jobs after the apply: migrate %v, notify %v", migrate != nil, notify != nil)
	}

	n := e.reconciles("web")
	e.waitReconciled("web", n+3)
	for _, j := range []*batchv1.Job{migrate, notify} {
		again := &batchv1.Job{}
		if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(j), again); err != nil || again.UID != j.UID {
			t.Fatalf("hook Job %s was run again for the unchanged render (err %v)", j.Name, err)
		}
	}
	e.waitApplied("web", "True", v1.ReasonApplied)

	e.update("web", values(`{"greeting":"two"}`))
	e.eventually("the new render applied", func() (bool, string) {
		rel := e.release("web")
		ls := rel.Status.LastSuccessful
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		return ls != nil && ls.RenderRef != first && c != nil && c.Reason == v1.ReasonApplied,
			fmt.Sprintf("lastSuccessful %+v, Applied %+v", ls, c)
	})
	second := e.release("web").Status.LastSuccessful.RenderRef
	if e.hookJob("web", "migrate", second) == nil || e.hookJob("web", "notify", second) == nil {
		t.Fatal("the new render's hook Jobs do not exist")
	}
	e.eventually("the older render's hook Jobs deleted", func() (bool, string) {
		a, b := e.hookJob("web", "migrate", first), e.hookJob("web", "notify", first)
		return a == nil && b == nil, fmt.Sprintf("migrate %v, notify %v", a != nil, b != nil)
	})
}

// inventory reads the ReleaseInventory name; nil when it does not exist.
func (e *env) inventory(name string) *v1.ReleaseInventory {
	e.t.Helper()
	inv := &v1.ReleaseInventory{}
	if err := e.client.Get(e.ctx, types.NamespacedName{Namespace: e.ns, Name: name}, inv); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		e.t.Fatalf("get ReleaseInventory %s: %v", name, err)
	}
	return inv
}

// Once a newer render's hooks succeed, the hook Jobs of older renders are deleted,
// except the last failed one, kept for its logs.
func TestHookJobsOfOlderRendersDeletedButTheLastFailed(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second), hook("migrate", v1.HookPreApply, 0))
	first := renderRefOf(e.waitApplied("web", "True", v1.ReasonApplied))

	e.update("web", values(`{"greeting":"two"}`), func(r *v1.Release) {
		unschedulable(2 * time.Second)(&r.Lifecycle.Hooks[0])
	})
	var second string
	e.eventually("the second render HookFailed", func() (bool, string) {
		rel := e.release("web")
		second = renderRefOf(rel)
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		return second != first && c != nil && c.Reason == v1.ReasonHookFailed, fmt.Sprintf("render %s, Applied %+v", second, c)
	})

	e.update("web", values(`{"greeting":"three"}`), func(r *v1.Release) {
		r.Lifecycle.Hooks[0].Job.Template.Spec.NodeSelector = nil
		r.Lifecycle.Hooks[0].Timeout = nil
	})
	e.eventually("the third render applied", func() (bool, string) {
		rel := e.release("web")
		ls := rel.Status.LastSuccessful
		return ls != nil && ls.RenderRef != first && ls.RenderRef != second, fmt.Sprintf("lastSuccessful %+v", ls)
	})
	e.eventually("the first render's hook Job deleted", func() (bool, string) {
		return e.hookJob("web", "migrate", first) == nil, "the Job exists"
	})
	if e.hookJob("web", "migrate", second) == nil {
		t.Error("the last failed hook Job (of the second render) was deleted")
	}
}

// A chart's Helm hook Jobs run as lifecycle hooks: pre-install as PreApply (before
// anything is applied), post-install as PostApply, with the convoy labels. The
// periodic reconcile (interval 1 s) drives every step.
func TestHookJobsOfTheChartRunAroundTheApply(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second), func(r *v1.Release) { r.Spec.Chart.Name = "hooks" })
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	ref := renderRefOf(rel)
	migrate, notify := e.waitChartJobComplete("web-migrate", ref), e.waitChartJobComplete("web-notify", ref)
	cm := e.configMap("web-config")
	if cm == nil {
		t.Fatal("web-config not applied")
	}
	if done := migrate.Status.CompletionTime; done == nil || cm.CreationTimestamp.Before(done) {
		t.Errorf("web-config created at %s, before the pre-install hook Job completed at %v", cm.CreationTimestamp, done)
	}
	if notify.CreationTimestamp.Before(&cm.CreationTimestamp) {
		t.Errorf("the post-install hook Job was created at %s, before the apply at %s", notify.CreationTimestamp, cm.CreationTimestamp)
	}
	if migrate.Labels[v1.LabelReleaseName] != "web" || migrate.Labels[v1.LabelHook] != "web-migrate" {
		t.Errorf("chart hook Job labels %v, want the convoy labels and the hook's", migrate.Labels)
	}
	if inv := e.inventory("web"); inv == nil || slices.ContainsFunc(inv.Objects, func(o v1.InventoryObject) bool { return o.Kind == "Job" }) {
		t.Errorf("inventory %+v: want it without the hook Jobs", inv)
	}
}

// SP-19 — seed: the next reconcile after ?force=true "skips the pre-apply dry run".
// Decision 0093: a forced sync of a render never applied, whose dry run is rejected,
// waits at its PreApply batch; status.hooks records the batch as forced, so the
// reconcile that carries it on applies without the dry run (the apply then fails on
// the object in the missing namespace: DeployFailed, web-config applied). Without the
// record that reconcile would be a first run's and the dry run would reject it again.
func TestSP19_AForcedSyncOfANewRenderCarriesThroughItsPreApplyBatches(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second), missingNamespace(e), hook("migrate", v1.HookPreApply, 0))
	rel := e.waitApplied("web", "False", v1.ReasonUnappliable)
	ref := renderRefOf(rel)
	first := e.waitJobComplete("web", "migrate", ref)

	forceAt := e.sync("web", true).Annotations[v1.AnnotationSyncForceRequestedAt]
	e.eventually("the forced sync handled", func() (bool, string) {
		got := e.release("web").Status.LastHandledForceSyncAt
		return got != nil && got.UTC().Format(time.RFC3339) == forceAt, fmt.Sprintf("lastHandledForceSyncAt %v", got)
	})
	if job := e.hookJob("web", "migrate", ref); job != nil && job.UID == first.UID {
		t.Fatal("the forced sync did not run the PreApply hook anew")
	}
	e.eventually("web-config applied by the forced apply after the PreApply batch", func() (bool, string) {
		return e.configMap("web-config") != nil, "no web-config: the reconcile after the batch ran the dry run"
	})
	e.eventually("the forced apply failed with DeployFailed", func() (bool, string) {
		return e.returned("web", v1.ReasonDeployFailed), "no reconcile returned DeployFailed"
	})
}
