package releaseset

import (
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// setConditions computes Ready, Progressing and Halted from the stages of st, the
// halt (nil when none), the held mass removal (nil when none), spec.paused and the
// details of each stage (what it waits for, by stage name). Ready is never set by
// hand: it is True exactly when every stage is Complete and nothing is held.
func setConditions(st *v1.ReleaseSetStatus, in Input, h *halt, mass *massRemoval, details map[string]string) {
	type cond struct {
		status      metav1.ConditionStatus
		reason, msg string
	}
	var active *v1.StageStatus
	for i := range st.Stages {
		if st.Stages[i].Phase != v1.StageComplete {
			active = &st.Stages[i]
			break
		}
	}
	var ready, progressing cond
	halted := cond{metav1.ConditionFalse, v1.ReasonNotHalted, "No Release failed at this revision."}
	switch {
	case mass != nil:
		msg := mass.message(in.Set)
		ready = cond{metav1.ConditionFalse, v1.ReasonMassRemoval, msg}
		progressing = ready
		halted = cond{metav1.ConditionTrue, v1.ReasonMassRemoval, msg}
	case h != nil:
		ready = cond{metav1.ConditionFalse, h.reason, h.msg}
		progressing = ready
		halted = cond{metav1.ConditionTrue, h.reason, h.msg}
	case active == nil:
		msg := fmt.Sprintf("Every Release is Ready at revision %s (%d Clusters).", st.Revision, clusters(st))
		ready = cond{metav1.ConditionTrue, v1.ReasonRolloutComplete, msg}
		progressing = cond{metav1.ConditionFalse, v1.ReasonRolloutComplete, msg}
	case active.Phase == v1.StageWaitingForApproval:
		msg := fmt.Sprintf("Stage %s waits for approval of revision %s: kubectl convoy releaseset promote %s -n %s.",
			active.Name, st.Revision, in.Set.Name, in.Set.Namespace)
		ready = cond{metav1.ConditionFalse, v1.ReasonWaitingForApproval, msg}
		progressing = cond{metav1.ConditionTrue, v1.ReasonWaitingForApproval, msg}
	default:
		msg := fmt.Sprintf("Stage %s is rolling out revision %s: %d of %d Releases updated, %d Ready.%s",
			active.Name, st.Revision, active.Updated, active.Clusters, active.Ready, details[active.Name])
		ready = cond{metav1.ConditionFalse, v1.ReasonProgressing, msg}
		progressing = cond{metav1.ConditionTrue, v1.ReasonProgressing, msg}
	}
	if in.Set.Spec.Paused {
		msg := fmt.Sprintf("The ReleaseSet is paused (spec.paused): no Release is created, updated or deleted. "+
			"Resume it with kubectl convoy releaseset resume %s -n %s.", in.Set.Name, in.Set.Namespace)
		if active != nil {
			msg = fmt.Sprintf("Stage %s: %d of %d Releases at revision %s, %d Ready. %s",
				active.Name, active.Updated, active.Clusters, st.Revision, active.Ready, msg)
		}
		progressing = cond{metav1.ConditionFalse, v1.ReasonPaused, msg}
		if ready.reason == v1.ReasonProgressing || ready.reason == v1.ReasonWaitingForApproval {
			ready = cond{metav1.ConditionFalse, v1.ReasonPaused, msg}
		}
	}
	setCondition(st, in, v1.ConditionReady, ready.status, ready.reason, ready.msg)
	setCondition(st, in, v1.ConditionProgressing, progressing.status, progressing.reason, progressing.msg)
	setCondition(st, in, v1.ConditionHalted, halted.status, halted.reason, halted.msg)
}

func clusters(st *v1.ReleaseSetStatus) int32 {
	var n int32
	for _, s := range st.Stages {
		n += s.Clusters
	}
	return n
}

// halt is why the set stopped rolling its revision out: Halted's reason and message.
type halt struct {
	reason, msg string
}

// releaseFailed is the halt of o, a Release that failed at revision rev: it names the
// Release, says why it failed and what to do.
func releaseFailed(o observed, rev string) *halt {
	rel := o.rel
	const todo = "No other Release gets this revision: fix the cause, then change the template (a new revision starts the rollout over)."
	if c := o.applied; c != nil {
		why := strings.TrimSuffix(c.Message, ".")
		if why == "" {
			why = "no message"
		}
		return &halt{v1.ReasonReleaseFailed, fmt.Sprintf("Release %s (Cluster %s) cannot apply revision %s: Applied=False, reason %s: %s. "+
			"%s If the Release applies when it retries, the rollout goes on.", rel.Name, rel.Spec.Cluster, rev, c.Reason, why, todo)}
	}
	ro := rel.Status.Rollout
	why := strings.TrimSuffix(ro.Message, ".")
	if why == "" {
		why = "no message"
	}
	return &halt{v1.ReasonReleaseFailed, fmt.Sprintf("Release %s (Cluster %s) ended its rollout of revision %s %s: %s. %s",
		rel.Name, rel.Spec.Cluster, rev, ro.Phase, why, todo)}
}

// maxListed is how many Releases or Clusters a message names; it counts the others.
const maxListed = 5

// deadlineExceeded is the halt of stage sc, started at started, not Complete by
// deadline: it names the stage, the deadline, the Releases not Ready and why, the
// Clusters not Ready, and says what to do.
func deadlineExceeded(set *v1.ReleaseSet, sc StageClusters, notReady, unavailable []observed, started metav1.Time, deadline time.Time) *halt {
	var why []string
	for _, o := range notReady {
		name := ReleaseName(set.Name, o.cluster)
		switch {
		case o.rel == nil:
			why = append(why, fmt.Sprintf("%s (Cluster %s): not created yet", name, o.cluster))
		case !o.updated:
			why = append(why, fmt.Sprintf("%s (Cluster %s): not updated yet", name, o.cluster))
		case o.rel.Generation != o.rel.Status.ObservedGeneration:
			why = append(why, fmt.Sprintf("%s (Cluster %s): its controller has not observed the revision", name, o.cluster))
		default:
			msg := "no Ready condition"
			if c := apimeta.FindStatusCondition(o.rel.Status.Conditions, v1.ConditionReady); c != nil {
				msg = fmt.Sprintf("Ready=%s, %s: %s", c.Status, c.Reason, strings.TrimSuffix(c.Message, "."))
			}
			why = append(why, fmt.Sprintf("%s (Cluster %s): %s", name, o.cluster, msg))
		}
	}
	for _, o := range unavailable {
		why = append(why, fmt.Sprintf("Cluster %s is not Ready", o.cluster))
	}
	held := "every Release is Ready but has not baked for bakeTime yet"
	if len(why) > 0 {
		held = listed(why)
	}
	return &halt{v1.ReasonStageDeadlineExceeded, fmt.Sprintf("Stage %s did not complete within its progressDeadline %s "+
		"(started %s, deadline %s): %s. No other Release gets this revision: fix what holds these Releases, then change "+
		"the template (a new revision starts the rollout over), or raise the stage's progressDeadline to let this one go on.",
		sc.Stage.Name, durationOf(sc.Stage.ProgressDeadline), started.UTC().Format(time.RFC3339),
		deadline.UTC().Format(time.RFC3339), held)}
}

// listed joins the first maxListed of items with "; " and counts the others.
func listed(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:maxListed], "; "), len(items)-maxListed)
}

