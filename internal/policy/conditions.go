package policy

import (
	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Condition statuses.
const (
	StatusTrue    = "True"
	StatusFalse   = "False"
	StatusUnknown = "Unknown"
)

// ReasonReady is the reason of Ready=True.
//
// TODO: move to api/v1alpha1/constants.go next to the other reasons.
const ReasonReady = "Ready"

// Condition is a condition of a Release without its bookkeeping (observedGeneration,
// lastTransitionTime), which the controller adds when it sets it.
type Condition struct {
	Type    string
	Status  string
	Reason  string
	Message string
}

// AppliedCondition is the Applied condition for the Result of a reconcile: True for
// reason Applied, False for every other reason.
func AppliedCondition(res Result) Condition {
	status := StatusFalse
	if res.Reason == v1.ReasonApplied {
		status = StatusTrue
	}
	return Condition{Type: v1.ConditionApplied, Status: status, Reason: res.Reason, Message: res.Message}
}

// HealthyCondition is the Healthy condition: the observer's health, when it assesses
// lastSuccessful (status.lastSuccessful.renderRef after this reconcile); else
// Unknown/NotAssessed.
func HealthyCondition(health *Health, lastSuccessful string) Condition {
	c := Condition{Type: v1.ConditionHealthy, Status: StatusUnknown, Reason: v1.ReasonNotAssessed}
	switch {
	case lastSuccessful == "":
		c.Message = "No render has been applied yet."
		return c
	case health == nil || health.RenderRef != lastSuccessful:
		c.Message = "The observer has not assessed the last applied render yet."
		return c
	}
	switch health.State {
	case v1.HealthHealthy:
		c.Status, c.Reason = StatusTrue, v1.ReasonHealthy
		c.Message = "Every object of the last applied render is healthy."
	case v1.HealthProgressing:
		c.Status, c.Reason = StatusFalse, v1.ReasonProgressing
		c.Message = "Objects of the last applied render are still progressing."
	case v1.HealthDegraded:
		c.Status, c.Reason = StatusFalse, v1.ReasonDegraded
		c.Message = "An object of the last applied render failed. See the ReleaseInventory for which."
	case v1.HealthMissing:
		c.Status, c.Reason = StatusFalse, v1.ReasonMissing
		c.Message = "An object of the last applied render is missing from the cluster; the next apply recreates it."
	default:
		c.Message = "The observer cannot assess the health of the last applied render."
	}
	if health.Message != "" {
		c.Message = health.Message
	}
	return c
}

// ReadyCondition is computed, never set by hand: True when Applied and Healthy are
// True; otherwise False with the reason and message of the first of them that is not
// True.
func ReadyCondition(applied, healthy Condition) Condition {
	for _, c := range []Condition{applied, healthy} {
		if c.Status != StatusTrue {
			return Condition{Type: v1.ConditionReady, Status: StatusFalse, Reason: c.Reason, Message: c.Message}
		}
	}
	return Condition{
		Type: v1.ConditionReady, Status: StatusTrue, Reason: ReasonReady,
		Message: "The render is applied and healthy.",
	}
}
