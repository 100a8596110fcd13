package release

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
		{Name: "Cluster", Type: "string", Description: "The target Cluster; empty: the host cluster."},
		{Name: "Mode", Type: "string", Description: "Automatic or Manual (spec.syncPolicy.automatic)."},
		{Name: "Applied", Type: "string", Description: "True, or the reason of the Applied condition."},
		{Name: "Healthy", Type: "string", Description: "True, or the reason of the Healthy condition."},
		{Name: "Render", Type: "string", Description: "The current render (first 10 hex digits)."},
		registry.AgeColumn,
		{Name: "Wave", Type: "integer", Priority: 1, Description: "spec.clusterWave."},
		{Name: "Pinned", Type: "string", Priority: 1, Description: "The pinned render, if any."},
		{Name: "Message", Type: "string", Priority: 1, Description: "The message of the Ready condition."},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		r, ok := obj.(*convoyv1alpha1.Release)
		if !ok {
			return nil, fmt.Errorf("not a Release: %T", obj)
		}
		mode := "Manual"
		if a := r.Spec.SyncPolicy.Automatic; a != nil && *a {
			mode = "Automatic"
		}
		render := ""
		if r.Status.Render != nil {
			render = convoyv1alpha1.RenderRef(r.Status.Render.Ref).Short()
		}
		pinned := ""
		if r.Pin != nil {
			pinned = convoyv1alpha1.RenderRef(r.Pin.RenderRef).Short()
		}
		message := ""
		if c := meta.FindStatusCondition(r.Status.Conditions, convoyv1alpha1.ConditionReady); c != nil {
			message = c.Message
		}
		return []interface{}{
			r.Spec.Cluster, mode,
			conditionCell(r.Status.Conditions, convoyv1alpha1.ConditionApplied),
			conditionCell(r.Status.Conditions, convoyv1alpha1.ConditionHealthy),
			render, registry.Age(r.CreationTimestamp),
			r.Spec.ClusterWave, pinned, message,
		}, nil
	},
}

// conditionCell is "True", or the condition's reason when it is not True.
func conditionCell(conditions []metav1.Condition, conditionType string) string {
	c := meta.FindStatusCondition(conditions, conditionType)
	switch {
	case c == nil:
		return ""
	case c.Status == metav1.ConditionTrue:
		return "True"
	case c.Reason != "":
		return c.Reason
	default:
		return string(c.Status)
	}
}
