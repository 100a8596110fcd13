package v1alpha1

import (
	"strings"
	"testing"
)

const testRef = "sha256:9a2b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f"

func TestRenderRefShort(t *testing.T) {
	tests := map[string]struct {
		ref  RenderRef
		want string
	}{
		"full":                   {ref: testRef, want: "9a2b0c1d2e"},
		"shorter than 10 digits": {ref: "sha256:0123", want: "0123"},
		"exactly 10 digits":      {ref: "sha256:0123456789", want: "0123456789"},
		"empty":                  {ref: "", want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.ref.Short(); got != tc.want {
				t.Errorf("Short() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRenderRefRenderName(t *testing.T) {
	ref := RenderRef(testRef)
	long := strings.Repeat("a", 250)
	tests := map[string]struct{ release, want string }{
		"short":         {release: "podinfo", want: "podinfo-9a2b0c1d2e"},
		"at the limit":  {release: strings.Repeat("b", 242), want: strings.Repeat("b", 242) + "-9a2b0c1d2e"},
		"too long":      {release: long, want: strings.Repeat("a", 242) + "-9a2b0c1d2e"},
		"cut at a dash": {release: strings.Repeat("c", 241) + "-xyz", want: strings.Repeat("c", 241) + "-9a2b0c1d2e"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ref.RenderName(tc.release)
			if got != tc.want {
				t.Errorf("RenderName(%q) = %q, want %q", tc.release, got, tc.want)
			}
			if len(got) > 253 {
				t.Errorf("name of %d characters", len(got))
			}
		})
	}
}

func TestRenderRefValidate(t *testing.T) {
	tests := map[string]struct {
		ref  string
		want string // "" when valid, else a part of the message
	}{
		"valid":         {ref: testRef},
		"no prefix":     {ref: strings.TrimPrefix(testRef, "sha256:"), want: "does not start with sha256:"},
		"short form":    {ref: RenderRef(testRef).Short(), want: "the short form tables show"},
		"too few":       {ref: "sha256:4f1c", want: "4 hex digits after sha256:, want 64"},
		"uppercase hex": {ref: "sha256:" + strings.ToUpper(testRef[7:]), want: "not lowercase hex"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := RenderRef(tc.ref).Validate()
			if p := RenderRef(tc.ref).Problem(); (err == nil) != (p == "") || (err != nil && !strings.HasSuffix(err.Error(), ": "+p)) {
				t.Errorf("Problem = %q, want the end of Validate's %v", p, err)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate(%q) = %v, want nil", tc.ref, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate(%q) = %v, want an error with %q", tc.ref, err, tc.want)
			}
		})
	}
}
