package releaseset

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// setConditions computes Ready, Progressing and Halted from the stages of st and the
// failed Release (nil when none failed at the revision). Ready is never set by hand:
// it is True exactly when every stage is Complete.
func setConditions(st *v1.ReleaseSetStatus, in Input, failed *observed) {
	var active *v1.StageStatus
	for i := range st.Stages {
		if st.Stages[i].Phase != v1.StageComplete {
			active = &st.Stages[i]
			break
		}
	}
	switch {
	case failed != nil:
		msg := haltMessage(failed.rel, st.Revision)
		setCondition(st, in, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonReleaseFailed, msg)
		setCondition(st, in, v1.ConditionProgressing, metav1.ConditionFalse, v1.ReasonReleaseFailed, msg)
		setCondition(st, in, v1.ConditionHalted, metav1.ConditionTrue, v1.ReasonReleaseFailed, msg)
		return
	case active == nil:
		msg := fmt.Sprintf("Every Release is Ready at revision %s (%d Clusters).", st.Revision, clusters(st))
		setCondition(st, in, v1.ConditionReady, metav1.ConditionTrue, v1.ReasonRolloutComplete, msg)
		setCondition(st, in, v1.ConditionProgressing, metav1.ConditionFalse, v1.ReasonRolloutComplete, msg)
	case active.Phase == v1.StageWaitingForApproval:
		msg := fmt.Sprintf("Stage %s waits for approval of revision %s: kubectl convoy releaseset promote %s -n %s.",
			active.Name, st.Revision, in.Set.Name, in.Set.Namespace)
		setCondition(st, in, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonWaitingForApproval, msg)
		setCondition(st, in, v1.ConditionProgressing, metav1.ConditionTrue, v1.ReasonWaitingForApproval, msg)
	default:
		msg := fmt.Sprintf("Stage %s is rolling out revision %s: %d of %d Releases updated, %d Ready.",
			active.Name, st.Revision, active.Updated, active.Clusters, active.Ready)
		setCondition(st, in, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonProgressing, msg)
		setCondition(st, in, v1.ConditionProgressing, metav1.ConditionTrue, v1.ReasonProgressing, msg)
	}
	setCondition(st, in, v1.ConditionHalted, metav1.ConditionFalse, v1.ReasonNotHalted, "No Release failed at this revision.")
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
