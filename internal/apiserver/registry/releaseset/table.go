package releaseset

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
)

var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Revision", Type: "string", Description: "The template revision that rolls out (status.revision, first 10 hex digits)."},
		{Name: "Stage", Type: "string", Description: "The first stage that is not Complete, with its phase; Complete when every stage is."},
		{Name: "Ready", Type: "string", Description: "Releases Ready at the revision / selected Clusters, over all stages."},
		registry.AgeColumn,
		{Name: "Updated", Type: "string", Priority: 1, Description: "Releases that have the revision / selected Clusters."},
		{Name: "Skipped", Type: "integer", Priority: 1, Description: "Selected Clusters that get no Release (status.skipped)."},
		{Name: "Message", Type: "string", Priority: 1, Description: "The message of the Halted condition when it is True, else of the Ready condition."},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		s, ok := obj.(*convoyv1alpha1.ReleaseSet)
		if !ok {
			return nil, fmt.Errorf("not a ReleaseSet: %T", obj)
		}
		var clusters, updated, ready int32
		for _, st := range s.Status.Stages {
			clusters += st.Clusters
			updated += st.Updated
			ready += st.Ready
		}
		readyCell, updatedCell := "", ""
		if len(s.Status.Stages) > 0 {
			readyCell = fmt.Sprintf("%d/%d", ready, clusters)
			updatedCell = fmt.Sprintf("%d/%d", updated, clusters)
		}
		return []interface{}{
			convoyv1alpha1.RenderRef(s.Status.Revision).Short(), StageCell(s.Status.Stages), readyCell,
			registry.Age(s.CreationTimestamp), updatedCell, int64(len(s.Status.Skipped)), message(s.Status.Conditions),
		}, nil
	},
}

// StageCell says where a rollout stands: the first stage that is not Complete, with
// its phase ("canary (Progressing)"), or "Complete" when every stage is; "" before the
// controller wrote stages.
func StageCell(stages []convoyv1alpha1.StageStatus) string {
	for _, st := range stages {
		if st.Phase != convoyv1alpha1.StageComplete {
			return fmt.Sprintf("%s (%s)", st.Name, st.Phase)
		}
	}
	if len(stages) == 0 {
		return ""
	}
	return string(convoyv1alpha1.StageComplete)
}

// message is the Halted condition's message when it is True, else the Ready condition's.
func message(conditions []metav1.Condition) string {
	if c := meta.FindStatusCondition(conditions, convoyv1alpha1.ConditionHalted); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message
	}
	if c := meta.FindStatusCondition(conditions, convoyv1alpha1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}
