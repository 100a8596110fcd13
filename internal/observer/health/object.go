package health

import (
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Result is the health of one object and why.
type Result struct {
	// Health is the object's health.
	Health v1.HealthStatus
	// Message says why, for people.
	Message string
}

// MessageMissing is the message of an object that is not on the cluster.
const MessageMissing = "The object is not on the cluster."

// ObjectStatus assesses one live object with kstatus. A nil object is not on the
// cluster: Missing. kstatus Current is Healthy, InProgress Progressing, Failed
// Degraded, NotFound Missing, Terminating Progressing (the object is going away; it
// turns Missing when it is gone) and anything else, or an error, Unknown.
func ObjectStatus(obj *unstructured.Unstructured) Result {
	if obj == nil {
		return Result{Health: v1.HealthMissing, Message: MessageMissing}
	}
	res, err := status.Compute(obj)
	if err != nil {
		return Result{Health: v1.HealthUnknown, Message: fmt.Sprintf("The health cannot be assessed: %v.", err)}
	}
	return Result{Health: fromKstatus(res.Status), Message: res.Message}
}

func fromKstatus(s status.Status) v1.HealthStatus {
	switch s {
	case status.CurrentStatus:
		return v1.HealthHealthy
	case status.InProgressStatus, status.TerminatingStatus:
		return v1.HealthProgressing
	case status.FailedStatus:
		return v1.HealthDegraded
	case status.NotFoundStatus:
		return v1.HealthMissing
	default:
		return v1.HealthUnknown
	}
}

// rank orders health states, worst first: Degraded > Missing > Progressing > Unknown >
// Healthy (docs/architecture.md, "The observer"). A state convoy does not know ranks as Unknown.
func rank(h v1.HealthStatus) int {
	switch h {
	case v1.HealthDegraded:
		return 4
	case v1.HealthMissing:
		return 3
	case v1.HealthProgressing:
		return 2
	case v1.HealthHealthy:
		return 0
	default:
		return 1
	}
}

// Worst is the worst of hs in the order Degraded > Missing > Progressing > Unknown >
// Healthy. Nothing at all is Healthy: an empty wave or render has nothing unhealthy.
func Worst(hs ...v1.HealthStatus) v1.HealthStatus {
	worst := v1.HealthHealthy
	for _, h := range hs {
		if rank(h) > rank(worst) {
			worst = h
			if rank(h) == 1 {
				worst = v1.HealthUnknown
			}
		}
	}
	return worst
}