// stageDetail says, for the Progressing message, what a stage waits for besides its
// Releases: Clusters not Ready beyond maxUnavailable, and the bake. Empty when nothing.
// It names no changing time, only stored ones.
func stageDetail(stage v1.Stage, ss v1.StageStatus, unavailable []observed, clusterReady map[string]*metav1.Condition,
	bakedAt time.Time, done bool) string {
	var parts []string
	if len(unavailable) > 0 {
		var names []string
		for _, o := range unavailable {
			reason := "no Ready condition"
			if c := clusterReady[o.cluster]; c != nil {
				reason = fmt.Sprintf("Ready=%s, %s", c.Status, c.Reason)
			}
			names = append(names, fmt.Sprintf("%s (%s)", o.cluster, reason))
		}
		maxU := MaxUnavailable(stage.MaxUnavailable, int(ss.Clusters))
		if len(unavailable) > maxU {
			parts = append(parts, fmt.Sprintf(" Cluster not Ready: %s; the stage waits for it (maxUnavailable %d): "+
				"bring the Cluster back, or raise the stage's maxUnavailable.", listed(names), maxU))
		} else {
			parts = append(parts, fmt.Sprintf(" Cluster not Ready: %s, within maxUnavailable %d: its Release gets the revision when it is back.",
				listed(names), maxU))
		}
	}
	switch {
	case ss.Baking > 0 && done:
		parts = append(parts, fmt.Sprintf(" %d Releases baking (bakeTime %s): the stage completes at %s.",
			ss.Baking, stage.BakeTime.Duration, bakedAt.UTC().Format(time.RFC3339)))
	case ss.Baking > 0:
		parts = append(parts, fmt.Sprintf(" %d Releases baking (bakeTime %s).", ss.Baking, stage.BakeTime.Duration))
	}
	return strings.Join(parts, "")
}

// setCondition sets a condition of st at the set's generation; its lastTransitionTime
// changes only with its status.
func setCondition(st *v1.ReleaseSetStatus, in Input, typ string, status metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: in.Set.Generation, LastTransitionTime: in.Now,
	})
}
