package cli

import (
	"strings"
	"testing"
)

func TestValidateRenderRef(t *testing.T) {
	tests := map[string]struct {
		ref  string
		want string // "" when valid, else a part of the message
	}{
		"valid":         {ref: refA},
		"no prefix":     {ref: strings.TrimPrefix(refA, "sha256:"), want: "does not start with sha256:"},
		"short":         {ref: "sha256:4f1c", want: "4 hex digits after sha256:, want 64"},
		"long":          {ref: refA + "0", want: "65 hex digits"},
		"uppercase":     {ref: strings.ToUpper(refA[:7]) + refA[7:], want: "does not start with sha256:"},
		"uppercase hex": {ref: "sha256:" + strings.ToUpper(refA[7:]), want: "not lowercase hex"},
		"not hex":       {ref: "sha256:" + strings.Repeat("g", 64), want: "not lowercase hex"},
		"short ref":     {ref: ShortRef(refA), want: "the short form tables show"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateRenderRef(tc.ref)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ValidateRenderRef(%q) = %v, want nil", tc.ref, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ValidateRenderRef(%q) = %v, want an error with %q", tc.ref, err, tc.want)
			}
			if ExitCode(err) != ExitUsage {
				t.Errorf("exit code %d, want %d (usage)", ExitCode(err), ExitUsage)
			}
		})
	}
}

func TestShortRef(t *testing.T) {
	if got := ShortRef(refB); got != "9a2b0c1d2e" {
		t.Errorf("ShortRef = %q", got)
	}
	if got := ShortRef(""); got != "-" {
		t.Errorf("ShortRef(\"\") = %q", got)
	}
}
