package reasons

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// carrier is a Carrier of reason.
type carrier struct{ reason string }

func (c *carrier) Error() string  { return "failed" }
func (c *carrier) Reason() string { return c.reason }

func TestOf(t *testing.T) {
	for name, tc := range map[string]struct {
		err      error
		fallback string
		want     string
	}{
		"nil":                      {err: nil, fallback: "DeployFailed", want: "DeployFailed"},
		"no carrier":               {err: errors.New("timeout"), fallback: "DeployFailed", want: "DeployFailed"},
		"no carrier, no fallback":  {err: errors.New("timeout"), want: ""},
		"a carrier":                {err: &carrier{"Unappliable"}, fallback: "DeployFailed", want: "Unappliable"},
		"a wrapped carrier":        {err: fmt.Errorf("apply: %w", &carrier{"Unappliable"}), fallback: "DeployFailed", want: "Unappliable"},
		"a joined carrier":         {err: errors.Join(errors.New("timeout"), &carrier{"PruneFailed"}), want: "PruneFailed"},
		"the first of two":         {err: fmt.Errorf("%w: %w", &carrier{"SourceNotReady"}, &carrier{"Unsupported"}), want: "SourceNotReady"},
		"a carrier without reason": {err: &carrier{""}, fallback: "ClusterNotReady", want: "ClusterNotReady"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Of(tc.err, tc.fallback)); diff != "" {
				t.Errorf("Of (-want +got):\n%s", diff)
			}
		})
	}
}
