package releaseset

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// setConditions computes Ready, Progressing and Halted from the stages of st, the
// failed Release (nil when none failed at the revision), the held mass removal (nil
// when none) and spec.paused. Ready is never set by hand: it is True exactly when
// every stage is Complete and nothing is held.
func setConditions(st *v1.ReleaseSetStatus, in Input, failed *observed, mass *massRemoval) {
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
	case failed != nil:
		msg := haltMessage(failed.rel, st.Revision)
		ready = cond{metav1.ConditionFalse, v1.ReasonReleaseFailed, msg}
		progressing = ready
		halted = cond{metav1.ConditionTrue, v1.ReasonReleaseFailed, msg}
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
		msg := fmt.Sprintf("Stage %s is rolling out revision %s: %d of %d Releases updated, %d Ready.",
			active.Name, st.Revision, active.Updated, active.Clusters, active.Ready)
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

// haltMessage names the failed Release and says why it failed and what to do.
func haltMessage(rel *v1.Release, rev string) string {
	ro := rel.Status.Rollout
	why := strings.TrimSuffix(ro.Message, ".")
	if why == "" {
		why = "no message"
	}
	return fmt.Sprintf("Release %s (Cluster %s) ended its rollout of revision %s %s: %s. No other Release gets this "+
		"revision; change the template (a new revision starts the rollout over).", rel.Name, rel.Spec.Cluster, rev, ro.Phase, why)
}

// setCondition sets a condition of st at the set's generation; its lastTransitionTime
// changes only with its status.
func setCondition(st *v1.ReleaseSetStatus, in Input, typ string, status metav1.ConditionStatus, reason, msg string) {
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: in.Set.Generation, LastTransitionTime: in.Now,
	})
}
