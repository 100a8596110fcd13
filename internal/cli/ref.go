package cli

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	renderRefPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// shortRefPattern is the form of ShortRef: what tables show.
	shortRefPattern = regexp.MustCompile(`^[0-9a-f]{10}$`)
)

// ValidateRenderRef checks a render ref given on the command line: sha256: and 64
// lowercase hex digits. The error is a usage error (exit 2).
func ValidateRenderRef(ref string) error {
	if renderRefPattern.MatchString(ref) {
		return nil
	}
	hint := "a render ref is sha256: followed by 64 lowercase hex digits, as `kubectl convoy release history NAME` shows in full with -o yaml"
	hex := strings.TrimPrefix(ref, "sha256:")
	switch {
	case shortRefPattern.MatchString(ref):
		return usageErrorf("invalid render ref %q: that is the short form tables show; %s", ref, hint)
	case !strings.HasPrefix(ref, "sha256:"):
		return usageErrorf("invalid render ref %q: it does not start with sha256:; %s", ref, hint)
	case len(hex) != 64:
		return usageErrorf("invalid render ref %q: %d hex digits after sha256:, want 64; %s", ref, len(hex), hint)
	default:
		return usageErrorf("invalid render ref %q: not lowercase hex; %s", ref, hint)
	}
}

// ShortRef is a render ref as tables show it: its first 10 hex digits, without
// sha256:. That is the form of `kubectl get releases` (the RENDER and PINNED columns
// of convoy apiserver's table), `kubectl get releaseinventories`, and the suffix of
// Render and hook Job names, so an operator sees the same ref everywhere.
func ShortRef(ref string) string {
	if ref == "" {
		return "-"
	}
	hex := strings.TrimPrefix(ref, "sha256:")
	if len(hex) > 10 {
		return hex[:10]
	}
	return hex
}

// maxNameLength is the longest object name.
const maxNameLength = 253

// RenderName is the name of the Render object of a render ref, as the controller
// names it: <release>-<first 10 hex digits>, the release part shortened to fit.
func RenderName(release, ref string) string {
	hex := strings.TrimPrefix(ref, "sha256:")
	if len(hex) > 10 {
		hex = hex[:10]
	}
	if limit := maxNameLength - len(hex) - 1; len(release) > limit {
		release = strings.TrimRight(release[:limit], "-.")
	}
	return fmt.Sprintf("%s-%s", release, hex)
}
