package observer

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/observer/health"
)

// testJob is a hook Job of release; kwok's nodes complete its pod, unless opts keep it
// from being scheduled.
func testJob(ns, release, name string, opts ...func(*corev1.PodSpec)) *batchv1.Job {
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "hook", Image: "registry.example/hook:1"}}}
	for _, o := range opts {
		o(&spec)
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: convoyLabels(ns, release)},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template:     corev1.PodTemplateSpec{Spec: spec},
		},
	}
}

// setHooks writes the running hook batch to the Release's status, as the controller
// does when it starts one.
func (e *env) setHooks(name string, hooks ...v1.HookStatus) {
	e.t.Helper()
	rel := e.release(name)
	rel.Status.Hooks = hooks
	if err := e.client.Status().Update(e.ctx, rel); err != nil {
		e.t.Fatalf("write the hooks of Release %s: %v", name, err)
	}
}

// hookTriggers is the number of hook batch occurrences the observer signalled.
func (r *running) hookTriggers() int {
	return int(testutil.ToFloat64(r.obs.metrics.syncTriggers.WithLabelValues(string(health.TriggerHookBatch))))
}

// SP-16: the observer assesses the hook Jobs of the running batch into the
// inventory's status.hooks and sends one /sync when the batch completes: when every
// Job succeeded, and when one timed out (the Release's hook timeout).
func TestSP16_HookBatchCompletionSendsOneSync(t *testing.T) {
	e := newEnv(t)
	ref := renderRef("9")
	rel := testRelease(e.ns, "app")
	hookJob := &batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "hook", Image: "registry.example/hook:1"}},
	}}}
	rel.Lifecycle = &v1.Lifecycle{Hooks: []v1.Hook{
		{Name: "migrate", Phase: v1.HookPostApply, Batch: 0, Job: hookJob},
		{Name: "notify", Phase: v1.HookPostApply, Batch: 1, Job: hookJob, Timeout: &metav1.Duration{Duration: 2 * time.Second}},
	}}
	e.create(rel)
	e.rendered("app", ref)
	e.create(testConfigMap(e.ns, "app", "config"))
	e.create(testInventory(e.ns, "app", ref, entry("ConfigMap", e.ns, "config", 0)))
	// No resync: only events and the timeout's own requeue make the observer look.
	obs := e.startObserver(observerOptions{})
	e.waitHealth("app", ref, v1.HealthHealthy)

	// Batch 0 starts: its Job is Pending until it exists, then it runs and succeeds.
	e.setHooks("app", v1.HookStatus{Name: "migrate", Batch: 0, Job: "app-migrate"})
	e.eventually("hook migrate Pending", func() (bool, string) {
		hs := e.inventory("app").Status.Hooks
		return len(hs) == 1 && hs[0].Phase == v1.HookJobPending, fmt.Sprintf("hooks %+v", hs)
	})
	e.create(testJob(e.ns, "app", "app-migrate"))
	e.eventually("hook migrate Succeeded", func() (bool, string) {
		hs := e.inventory("app").Status.Hooks
		return len(hs) == 1 && hs[0].Phase == v1.HookJobSucceeded, fmt.Sprintf("hooks %+v", hs)
	})
	e.eventually("one /sync for the completed batch", func() (bool, string) {
		return obs.hookTriggers() == 1, fmt.Sprintf("%d hook batch triggers", obs.hookTriggers())
	})
	e.consistently("no second /sync for the same batch", 3*time.Second, func() (bool, string) {
		return obs.hookTriggers() == 1, fmt.Sprintf("%d hook batch triggers", obs.hookTriggers())
	})

	// Batch 1's Job cannot be scheduled: it times out after the hook's 2 s.
	e.setHooks("app", v1.HookStatus{Name: "notify", Batch: 1, Job: "app-notify"})
	e.create(testJob(e.ns, "app", "app-notify", func(s *corev1.PodSpec) {
		s.NodeSelector = map[string]string{"convoy.kumodo.io/test": "no-such-node"}
	}))
	e.eventually("hook notify Failed (timed out)", func() (bool, string) {
		hs := e.inventory("app").Status.Hooks
		return len(hs) == 1 && hs[0].Phase == v1.HookJobFailed, fmt.Sprintf("hooks %+v", hs)
	})
	e.eventually("one /sync for the timed-out batch", func() (bool, string) {
		return obs.hookTriggers() == 2, fmt.Sprintf("%d hook batch triggers", obs.hookTriggers())
	})
}

