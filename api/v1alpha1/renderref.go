package v1alpha1

import (
	"fmt"
	"strings"
)

// RenderRef is the identity of a render: "sha256:" and the 64 lowercase hex digits of
// the digest of its canonical stream. The API's fields hold it as a plain string
// (status.render.ref, pin.renderRef, ...); Go code converts to read its forms.
type RenderRef string

// ShortRenderRefLength is how many hex digits of a render ref its short form keeps.
const ShortRenderRefLength = 10

// maxObjectNameLength is the longest object name (a DNS subdomain).
const maxObjectNameLength = 253

// Hex is the ref's digest without "sha256:".
func (r RenderRef) Hex() string { return strings.TrimPrefix(string(r), "sha256:") }

// Short is the ref as tables show it: its first 10 hex digits, without sha256:. That
// is the form of `kubectl get releases` (RENDER and PINNED), `kubectl get
// releaseinventories`, the CLI, the UI and the suffix of Render and hook Job names,
// so an operator sees the same ref everywhere. "" for an empty ref.
func (r RenderRef) Short() string {
	hex := r.Hex()
	if len(hex) > ShortRenderRefLength {
		return hex[:ShortRenderRefLength]
	}
	return hex
}

// RenderName is the name of the Render object of this ref for the Release release:
// <release>-<Short>, the release part shortened to fit an object name.
func (r RenderRef) RenderName(release string) string {
	short := r.Short()
	if limit := maxObjectNameLength - len(short) - 1; len(release) > limit {
		release = strings.TrimRight(release[:limit], "-.")
	}
	return release + "-" + short
}

// Validate checks the full form: sha256: and 64 lowercase hex digits. The error
// names the ref and what is wrong with it (Problem).
func (r RenderRef) Validate() error {
	if p := r.Problem(); p != "" {
		return fmt.Errorf("invalid render ref %q: %s", string(r), p)
	}
	return nil
}

// Problem says what is wrong with the ref (the short form, a missing prefix, the
// length, the case), "" when it is a full ref: sha256: and 64 lowercase hex digits.
// It is Validate's message without the ref, as a field error of the API shows it.
func (r RenderRef) Problem() string {
	hex, prefixed := strings.CutPrefix(string(r), "sha256:")
	switch {
	case prefixed && len(hex) == 64 && isLowerHex(hex):
		return ""
	case !prefixed && len(hex) == ShortRenderRefLength && isLowerHex(hex):
		return "that is the short form tables show"
	case !prefixed:
		return "it does not start with sha256:"
	case len(hex) != 64:
		return fmt.Sprintf("%d hex digits after sha256:, want 64", len(hex))
	default:
		return "not lowercase hex"
	}
}

// ShortProblem is Problem, but the 10-digit short form is accepted too: what a
// person or a client may name a render by (POST releases/<name>/sync?render=).
func (r RenderRef) ShortProblem() string {
	if r.IsShort() {
		return ""
	}
	return r.Problem()
}

// IsShort says whether r is the short form: 10 lowercase hex digits, no sha256:.
func (r RenderRef) IsShort() bool {
	return len(r) == ShortRenderRefLength && isLowerHex(string(r))
}

// Names says whether r, a full ref or its short form, names the full ref full.
// An empty r or full names nothing.
func (r RenderRef) Names(full string) bool {
	if r == "" || full == "" {
		return false
	}
	if r.IsShort() {
		return RenderRef(full).Short() == string(r) && RenderRef(full).Problem() == ""
	}
	return string(r) == full
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Unversioned is the reference without its version: how the inventory, the health
// data and the decisions key an object across API versions.
func (r ObjectReference) Unversioned() ObjectReference {
	r.Version = ""
	return r
}
