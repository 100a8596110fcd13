package notify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/source"
)

// ReasonVerificationFailed is the Applied reason of a Release whose chart failed its
// signature verification (verified charts); the event VerificationFailed follows it.
const ReasonVerificationFailed = "VerificationFailed"

// Kinds of the objects events are about.
const (
	KindRelease    = "Release"
	KindReleaseSet = "ReleaseSet"
)

// Event is something that happened to a Release or a ReleaseSet, as an Alert sends it.
type Event struct {
	// Type is the event, one of spec.events.
	Type v1.AlertEvent
	// Object is what it happened to.
	Object Object
	// Render is the render it is about: for a ReleaseSet, its revision and source.
	Render Render
	// Reason and Message are the condition's (or the rollout's) reason and message.
	Reason  string
	Message string
	// Time is when it happened, as the status records it (a condition's
	// lastTransitionTime, the render's renderedAt, a drift's since, …); zero when the
	// status records no time.
	Time time.Time
	// Key identifies the event among all events: the object's UID, the event and what
	// makes this occurrence another one (the render, the revision and stage, the start
	// of a rollout or of a wait). The same state of the same object always makes the
	// same key.
	Key string
	// Stage is the ReleaseSet's stage (PromotionWaiting).
	Stage string
}

// Object names the object an event is about.
type Object struct {
	Kind      string
	Namespace string
	Name      string
	UID       types.UID
	// Labels are the object's labels (an Alert selects by them); for a drift, the
	// Release's.
	Labels map[string]string
}

// Render is the render an event is about.
type Render struct {
	// Ref is the render ref (sha256:…) or, for a ReleaseSet, its revision.
	Ref          string
	ChartVersion string
	Commit       string
}

// Transition returns the events of the change of an object from prev to cur: the
// events cur's state makes that prev's state did not. prev nil (an object seen for the
// first time) returns every event of cur's state. Both are *v1.Release,
// *v1.ReleaseSet or *v1.ReleaseInventory; for an inventory, rel is its Release (its
// labels select; nil: no event).
func Transition(prev, cur any, rel *v1.Release) []Event {
	now := States(cur, rel)
	if len(now) == 0 || prev == nil {
		return now
	}
	before := States(prev, rel)
	var out []Event
	for _, e := range now {
		if !slices.ContainsFunc(before, func(b Event) bool { return b.Key == e.Key }) {
			out = append(out, e)
		}
	}
	return out
}

// States returns the events that obj's state stands for, each with its key: a
// Release that waits for /sync with a render not applied yet stands for
// ApprovalWaiting of that render, and so on.
func States(obj any, rel *v1.Release) []Event {
	switch o := obj.(type) {
	case *v1.Release:
		if o == nil {
			return nil
		}
		return releaseStates(o)
	case *v1.ReleaseSet:
		if o == nil {
			return nil
		}
		return releaseSetStates(o)
	case *v1.ReleaseInventory:
		if o == nil || rel == nil {
			return nil
		}
		return inventoryStates(o, rel)
	}
	return nil
}

func objectOf(kind string, m metav1.ObjectMeta) Object {
	return Object{Kind: kind, Namespace: m.Namespace, Name: m.Name, UID: m.UID, Labels: m.Labels}
}

func key(uid types.UID, event v1.AlertEvent, parts ...string) string {
	return strings.Join(append([]string{string(uid), string(event)}, parts...), "/")
}