// hookOf is a lifecycle hook whose Job kwok's nodes complete.
func hookOf(name string, phase v1.HookPhase, batch int32) v1.Hook {
	return v1.Hook{Name: name, Phase: phase, Batch: batch, Job: &batchv1.JobSpec{
		BackoffLimit: ptr.To[int32](0),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: name, Image: "registry.example/hook:1"}},
		}},
	}}
}

// hookJob reads the Job of hook for the render ref of the Release rel; nil when it
// does not exist.
func (e *env) hookJob(rel, hook, ref string) *batchv1.Job {
	e.t.Helper()
	job := &batchv1.Job{}
	err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: hooks.JobName(rel, hook, ref)}, job)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatalf("get the Job of hook %s: %v", hook, err)
	}
	return job
}

// Lifecycle hooks carried by the observer alone (docs/hooks.md, SP-16), with the real
// release controller and observer and no interval: two PreApply batches run in order
// before anything is applied, the apply follows the observer's /sync for the last
// PreApply batch, the PostApply batch runs after it, and the observer's /sync for that
// one ends the reconcile Applied. The test sends no /sync.
func TestHooksCarriedByTheObserversSyncs(t *testing.T) {
	// seed: "a /sync request from the observer health loop. The observer sends one
	// when a sync wave completes, when health assessment reaches a new render, or when
	// a batch of lifecycle hooks completes."
	e := newEnv(t)
	syncs := e.watchSyncs()
	e.startController()
	obs := e.startObserver(observerOptions{})
	rel := appRelease(e.ns, "app", valuesAvailable)
	rel.Lifecycle = &v1.Lifecycle{Hooks: []v1.Hook{
		hookOf("migrate", v1.HookPreApply, 0), hookOf("seed", v1.HookPreApply, 1), hookOf("notify", v1.HookPostApply, 0),
	}}
	e.create(rel)

	done := e.waitCondition("app", v1.ConditionApplied, metav1.ConditionTrue, v1.ReasonApplied)
	ref := done.Status.Render.Ref
	if ls := done.Status.LastSuccessful; ls == nil || ls.RenderRef != ref {
		t.Errorf("lastSuccessful %+v, want the render %s", ls, ref)
	}
	if len(done.Status.Hooks) != 0 {
		t.Errorf("status.hooks %+v once Applied, want none", done.Status.Hooks)
	}
	jobs := map[string]*batchv1.Job{}
	for _, h := range []string{"migrate", "seed", "notify"} {
		if jobs[h] = e.hookJob("app", h, ref); jobs[h] == nil || jobs[h].Status.CompletionTime == nil {
			t.Fatalf("hook %s: Job %+v, want one that completed", h, jobs[h])
		}
	}
	app := e.deployment(e.ns, "app")
	// Each step starts after the one before it completed (API times are in seconds:
	// "not before" is what they can show).
	order := []struct {
		what    string
		started metav1.Time
		after   string
		done    metav1.Time
	}{
		{"PreApply batch 1 (seed)", jobs["seed"].CreationTimestamp, "batch 0 (migrate) completed", *jobs["migrate"].Status.CompletionTime},
		{"the apply (Deployment app)", app.CreationTimestamp, "batch 1 (seed) completed", *jobs["seed"].Status.CompletionTime},
		{"PostApply batch 0 (notify)", jobs["notify"].CreationTimestamp, "the apply", app.CreationTimestamp},
	}
	for _, o := range order {
		if o.started.Before(&o.done) {
			t.Errorf("%s started at %s, before %s at %s", o.what, o.started.UTC(), o.after, o.done.UTC())
		}
	}
	// Each batch is carried by the first reconcile that finds its Jobs complete: most
	// often the observer's /sync, but a reconcile that the observer's previous status
	// write started may read a Job (directly) just after it completed, before the
	// observer's informer sees it, and then the observer has no batch left to signal.
	// So not every batch needs the observer's signal; at least one does, and the
	// counters (the test's watch and the observer's metric) may lag the status.
	e.eventually("the observer signalled a completed hook batch with a /sync", func() (bool, string) {
		return obs.hookTriggers() >= 1 && syncs.count("app") >= 1,
			fmt.Sprintf("%d hook-batch triggers, %d /sync requests seen on Release app", obs.hookTriggers(), syncs.count("app"))
	})
	t.Logf("%d of the 3 batches signalled by the observer", obs.hookTriggers())
}

