package source

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

// *Error is read by reasons.Of, as the controller reads it.
var _ reasons.Carrier = (*Error)(nil)

func TestErrorReason(t *testing.T) {
	for name, tc := range map[string]struct {
		err           error
		wantReason    string
		wantTransient bool
	}{
		"source":      {err: sourceNotReady("no chart"), wantReason: v1alpha1.ReasonSourceNotReady, wantTransient: true},
		"unsupported": {err: unsupported("no such scheme"), wantReason: v1alpha1.ReasonUnsupported},
		"unappliable": {err: fmt.Errorf("Release a/b: %w", unappliable("bad .helmignore")), wantReason: v1alpha1.ReasonUnappliable},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantReason, reasons.Of(tc.err, "")); diff != "" {
				t.Errorf("reasons.Of (-want +got):\n%s", diff)
			}
			e, ok := errors.AsType[*Error](tc.err)
			if !ok {
				t.Fatalf("%v is no *Error", tc.err)
			}
			if got := e.Transient(); got != tc.wantTransient {
				t.Errorf("Transient = %v, want %v", got, tc.wantTransient)
			}
		})
	}
}
