package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// Decision 0163: a chart's hook Jobs keep the chart's names, as Helm creates them
// (kubectl logs job/<name>, selectors on job-name, runbooks), on the local control
// plane with kube-controller-manager running the Jobs.

// A pre-install,pre-upgrade hook Job named {{ .Release.Name }}-migrate (the testdata
// chart hooks, no delete policy: Helm's before-hook-creation) is the Job web-migrate on
// the cluster; an upgrade (a new render) deletes it and runs it again under the same
// name, and the Release goes Ready; web-check, a hook of a pre and a post event, runs
// in both phases under its one name. The periodic reconcile (interval 1 s) drives
// every step; the test writes the observer's health.
func TestChartHookJobKeepsTheChartsNameAcrossUpgrades(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Second), chartName("hooks"))
	install := renderRefOf(e.waitApplied("web", "True", v1.ReasonApplied))
	first := e.waitChartJobComplete("web-migrate", install)
	if got, want := first.Annotations[v1.AnnotationHookRun], hooks.RunID(hooks.RunInstall, v1.HookPreApply, install); got != want {
		t.Errorf("Job web-migrate annotation %s = %q, want %q", v1.AnnotationHookRun, got, want)
	}
	if e.chartJob("web-notify", install) == nil {
		t.Error("the post-install Job web-notify does not exist under the chart's name")
	}
	// web-check, a hook of pre-install and post-install, ran in both phases under its
	// name: the Job left is the PostApply run's.
	if got, want := e.waitChartJobComplete("web-check", install).Annotations[v1.AnnotationHookRun], hooks.RunID(hooks.RunInstall, v1.HookPostApply, install); got != want {
		t.Errorf("Job web-check annotation %s = %q, want %q", v1.AnnotationHookRun, got, want)
	}

	e.update("web", values(`{"greeting":"two"}`))
	var upgrade string
	e.eventually("the upgrade applied", func() (bool, string) {
		rel := e.release("web")
		upgrade = renderRefOf(rel)
		ls := rel.Status.LastSuccessful
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		return upgrade != install && ls != nil && ls.RenderRef == upgrade && c != nil && c.Reason == v1.ReasonApplied,
			fmt.Sprintf("render %s, lastSuccessful %+v, Applied %+v", upgrade, ls, c)
	})
	second := e.waitChartJobComplete("web-migrate", upgrade)
	if second.UID == first.UID {
		t.Fatal("the upgrade did not run the pre-upgrade hook again: Job web-migrate is the install's")
	}
	if got, want := second.Annotations[v1.AnnotationHookRun], hooks.RunID(hooks.RunUpgrade, v1.HookPreApply, upgrade); got != want {
		t.Errorf("Job web-migrate annotation %s = %q, want %q", v1.AnnotationHookRun, got, want)
	}
	if cm := e.configMap("web-config"); cm == nil || cm.Data["greeting"] != "two" {
		t.Errorf("ConfigMap web-config = %v, want the upgrade's greeting", cm)
	}
	var jobs batchv1.JobList
	if err := e.client.List(e.ctx, &jobs, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs.Items {
		names = append(names, j.Name)
	}
	if strings.Join(names, ",") != "web-check,web-migrate,web-notify" {
		t.Errorf("Jobs in the namespace %v, want the chart's web-check, web-migrate and web-notify only", names)
	}
	if got, want := e.waitChartJobComplete("web-check", upgrade).Annotations[v1.AnnotationHookRun], hooks.RunID(hooks.RunUpgrade, v1.HookPostApply, upgrade); got != want {
		t.Errorf("Job web-check annotation %s = %q, want %q", v1.AnnotationHookRun, got, want)
	}

	e.writeHealthy("web", upgrade)
	e.eventually("Ready True", func() (bool, string) {
		c := apimeta.FindStatusCondition(e.release("web").Status.Conditions, v1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("Ready %+v", c)
	})
}

// A Job of the hook's name that convoy did not create for the Release is neither
// overwritten nor deleted: the Release says which Job stands in the way and does
// nothing of the render; once the Job is gone, the hook runs and the render is
// applied.
func TestChartHookJobNameTakenByAnotherJobIsAnError(t *testing.T) {
	e := newEnv(t, envOptions{})
	theirs := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-migrate", Labels: map[string]string{"team": "db"}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "theirs", Image: "registry.example/theirs:1"}},
		}}},
	}
	if err := e.client.Create(e.ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.createRelease("web", automatic(), interval(time.Second), chartName("hooks"))
	rel := e.waitApplied("web", "False", v1.ReasonDeployFailed)
	c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
	for _, want := range []string{"Job " + e.ns + "/web-migrate", "no convoy Release", "delete it"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Applied message %q does not say %q", c.Message, want)
		}
	}
	e.consistently("their Job left as it is, nothing applied", 3*time.Second, func() (bool, string) {
		job := e.job("web-migrate")
		switch {
		case job == nil || job.UID != theirs.UID:
			return false, "their Job was deleted or replaced"
		case job.Labels[v1.LabelReleaseName] != "" || job.Annotations[v1.AnnotationHookRun] != "":
			return false, fmt.Sprintf("their Job was overwritten: labels %v, annotations %v", job.Labels, job.Annotations)
		case e.configMap("web-config") != nil:
			return false, "web-config applied"
		}
		return true, ""
	})

	if err := e.client.Delete(e.ctx, theirs, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	ref := renderRefOf(e.waitApplied("web", "True", v1.ReasonApplied))
	if e.chartJob("web-migrate", ref) == nil {
		t.Error("the hook's Job web-migrate was not created once their Job was gone")
	}
}

// What the API server enforces of a Job's name, which ChartJobName keeps to: a Job
// named with 63 characters is created, one of 64 is refused (422: its pods' job-name
// label would be too long); the name convoy gives a 64-character hook is created.
func TestJobNamesTheAPIServerAccepts(t *testing.T) {
	e := newEnv(t, envOptions{})
	job := func(name string) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "registry.example/c:1"}},
			}}},
		}
	}
	long := strings.Repeat("m", 63)
	cases := map[string]struct {
		name    string
		invalid bool
	}{
		"63 characters":                       {name: long},
		"64 characters":                       {name: long + "x", invalid: true},
		"convoy's name for 64 characters":     {name: hooks.ChartJobName(long + "x")},
		"dots (a DNS subdomain)":              {name: "web.v2-migrate"},
		"convoy's name for a colon":           {name: hooks.ChartJobName("web:migrate")},
		"a colon":                             {name: "web:migrate", invalid: true},
		"the chart's name, kept as it is":     {name: hooks.ChartJobName("web-migrate")},
		"uppercase, kept by no Kubernetes":    {name: "Web-Migrate", invalid: true},
		"convoy's name for uppercase letters": {name: hooks.ChartJobName("Web-Migrate")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := e.client.Create(e.ctx, job(tc.name))
			if got := apierrors.IsInvalid(err); got != tc.invalid || (!tc.invalid && err != nil) {
				t.Errorf("create Job %q: %v, want invalid %v", tc.name, err, tc.invalid)
			}
		})
	}
}
