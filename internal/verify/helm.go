package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"helm.sh/helm/v4/pkg/provenance"
)

// HelmProvenance checks the provenance file prov of the chart archive named name
// (podinfo-6.5.0.tgz, as the .prov lists it) against keyring, a PGP public keyring
// (binary, armored or a GnuPG keybox), as `helm install --verify` does: the .prov
// must be signed by a key of the keyring and name the archive's sha256. Helm's
// provenance package does the checking. The Result's Identity is the signing key's
// fingerprint (upper-case hex). Failures are *Error: NoSignature (no .prov, or one
// without a signature), WrongKey (signed by a key not in the keyring), DigestMismatch
// (the .prov is of another archive, or altered), Misconfigured (a keyring that does
// not parse).
func HelmProvenance(archive, prov []byte, keyring []byte, name string) (Result, error) {
	fail := func(kind Kind, format string, args ...any) (Result, error) {
		return Result{}, &Error{Kind: kind, Subject: "chart " + name, Err: fmt.Errorf(format, args...)}
	}
	if len(bytes.TrimSpace(prov)) == 0 {
		return fail(NoSignature, "the repository serves no provenance file %s.prov; publish one with helm package --sign", name)
	}
	if len(bytes.TrimSpace(keyring)) == 0 {
		return fail(Misconfigured, "the keyring is empty; put the public keys of the chart's signers under the key keyring")
	}
	sig, err := keyringSignatory(keyring)
	if err != nil {
		return fail(Misconfigured, "the keyring does not parse: %w", err)
	}
	block, _ := clearsign.Decode(prov)
	if block == nil {
		return fail(NoSignature, "%s.prov holds no PGP signed message", name)
	}
	ver, err := sig.Verify(archive, prov, name)
	if err != nil {
		if ver == nil || ver.SignedBy == nil {
			// The signature did not check out.
			if errors.Is(err, pgperrors.ErrUnknownIssuer) {
				return fail(WrongKey, "signed by key %s, which is not in the keyring", signerOf(block))
			}
			var se pgperrors.SignatureError
			if errors.As(err, &se) {
				return fail(DigestMismatch, "the signature of %s.prov does not match its content (altered after signing): %w", name, err)
			}
			if errors.Is(err, pgperrors.ErrKeyExpired) || errors.Is(err, pgperrors.ErrKeyRevoked) || errors.Is(err, pgperrors.ErrSignatureExpired) {
				return fail(WrongKey, "signed by key %s: %w", signerOf(block), err)
			}
			return fail(DigestMismatch, "checking the signature of %s.prov: %w", name, err)
		}
		// Signed by a trusted key, but of another archive.
		return fail(DigestMismatch, "%s.prov was signed by key %s but does not match the archive: %w",
			name, fingerprint(ver.SignedBy.PrimaryKey), err)
	}
	return Result{Provider: ProviderHelm, Identity: fingerprint(ver.SignedBy.PrimaryKey)}, nil
}

// keyringSignatory reads a keyring with Helm's reader, which takes a file.
func keyringSignatory(keyring []byte) (*provenance.Signatory, error) {
	f, err := os.CreateTemp("", "convoy-keyring-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(keyring); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	s, err := provenance.NewFromKeyring(f.Name(), "")
	if err != nil {
		return nil, err
	}
	if len(s.KeyRing) == 0 {
		return nil, errors.New("it holds no key")
	}
	return s, nil
}

// signerOf names the key that made a clear-signed block's signature: its
// fingerprint, or its key ID, as the signature records it.
func signerOf(block *clearsign.Block) string {
	if block.ArmoredSignature == nil {
		return "(unknown)"
	}
	p, err := packet.Read(block.ArmoredSignature.Body)
	if err != nil {
		return "(unknown)"
	}
	sig, ok := p.(*packet.Signature)
	if !ok {
		return "(unknown)"
	}
	if len(sig.IssuerFingerprint) > 0 {
		return strings.ToUpper(fmt.Sprintf("%x", sig.IssuerFingerprint))
	}
	if sig.IssuerKeyId != nil {
		return fmt.Sprintf("%016X", *sig.IssuerKeyId)
	}
	return "(unknown)"
}

func fingerprint(k *packet.PublicKey) string {
	if k == nil {
		return ""
	}
	return strings.ToUpper(fmt.Sprintf("%x", k.Fingerprint))
}
