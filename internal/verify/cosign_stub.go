package verify

import (
	"context"
	"errors"
)

// This file stands in for cosign.go until it is merged: delete it then.

// CosignOptions is the trust of one Release.
type CosignOptions struct {
	// PublicKey is PEM, from the Secret's cosign.pub; nil for keyless.
	PublicKey []byte
	// Keyless is the identity a keyless signature's certificate must name.
	Keyless *Keyless
}

// Keyless is the identity of a keyless signature.
type Keyless struct {
	Issuer, Subject, IssuerRegExp, SubjectRegExp string
	TransparencyLog                              bool
}

// Cosign verifies the cosign signature of the OCI artifact digest of repo.
func Cosign(ctx context.Context, repo string, digest string, opts CosignOptions) (Result, error) {
	return Result{}, &Error{Kind: Misconfigured, Subject: "oci://" + repo + "@" + digest,
		Err: errors.New("this convoy cannot verify cosign signatures")}
}
