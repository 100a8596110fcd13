// Package reasons reads the Release reason an error carries. The errors of
// internal/apply (*apply.Error), internal/render (*render.Error) and
// internal/targets (*clusters.NotReadyError) know the reason of the Release
// condition they lead to (one of the v1alpha1.Reason* names) and implement
// Carrier; the controller reads it with Of, and nowhere else. It decides nothing
// else and does no I/O.
package reasons

import "errors"

// Carrier is an error that knows the reason (a v1alpha1.Reason* name) of the
// Release condition it leads to.
type Carrier interface {
	error
	// Reason is the condition reason; "" when the error has none.
	Reason() string
}

// Of returns the reason of the first Carrier in err's chain (joined errors
// included, as errors.As walks them), or fallback when there is none or its
// reason is "".
func Of(err error, fallback string) string {
	if c, ok := errors.AsType[Carrier](err); ok && c.Reason() != "" {
		return c.Reason()
	}
	return fallback
}
