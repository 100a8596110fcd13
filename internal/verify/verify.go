// Package verify checks that a chart or a Git commit was signed by someone the
// Release trusts, before anything of it is rendered: cosign signatures of OCI
// charts (a public key, or keyless with the certificate's OIDC issuer and
// subject), Helm provenance files of charts from HTTP repositories (a PGP
// keyring), and the signatures of Git commits (PGP or SSH keys).
//
// It writes no cryptography: sigstore-go, Helm's provenance package and the Git
// and SSH signature libraries do the checking. Its errors are *Error values whose
// Kind says what failed (no signature, wrong key, wrong identity, digest
// mismatch), so that the Release's condition can name it.
package verify

import (
	"errors"
	"fmt"

	"kumodo.io/convoy/api/v1alpha1"
)

// Provider names, as spec.chart.verify.provider spells them.
const (
	ProviderCosign = "cosign"
	ProviderHelm   = "helm"
	// ProviderGit is what status.render.verified.provider says for a verified
	// Git commit.
	ProviderGit = "git"
)

// Result says what verified a chart or a commit.
type Result struct {
	// Provider is ProviderCosign, ProviderHelm or ProviderGit.
	Provider string
	// Identity is the key's fingerprint, or the certificate's subject for
	// keyless cosign, that the signature was made with.
	Identity string
}

// Kind says what failed.
type Kind string

// The kinds of failure.
const (
	// NoSignature: the chart or commit carries no signature at all.
	NoSignature Kind = "NoSignature"
	// WrongKey: a signature exists, but no trusted key made it.
	WrongKey Kind = "WrongKey"
	// WrongIdentity: a keyless signature whose certificate names another
	// issuer or subject.
	WrongIdentity Kind = "WrongIdentity"
	// DigestMismatch: the signature is of other content (a tampered chart).
	DigestMismatch Kind = "DigestMismatch"
	// Misconfigured: the trust material itself is unusable (a Secret without
	// the key, a key that does not parse, a regular expression that does not
	// compile).
	Misconfigured Kind = "Misconfigured"
)

// Error is a failed verification.
type Error struct {
	Kind Kind
	// Subject names what was verified: "oci://host/repo/chart@sha256:…",
	// "chart-1.2.3.tgz", "commit 0123abc".
	Subject string
	Err     error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("verifying %s: %s", e.Subject, e.Kind)
	}
	return fmt.Sprintf("verifying %s: %s: %v", e.Subject, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Reason is the Release reason of a failed verification: VerificationFailed
// (internal/reasons reads it).
func (e *Error) Reason() string { return v1alpha1.ReasonVerificationFailed }

// KindOf returns the Kind of the first *Error in err's chain, or "" if there is
// none.
func KindOf(err error) Kind {
	var ve *Error
	if errors.As(err, &ve) {
		return ve.Kind
	}
	return ""
}