func unix(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return fmt.Sprint(t.Unix())
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// currentRender is the Release's status.render, or only ref when status.render is
// another render.
func currentRender(r *v1.Release, ref string) Render {
	if s := r.Status.Render; s != nil && (ref == "" || s.Ref == ref) {
		return Render{Ref: s.Ref, ChartVersion: s.ChartVersion, Commit: s.Commit}
	}
	if ls := r.Status.LastSuccessful; ls != nil && ref != "" && ls.RenderRef == ref {
		return Render{Ref: ls.RenderRef, ChartVersion: ls.ChartVersion, Commit: ls.Commit}
	}
	return Render{Ref: ref}
}

func releaseStates(r *v1.Release) []Event {
	obj := objectOf(KindRelease, r.ObjectMeta)
	conds := r.Status.Conditions
	applied := apimeta.FindStatusCondition(conds, v1.ConditionApplied)
	healthy := apimeta.FindStatusCondition(conds, v1.ConditionHealthy)
	ready := apimeta.FindStatusCondition(conds, v1.ConditionReady)
	var out []Event
	add := func(e Event) {
		e.Object = obj
		out = append(out, e)
	}
	lastSuccessful := ""
	if ls := r.Status.LastSuccessful; ls != nil {
		lastSuccessful = ls.RenderRef
	}
	if applied != nil {
		switch applied.Reason {
		case v1.ReasonWaitingForSync:
			// A render waits for /sync; not one already applied (a manual Release in
			// sync reports Applied).
			if rs := r.Status.Render; rs != nil && rs.Ref != "" && rs.Ref != lastSuccessful {
				add(Event{Type: v1.AlertEventApprovalWaiting, Render: currentRender(r, rs.Ref),
					Reason: applied.Reason, Message: applied.Message,
					Time: later(applied.LastTransitionTime.UTC(), timeOf(rs.RenderedAt)),
					Key:  key(r.UID, v1.AlertEventApprovalWaiting, rs.Ref)})
			}
		case v1.ReasonHookFailed, ReasonVerificationFailed:
			ev := v1.AlertEventHookFailed
			if applied.Reason == ReasonVerificationFailed {
				ev = v1.AlertEventVerificationFailed
			}
			ref := ""
			if rs := r.Status.Render; rs != nil {
				ref = rs.Ref
			}
			t := applied.LastTransitionTime.UTC()
			add(Event{Type: ev, Render: currentRender(r, ref), Reason: applied.Reason, Message: applied.Message,
				Time: t, Key: key(r.UID, ev, ref, unix(t))})
		}
	}
	if ro := r.Status.Rollout; ro != nil && (ro.Phase == v1.RolloutFailed || ro.Phase == v1.RolloutRolledBack) {
		ev, reason := v1.AlertEventRolloutFailed, string(v1.AlertEventRolloutFailed)
		if ro.Phase == v1.RolloutRolledBack {
			ev, reason = v1.AlertEventRolledBack, v1.ReasonRolledBack
		}
		t := timeOf(ro.StartedAt)
		if applied != nil {
			t = later(t, applied.LastTransitionTime.UTC())
		}
		add(Event{Type: ev, Render: currentRender(r, ro.RenderRef), Reason: reason, Message: ro.Message,
			Time: t, Key: key(r.UID, ev, ro.RenderRef, unix(timeOf(ro.StartedAt)))})
	}
	// Applied: the last successful render is Ready; not the render a rollback went back
	// to (RolledBack says that).
	if ready != nil && ready.Status == metav1.ConditionTrue && lastSuccessful != "" &&
		(applied == nil || applied.Reason != v1.ReasonRolledBack) {
		ls := r.Status.LastSuccessful
		add(Event{Type: v1.AlertEventApplied,
			Render: Render{Ref: ls.RenderRef, ChartVersion: ls.ChartVersion, Commit: ls.Commit},
			Reason: ready.Reason, Message: ready.Message,
			Time: later(ready.LastTransitionTime.UTC(), timeOf(ls.AppliedAt)),
			Key:  key(r.UID, v1.AlertEventApplied, ls.RenderRef)})
	}
	for _, c := range []*metav1.Condition{applied, healthy} {
		if c == nil {
			continue
		}
		if since, ok := policy.OverdueSince(c.Message); ok {
			add(Event{Type: v1.AlertEventAssessmentOverdue, Render: currentRender(r, ""),
				Reason: c.Reason, Message: c.Message, Time: since.UTC(),
				Key: key(r.UID, v1.AlertEventAssessmentOverdue, unix(since))})
			break
		}
	}
	return out
}

func releaseSetStates(s *v1.ReleaseSet) []Event {
	obj := objectOf(KindReleaseSet, s.ObjectMeta)
	render := Render{Ref: s.Status.Revision}
	if src := s.Status.Source; src != nil {
		render.ChartVersion, render.Commit = src.ChartVersion, src.Commit
	} else if ch := s.Spec.Template.Spec.Chart; !source.Moves(ch) {
		// A template of an exact version or commit resolves nothing (status.source
		// unset): the revision is of that version or commit.
		if ch.Git != nil {
			render.Commit = ch.Git.Ref.Commit
		} else {
			render.ChartVersion = ch.Version
		}
	}
	var out []Event
	progressing := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionProgressing)
	for i, st := range s.Status.Stages {
		if st.Phase != v1.StageWaitingForApproval {
			continue
		}
		var t time.Time
		if i > 0 {
			t = timeOf(s.Status.Stages[i-1].CompletedAt)
		}
		msg := fmt.Sprintf("stage %s waits for /promote at revision %s", st.Name, v1.RenderRef(s.Status.Revision).Short())
		reason := v1.ReasonWaitingForApproval
		if progressing != nil && progressing.Reason == v1.ReasonWaitingForApproval {
			msg = progressing.Message
			t = later(t, progressing.LastTransitionTime.UTC())
		}
		out = append(out, Event{Type: v1.AlertEventPromotionWaiting, Object: obj, Render: render, Stage: st.Name,
			Reason: reason, Message: msg, Time: t,
			Key: key(s.UID, v1.AlertEventPromotionWaiting, s.Status.Revision, st.Name)})
	}
	if h := apimeta.FindStatusCondition(s.Status.Conditions, v1.ConditionHalted); h != nil && h.Status == metav1.ConditionTrue {
		t := h.LastTransitionTime.UTC()
		out = append(out, Event{Type: v1.AlertEventHalted, Object: obj, Render: render,
			Reason: h.Reason, Message: h.Message, Time: t,
			Key: key(s.UID, v1.AlertEventHalted, s.Status.Revision, h.Reason, unix(t))})
	}
	return out
}

func inventoryStates(inv *v1.ReleaseInventory, rel *v1.Release) []Event {
	d := inv.Status.Drift
	if d == nil || len(d.Drifted) == 0 {
		return nil
	}
	objs := make([]string, 0, len(d.Drifted))
	for _, o := range d.Drifted {
		s := o.Kind + " " + o.Name
		if o.Namespace != "" {
			s = o.Kind + " " + o.Namespace + "/" + o.Name
		}
		if len(o.Fields) > 0 {
			s += " (" + strings.Join(o.Fields, ", ") + ")"
		}
		objs = append(objs, s)
	}
	noun := "objects differ"
	if len(objs) == 1 {
		noun = "object differs"
	}
	since := timeOf(d.Since)
	ref := inv.Status.RenderRef
	return []Event{{Type: v1.AlertEventDriftDetected, Object: objectOf(KindRelease, rel.ObjectMeta),
		Render: currentRender(rel, ref), Reason: string(v1.AlertEventDriftDetected),
		Message: fmt.Sprintf("%d %s from the render on the cluster: %s", len(objs), noun, strings.Join(objs, "; ")),
		Time:    since, Key: key(inv.UID, v1.AlertEventDriftDetected, ref, unix(since))}}
}