// Decision 0090 — seed (SP-16): the observer sends a /sync "when a batch of
// lifecycle hooks completes". A forced sync re-runs a failed batch by deleting its
// Jobs and creating them anew under the same names; when the new run fails the same
// way, that is another completion, signalled again: the batch occurrence includes the
// Job's UID (status.hooks[].jobUID). To make the case deterministic the observer is
// down while the re-run fails: a restarted observer takes the stored status as what
// it signalled, so without the UID it would take the new failure for the old one and
// the controller would wait for a resync.
func TestSP16_AReRunThatFailsTheSameWayIsSignalledAgain(t *testing.T) {
	e := newEnv(t)
	ref := renderRef("9")
	const timeout = 2 * time.Second
	rel := testRelease(e.ns, "app")
	rel.Lifecycle = &v1.Lifecycle{Hooks: []v1.Hook{{
		Name: "migrate", Phase: v1.HookPreApply, Batch: 0, Timeout: &metav1.Duration{Duration: timeout},
		Job: &batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "hook", Image: "registry.example/hook:1"}},
		}}},
	}}}
	e.create(rel)
	e.create(testConfigMap(e.ns, "app", "config"))
	e.create(testInventory(e.ns, "app", ref, entry("ConfigMap", e.ns, "config", 0)))
	unschedulable := func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"convoy.kumodo.io/test": "no-such-node"} }
	e.setHooks("app", v1.HookStatus{Name: "migrate", Batch: 0, HookPhase: v1.HookPreApply, Job: "app-migrate", Phase: v1.HookJobRunning})

	// The first run times out: one /sync.
	first := testJob(e.ns, "app", "app-migrate", unschedulable)
	e.create(first)
	obs := e.startObserver(observerOptions{})
	e.eventually("run 1: hook migrate Failed (timed out) with the Job's UID", func() (bool, string) {
		hs := e.inventory("app").Status.Hooks
		return len(hs) == 1 && hs[0].Phase == v1.HookJobFailed && hs[0].JobUID == string(first.UID), fmt.Sprintf("hooks %+v", hs)
	})
	e.eventually("run 1: one /sync", func() (bool, string) {
		return obs.hookTriggers() == 1, fmt.Sprintf("%d hook batch triggers", obs.hookTriggers())
	})
	obs.stop()

	// The forced sync's re-run, while the observer is down: the Job is deleted and
	// created anew under the same name, and times out the same way.
	if err := e.client.Delete(e.ctx, first, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	e.eventually("the failed Job gone", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKeyFromObject(first), &batchv1.Job{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	second := testJob(e.ns, "app", "app-migrate", unschedulable)
	e.create(second)
	if second.UID == first.UID {
		t.Fatalf("the re-run's Job has the first run's UID %s", first.UID)
	}
	e.eventually("the re-run past its timeout", func() (bool, string) {
		return time.Since(second.CreationTimestamp.Time) > timeout+time.Second, "the re-run's Job is younger than its timeout"
	})

	obs = e.startObserver(observerOptions{})
	e.eventually("run 2: hook migrate Failed with the new Job's UID", func() (bool, string) {
		hs := e.inventory("app").Status.Hooks
		return len(hs) == 1 && hs[0].Phase == v1.HookJobFailed && hs[0].JobUID == string(second.UID), fmt.Sprintf("hooks %+v", hs)
	})
	e.eventually("run 2: signalled again", func() (bool, string) {
		return obs.hookTriggers() == 1, fmt.Sprintf("%d hook batch triggers after the restart", obs.hookTriggers())
	})
}

// Decision 0163: a chart's hook Job keeps the chart's name from run to run, so
// the Job of that name may be another run's (here the install's, Succeeded) while
// status.hooks records the upgrade's. The observer tells the runs apart by the Job's
// hook-run annotation: the upgrade's hook is Pending, and no batch completion is
// signalled, until the upgrade's own Job exists and succeeds.
func TestHookJobOfAnotherRunUnderTheSameNameIsNotThisRuns(t *testing.T) {
	e := newEnv(t)
	install, upgrade := renderRef("8"), renderRef("9")
	e.create(testRelease(e.ns, "app"))
	e.rendered("app", upgrade)
	e.create(testConfigMap(e.ns, "app", "config"))
	e.create(testInventory(e.ns, "app", upgrade, entry("ConfigMap", e.ns, "config", 0)))
	runJob := func(ref string, run v1.HookRun) *batchv1.Job {
		j := testJob(e.ns, "app", "app-migrate")
		j.Annotations = map[string]string{v1.AnnotationHookRun: hooks.RunID(run, v1.HookPreApply, ref)}
		return j
	}
	old := runJob(install, hooks.RunInstall)
	e.create(old)
	e.eventually("the install's Job complete", func() (bool, string) {
		j := &batchv1.Job{}
		if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(old), j); err != nil {
			return false, err.Error()
		}
		return j.Status.CompletionTime != nil, fmt.Sprintf("status %+v", j.Status)
	})
	obs := e.startObserver(observerOptions{})
	e.waitHealth("app", upgrade, v1.HealthHealthy)

	e.setHooks("app", v1.HookStatus{Name: "app-migrate", Batch: 0, HookPhase: v1.HookPreApply, Run: hooks.RunUpgrade,
		RenderRef: upgrade, Job: "app-migrate", Phase: v1.HookJobRunning})
	e.eventually("the upgrade's hook Pending", func() (bool, string) {
		hs := e.inventory("app").Status.Hooks
		return len(hs) == 1 && hs[0].Phase == v1.HookJobPending && hs[0].RenderRef == upgrade && hs[0].JobUID == "", fmt.Sprintf("hooks %+v", hs)
	})
	e.consistently("the install's Job is not taken for the upgrade's", 3*time.Second, func() (bool, string) {
		hs := e.inventory("app").Status.Hooks
		return len(hs) == 1 && hs[0].Phase == v1.HookJobPending && obs.hookTriggers() == 0,
			fmt.Sprintf("hooks %+v, %d hook batch triggers", hs, obs.hookTriggers())
	})

	// The controller deletes the install's Job and creates the upgrade's.
	if err := e.client.Delete(e.ctx, old, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	e.eventually("the install's Job gone", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKeyFromObject(old), &batchv1.Job{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	current := runJob(upgrade, hooks.RunUpgrade)
	e.create(current)
	e.eventually("the upgrade's hook Succeeded, with its Job's UID", func() (bool, string) {
		hs := e.inventory("app").Status.Hooks
		return len(hs) == 1 && hs[0].Phase == v1.HookJobSucceeded && hs[0].JobUID == string(current.UID), fmt.Sprintf("hooks %+v", hs)
	})
	e.eventually("one /sync for the upgrade's batch", func() (bool, string) {
		return obs.hookTriggers() == 1, fmt.Sprintf("%d hook batch triggers", obs.hookTriggers())
	})
}
