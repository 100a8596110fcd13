package releaseset

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Event reasons of a ReleaseSet.
const (
	// EventStageStarted: a stage started rolling out the revision.
	EventStageStarted = "StageStarted"
	// EventStageComplete: every Release of a stage is Ready at the revision.
	EventStageComplete = "StageComplete"
	// EventHalted: the rollout of the revision stopped (Warning): a Release failed at it,
	// a stage missed its progressDeadline, or a mass removal is held.
	EventHalted = "Halted"
	// EventReleaseCreated, EventReleaseUpdated, EventReleaseDeleted: the set wrote a Release.
	EventReleaseCreated = "ReleaseCreated"
	EventReleaseUpdated = "ReleaseUpdated"
	EventReleaseDeleted = "ReleaseDeleted"
)

// Event is an event to record on the ReleaseSet.
type Event struct {
	// Type is Normal or Warning.
	Type string
	// Reason is one of the Event* reasons.
	Reason string
	// Message says what happened.
	Message string
}

// Transitions are the events of a status change from old to new: a stage that started
// or completed, a halt. The same status twice makes none.
func Transitions(old, new v1.ReleaseSetStatus) []Event {
	var events []Event
	before := map[string]v1.StagePhase{}
	if old.Revision == new.Revision {
		for _, s := range old.Stages {
			before[s.Name] = s.Phase
		}
	}
	for _, s := range new.Stages {
		was := before[s.Name]
		switch {
		case s.Phase == v1.StageProgressing && was != v1.StageProgressing && was != v1.StageComplete:
			events = append(events, Event{corev1.EventTypeNormal, EventStageStarted,
				fmt.Sprintf("Stage %s started rolling out revision %s to %d Clusters.", s.Name, new.Revision, s.Clusters)})
		case s.Phase == v1.StageComplete && was != v1.StageComplete && s.Clusters > 0:
			events = append(events, Event{corev1.EventTypeNormal, EventStageComplete,
				fmt.Sprintf("Stage %s is Complete: %d Releases Ready at revision %s.", s.Name, s.Ready, new.Revision)})
		}
	}
	if h := apimeta.FindStatusCondition(new.Conditions, v1.ConditionHalted); h != nil && h.Status == "True" {
		if o := apimeta.FindStatusCondition(old.Conditions, v1.ConditionHalted); o == nil || o.Status != "True" || o.Message != h.Message {
			events = append(events, Event{corev1.EventTypeWarning, EventHalted, h.Message})
		}
	}
	return events
}
