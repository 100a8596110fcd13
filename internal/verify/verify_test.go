package verify_test

import (
	"fmt"
	"testing"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/verify"
)

// A failed verification, wrapped, leads to the Applied reason VerificationFailed.
func TestErrorReason(t *testing.T) {
	err := fmt.Errorf("Release team-a/web: %w", &verify.Error{Kind: verify.WrongKey, Subject: "chart web-1.0.0.tgz"})
	if got := reasons.Of(err, v1alpha1.ReasonSourceNotReady); got != v1alpha1.ReasonVerificationFailed {
		t.Errorf("reason %q, want %q", got, v1alpha1.ReasonVerificationFailed)
	}
	if got := verify.KindOf(err); got != verify.WrongKey {
		t.Errorf("kind %q, want WrongKey", got)
	}
}
