package releaseset

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/clock"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// PromoteREST serves POST releasesets/<name>/promote: it acknowledges a mass removal
// the set holds back, or else approves the Manual stage that waits for approval. RBAC sees it as create on releasesets/promote. It takes
// no parameters and no body; it answers with the ReleaseSet as stored, or 409
// Conflict when there is nothing to approve (Promote).
type PromoteREST struct {
	store *genericregistry.Store
	clock clock.PassiveClock
}

var _ rest.Connecter = &PromoteREST{}
var _ rest.Storage = &PromoteREST{}

// New returns an empty ReleaseSet, the kind /promote answers with. The request has no
// options object: admission sees a /promote (CONNECT) without an object.
func (r *PromoteREST) New() runtime.Object { return &convoyv1alpha1.ReleaseSet{} }

// Destroy does nothing: the main resource's storage owns the store.
func (r *PromoteREST) Destroy() {}

// ConnectMethods allows only POST.
func (r *PromoteREST) ConnectMethods() []string { return []string{http.MethodPost} }

// NewConnectOptions: /promote has no query parameters.
func (r *PromoteREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

// Connect returns the handler of one /promote request.
func (r *PromoteREST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	return http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		obj, err := r.Promote(ctx, name)
		if err != nil {
			responder.Error(err)
			return
		}
		responder.Object(http.StatusOK, obj)
	}), nil
}

// Promote records the approval of the request's user on the ReleaseSet name in the
// namespace of ctx, in one read-modify-write in storage (retried there on conflict).
func (r *PromoteREST) Promote(ctx context.Context, name string) (*convoyv1alpha1.ReleaseSet, error) {
	user := ""
	if u, ok := genericapirequest.UserFrom(ctx); ok {
		user = u.GetName()
	}
	update := rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		s := old.(*convoyv1alpha1.ReleaseSet).DeepCopy()
		if err := Promote(s, user, metav1.NewTime(r.clock.Now())); err != nil {
			return nil, apierrors.NewConflict(convoyv1alpha1.Resource(convoyv1alpha1.ResourceReleaseSets), name, err)
		}
		return s, nil
	})
	obj, _, err := r.store.Update(ctx, name, update, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc,
		false, &metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*convoyv1alpha1.ReleaseSet), nil
}

// Promote acknowledges, on s, the mass removal the set holds back, or else approves
// the stage whose status phase is WaitingForApproval.
//
// When status.heldRemovals lists Releases (Halted, reason MassRemoval), it records
// them with now and user as the removal acknowledgement, replacing an earlier one:
// the set may then delete those Releases, and only those. Nothing else is approved
// by the same request.
//
// Otherwise it records {stage, status.revision, now, user} in approvals, replacing
// an earlier approval of the same stage and revision, and drops the approvals of
// other revisions. It changes nothing and says why when there is nothing to approve:
// the status does not describe the current spec yet, the set is halted (a failed
// Release is not overridden by a promote: a new revision starts over), or no stage
// waits.
func Promote(s *convoyv1alpha1.ReleaseSet, user string, now metav1.Time) error {
	st := &s.Status
	if st.ObservedGeneration != s.Generation || st.Revision == "" {
		return fmt.Errorf("the controller has not observed generation %d of the ReleaseSet yet (status is of generation %d): "+
			"try again when it has", s.Generation, st.ObservedGeneration)
	}
	if len(st.HeldRemovals) > 0 {
		// A mass removal held back: acknowledge exactly the Releases the status lists.
		s.RemovalAcknowledgement = &convoyv1alpha1.RemovalAcknowledgement{
			Releases: slices.Clone(st.HeldRemovals), AcknowledgedAt: &now, AcknowledgedBy: user,
		}
		return nil
	}
	if c := meta.FindStatusCondition(st.Conditions, convoyv1alpha1.ConditionHalted); c != nil && c.Status == metav1.ConditionTrue {
		return fmt.Errorf("the rollout of revision %s is halted (%s): promote does not override a halt; "+
			"a change of spec.template starts a new revision", st.Revision, c.Message)
	}
	waiting := -1
	for i := range st.Stages {
		if st.Stages[i].Phase == convoyv1alpha1.StageWaitingForApproval {
			waiting = i
			break
		}
	}
	if waiting < 0 {
		return fmt.Errorf("no stage waits for approval (%s)", stagePhases(st.Stages))
	}
	stage := st.Stages[waiting].Name
	approvals := []convoyv1alpha1.StageApproval{}
	for _, a := range s.Approvals {
		if a.Revision == st.Revision && a.Stage != stage {
			approvals = append(approvals, a)
		}
	}
	approvals = append(approvals, convoyv1alpha1.StageApproval{
		Stage: stage, Revision: st.Revision, ApprovedAt: &now, ApprovedBy: user,
	})
	s.Approvals = approvals
	return nil
}

// stagePhases lists the stages and their phases, for messages: "canary Complete, rest Progressing".
func stagePhases(stages []convoyv1alpha1.StageStatus) string {
	if len(stages) == 0 {
		return "the status lists no stages"
	}
	parts := make([]string, len(stages))
	for i, s := range stages {
		parts[i] = s.Name + " " + string(s.Phase)
	}
	return "stages: " + strings.Join(parts, ", ")
}
