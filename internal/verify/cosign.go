package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// The OCI and Sigstore names that cosign's signatures are found by.
const (
	// bundleMediaTypePrefix starts the media type of every Sigstore bundle
	// version ("application/vnd.dev.sigstore.bundle.v0.3+json",
	// "application/vnd.dev.sigstore.bundle+json;version=0.2"): the artifactType
	// of the referrer manifest and the media type of its one layer.
	bundleMediaTypePrefix = "application/vnd.dev.sigstore.bundle"
	// ociEmptyMediaType is the config of an artifact manifest without one;
	// registries that list a referrer by its config media type show this.
	ociEmptyMediaType = "application/vnd.oci.empty.v1+json"
	// inTotoPayloadType is the DSSE payload type of an in-toto statement.
	inTotoPayloadType = "application/vnd.in-toto+json"
	// cosignSignPredicate is the predicate type of the statement that
	// `cosign sign` (v3, or v2 with --new-bundle-format) puts in its bundle;
	// other predicates are attestations (SBOMs, provenance), not signatures.
	cosignSignPredicate = "https://sigstore.dev/cosign/sign/v1"
)

// Limits on what one verification reads from a registry.
const (
	maxReferrers     = 64
	maxManifestBytes = 4 << 20
	maxBundleBytes   = 4 << 20
)

// Keyless is the identity a keyless (Fulcio certificate) signature must carry.
type Keyless struct {
	// Issuer and IssuerRegExp match the certificate's OIDC issuer; Subject
	// and SubjectRegExp its subject (the SAN: an e-mail address or a workflow
	// URI). Exactly one of each pair is set; a regular expression is matched
	// against the whole value (it is anchored).
	Issuer, IssuerRegExp   string
	Subject, SubjectRegExp string
	// TransparencyLog requires an entry of the signature in a Rekor log of
	// the trusted root. Without it the certificate's time comes from a signed
	// timestamp (RFC 3161) in the bundle, which must then be there.
	TransparencyLog bool
}

// CosignOptions is the trust of one Release.
type CosignOptions struct {
	// PublicKey is the PEM public key (the Secret's cosign.pub) that must have
	// made the signature; nil for keyless.
	PublicKey []byte
	// Keyless is the certificate identity of a keyless signature; nil when
	// PublicKey is set.
	Keyless *Keyless
	// TrustedMaterial is the Sigstore trusted root (Fulcio CAs, Rekor logs,
	// timestamp authorities) keyless signatures are checked against. Keyless
	// verification without it fails as Misconfigured; see
	// LoadTrustedRoot.
	TrustedMaterial root.TrustedMaterial

	// HTTPClient, Username, Password and PlainHTTP reach the registry as the
	// chart source does: the same client (CA bundle, proxy), the same basic
	// credentials (exchanged for a token when the registry asks), and plain
	// HTTP only for the hosts the source reaches so. A nil HTTPClient is
	// http.DefaultClient.
	HTTPClient         *http.Client
	Username, Password string
	PlainHTTP          bool
}

// LoadTrustedRoot reads a Sigstore trusted root (the trusted_root.json that
// `cosign trusted-root create` writes, or the public-good instance's from its
// TUF repository) for CosignOptions.TrustedMaterial.
func LoadTrustedRoot(path string) (root.TrustedMaterial, error) {
	tr, err := root.NewTrustedRootFromPath(path)
	if err != nil {
		return nil, &Error{Kind: Misconfigured, Subject: "the Sigstore trusted root " + path, Err: err}
	}
	return tr, nil
}

// KeyFingerprint is the Identity of a cosign public key: "sha256:" and the
// first 16 hex digits of the SHA-256 of its DER (SubjectPublicKeyInfo) form.
func KeyFingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:])[:16]
}

// Cosign checks that the chart manifest dgst (sha256:…) in repo
// ("host:port/path/chart", without oci://) carries a cosign signature that
// opts trusts: a Sigstore bundle attached as an OCI 1.1 referrer of the
// manifest (found by the referrers API, or by the referrers tag sha256-<hex>
// where the registry has no such API).
//
// A failed verification is an *Error with its Kind; an error that is not one
// (the registry could not be reached or answered nonsense) says nothing about
// the signature and is worth retrying.
func Cosign(ctx context.Context, repo, dgst string, opts CosignOptions) (Result, error) {
	subject := "oci://" + repo + "@" + dgst
	fail := func(kind Kind, err error) (Result, error) {
		return Result{}, &Error{Kind: kind, Subject: subject, Err: err}
	}
	d, err := digest.Parse(dgst)
	if err != nil || d.Algorithm() != digest.SHA256 {
		return fail(Misconfigured, fmt.Errorf("%q is not a sha256 digest", dgst))
	}
	t, err := opts.trust()
	if err != nil {
		return fail(Misconfigured, err)
	}
	bundles, skipped, err := fetchBundles(ctx, repo, d, opts)
	if err != nil {
		return Result{}, fmt.Errorf("reading the cosign signatures of %s: %w", subject, err)
	}
	want, _ := hex.DecodeString(d.Encoded())

	var failures []*Error
	var notSignatures []string
	for _, raw := range bundles {
		res, kind, err := t.verify(raw.data, want)
		switch {
		case err == nil:
			return res, nil
		case kind == "":
			notSignatures = append(notSignatures, fmt.Sprintf("%s: %v", raw.manifest, err))
		default:
			failures = append(failures, &Error{Kind: kind, Subject: subject, Err: fmt.Errorf("bundle %s: %w", raw.manifest, err)})
		}
	}
	if len(failures) == 0 {
		notSignatures = append(notSignatures, skipped...)
		msg := "no cosign signature refers to it; sign the chart's digest with `cosign sign` (v3, or v2 with --new-bundle-format) and push the bundle to the same repository"
		if legacy, err := hasLegacySignature(ctx, repo, d, opts); err != nil {
			return Result{}, fmt.Errorf("reading the cosign signatures of %s: %w", subject, err)
		} else if legacy != "" {
			msg = fmt.Sprintf("it has only a signature in cosign's older format (the tag %s), which convoy does not verify; sign it again with cosign v3, or v2 with --new-bundle-format", legacy)
		}
		if len(notSignatures) > 0 {
			msg += " (ignored: " + strings.Join(notSignatures, "; ") + ")"
		}
		return fail(NoSignature, errors.New(msg))
	}
	return Result{}, worst(failures)
}

// worst picks the failure to report when no signature verified: a trusted
// signature of other content first (a replaced chart), then a trusted key's
// signer with the wrong identity, then signatures of untrusted keys.
func worst(failures []*Error) *Error {
	rank := map[Kind]int{DigestMismatch: 0, WrongIdentity: 1, WrongKey: 2}
	best := failures[0]
	for _, f := range failures[1:] {
		if rank[f.Kind] < rank[best.Kind] {
			best = f
		}
	}
	if n := len(failures); n > 1 {
		best = &Error{Kind: best.Kind, Subject: best.Subject, Err: fmt.Errorf("%w (and %d other bundles that did not verify)", best.Err, n-1)}
	}
	return best
}

// trust is CosignOptions made ready to verify bundles.
type trust struct {
	verifier *sgverify.Verifier
	// identity is the keyless policy; nil for a key.
	identity *sgverify.CertificateIdentity
	// keyID is the key's fingerprint, for Result.Identity.
	keyID string
	// tlog says that keyless signatures need a transparency-log entry.
	tlog bool
	// keyless is the trusted identity as given, for messages.
	keyless Keyless
}

func (o CosignOptions) trust() (*trust, error) {
	switch {
	case len(o.PublicKey) > 0 && o.Keyless != nil:
		return nil, errors.New("both a public key and a keyless identity are given; give one")
	case len(o.PublicKey) > 0:
		pub, err := cryptoutils.UnmarshalPEMToPublicKey(o.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("the cosign public key (cosign.pub) is not a PEM public key: %w", err)
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, fmt.Errorf("the cosign public key (cosign.pub): %w", err)
		}
		sv, err := signature.LoadDefaultVerifier(pub)
		if err != nil {
			return nil, fmt.Errorf("the cosign public key (cosign.pub) is of a kind cosign does not sign with: %w", err)
		}
		key := root.NewExpiringKey(sv, time.Time{}, time.Time{})
		// There is one trusted key, whatever hint a bundle names it by.
		tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
		v, err := sgverify.NewVerifier(tm, sgverify.WithNoObserverTimestamps())
		if err != nil {
			return nil, err
		}
		return &trust{verifier: v, keyID: KeyFingerprint(der)}, nil
	case o.Keyless != nil:
		k := o.Keyless
		if (k.Issuer == "") == (k.IssuerRegExp == "") {
			return nil, errors.New("keyless verification needs exactly one of issuer and issuerRegExp")
		}
		if (k.Subject == "") == (k.SubjectRegExp == "") {
			return nil, errors.New("keyless verification needs exactly one of subject and subjectRegExp")
		}
		for _, re := range []string{k.IssuerRegExp, k.SubjectRegExp} {
			if _, err := regexp.Compile(re); err != nil {
				return nil, fmt.Errorf("keyless: %w", err)
			}
		}
		if o.TrustedMaterial == nil {
			return nil, errors.New("keyless verification needs the Sigstore trusted root (trusted_root.json) and none is configured for the controller; give it one, or verify with a public key")
		}
		id, err := sgverify.NewShortCertificateIdentity(k.Issuer, anchor(k.IssuerRegExp), k.Subject, anchor(k.SubjectRegExp))
		if err != nil {
			return nil, fmt.Errorf("keyless: %w", err)
		}
		vopts := []sgverify.VerifierOption{sgverify.WithObserverTimestamps(1)}
		if k.TransparencyLog {
			vopts = append(vopts, sgverify.WithTransparencyLog(1))
		}
		v, err := sgverify.NewVerifier(o.TrustedMaterial, vopts...)
		if err != nil {
			return nil, err
		}
		return &trust{verifier: v, identity: &id, tlog: k.TransparencyLog, keyless: *k}, nil
	default:
		return nil, errors.New("neither a public key (a Secret with cosign.pub) nor a keyless identity is given")
	}
}

// describe names the trusted keyless identity, for messages.
func (t *trust) describe() string {
	k := t.keyless
	iss, sub := fmt.Sprintf("issuer %q", k.Issuer), fmt.Sprintf("subject %q", k.Subject)
	if k.IssuerRegExp != "" {
		iss = fmt.Sprintf("issuers matching %q", k.IssuerRegExp)
	}
	if k.SubjectRegExp != "" {
		sub = fmt.Sprintf("subjects matching %q", k.SubjectRegExp)
	}
	return iss + " and " + sub
}

// anchor makes a regular expression match whole values, as a user writing
// `^https://github\.com/org/` or `.*@example\.com` means.
func anchor(re string) string {
	if re == "" {
		return ""
	}
	return `^(?:` + re + `)$`
}

// verify checks one bundle against want (the manifest's SHA-256). A kind of ""
// with an error means the bundle is not a signature (an attestation, or not a
// bundle at all).
func (t *trust) verify(raw []byte, want []byte) (Result, Kind, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return Result{}, "", fmt.Errorf("not a Sigstore bundle: %w", err)
	}
	claimed, err := claimedDigest(&b)
	if err != nil {
		return Result{}, "", err
	}
	vm := b.GetVerificationMaterial()
	keySigned := vm.GetPublicKey() != nil
	switch {
	case t.identity == nil && !keySigned:
		return Result{}, WrongKey, errors.New("signed keyless (with a certificate), but the Release trusts a public key; verify it keyless, or sign it with the key (cosign sign --key)")
	case t.identity != nil && keySigned:
		return Result{}, WrongKey, errors.New("signed with a key, but the Release trusts keyless identities; verify it with the public key, or sign it keyless")
	case t.identity != nil && t.tlog && len(vm.GetTlogEntries()) == 0:
		return Result{}, WrongKey, errors.New("the keyless signature has no transparency-log entry; sign it with the log (cosign's default), or set the keyless transparencyLog to false to date its certificate by its signed timestamp")
	}
	// The signature is checked over what the bundle says it signed; whether
	// that is this chart is asked after, so that a trusted signature of other
	// content is told apart from an untrusted one.
	policy := []sgverify.PolicyOption{sgverify.WithKey()}
	if t.identity != nil {
		policy = []sgverify.PolicyOption{sgverify.WithCertificateIdentity(*t.identity)}
	}
	res, err := t.verifier.Verify(&b, sgverify.NewPolicy(sgverify.WithArtifactDigest("sha256", claimed), policy...))
	if err != nil {
		kind := classify(err)
		switch {
		case kind == WrongIdentity:
			err = fmt.Errorf("%w; the Release trusts %s", err, t.describe())
		case t.identity == nil:
			err = fmt.Errorf("not signed by the trusted key %s (check cosign.pub in the Secret): %w", t.keyID, err)
		default:
			err = fmt.Errorf("not certified, logged or timestamped by the trusted Sigstore root: %w", err)
		}
		return Result{}, kind, err
	}
	if !signs(res, &b, want) {
		return Result{}, DigestMismatch, fmt.Errorf("the signature is of sha256:%x, not of this chart: the chart was replaced after it was signed, or the signature was copied to it", claimed)
	}
	if t.identity == nil {
		return Result{Provider: ProviderCosign, Identity: t.keyID}, "", nil
	}
	san := ""
	if res.Signature != nil && res.Signature.Certificate != nil {
		san = res.Signature.Certificate.SubjectAlternativeName
	}
	return Result{Provider: ProviderCosign, Identity: san}, "", nil
}

// claimedDigest is the SHA-256 a bundle says it signs: the message digest of
// a message signature, or the first sha256 subject of a cosign-sign in-toto
// statement.
func claimedDigest(b *bundle.Bundle) ([]byte, error) {
	switch {
	case b.GetMessageSignature() != nil:
		md := b.GetMessageSignature().GetMessageDigest()
		if md.GetAlgorithm() != protocommon.HashAlgorithm_SHA2_256 {
			return nil, fmt.Errorf("a message signature over a %s digest, not sha256", md.GetAlgorithm())
		}
		return md.GetDigest(), nil
	case b.GetDsseEnvelope() != nil:
		env := b.GetDsseEnvelope()
		if env.GetPayloadType() != inTotoPayloadType {
			return nil, fmt.Errorf("a DSSE envelope of %q, not an in-toto statement", env.GetPayloadType())
		}
		var st struct {
			PredicateType string `json:"predicateType"`
			Subject       []struct {
				Digest map[string]string `json:"digest"`
			} `json:"subject"`
		}
		if err := json.Unmarshal(env.GetPayload(), &st); err != nil {
			return nil, fmt.Errorf("the in-toto statement does not parse: %w", err)
		}
		if st.PredicateType != cosignSignPredicate {
			return nil, fmt.Errorf("an attestation of %q, not a cosign signature", st.PredicateType)
		}
		for _, s := range st.Subject {
			if h, err := hex.DecodeString(s.Digest["sha256"]); err == nil && len(h) == sha256.Size {
				return h, nil
			}
		}
		return nil, errors.New("the in-toto statement names no sha256 subject")
	default:
		return nil, errors.New("the bundle holds neither a message signature nor a DSSE envelope")
	}
}

// signs says whether a verified bundle signs want: its message digest, or one
// of its statement's subjects.
func signs(res *sgverify.VerificationResult, b *bundle.Bundle, want []byte) bool {
	if ms := b.GetMessageSignature(); ms != nil {
		return bytes.Equal(ms.GetMessageDigest().GetDigest(), want)
	}
	if res.Statement == nil {
		return false
	}
	for _, s := range res.Statement.GetSubject() {
		if h, err := hex.DecodeString(s.GetDigest()["sha256"]); err == nil && bytes.Equal(h, want) {
			return true
		}
	}
	return false
}

// classify names why sigstore-go refused a bundle: a certificate of another
// identity, or else a signature no trusted key or CA made (which includes a
// keyless signature where a key is trusted, and the reverse, and a keyless one
// without the transparency-log entry or timestamp that dates its certificate).
func classify(err error) Kind {
	var idErr *sgverify.ErrNoMatchingCertificateIdentity
	if errors.As(err, &idErr) {
		return WrongIdentity
	}
	return WrongKey
}

// hasLegacySignature returns the tag of a signature in cosign's older format
// (a simple-signing payload at the tag sha256-<hex>.sig), or "" if there is
// none.
func hasLegacySignature(ctx context.Context, repo string, d digest.Digest, opts CosignOptions) (string, error) {
	r, err := opts.repository(repo)
	if err != nil {
		return "", err
	}
	tag := d.Algorithm().String() + "-" + d.Encoded() + ".sig"
	if _, err := r.Resolve(ctx, tag); err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			return "", nil
		}
		return "", err
	}
	return tag, nil
}

// repository is repo reached as the chart source reaches it.
func (o CosignOptions) repository(repo string) (*remote.Repository, error) {
	r, err := remote.NewRepository(repo)
	if err != nil {
		return nil, err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	client := &auth.Client{Client: hc, Cache: auth.NewCache()}
	client.SetUserAgent("convoy")
	if o.Username != "" || o.Password != "" {
		client.Credential = auth.StaticCredential(r.Reference.Registry, auth.Credential{Username: o.Username, Password: o.Password})
	}
	r.Client = client
	r.PlainHTTP = o.PlainHTTP
	r.MaxMetadataBytes = maxManifestBytes
	return r, nil
}

// rawBundle is a bundle's bytes and the referrer manifest it came in.
type rawBundle struct {
	manifest string
	data     []byte
}

// fetchBundles reads the Sigstore bundles that refer to the manifest d in
// repo. skipped names the referrers looked at and passed over.
func fetchBundles(ctx context.Context, repo string, d digest.Digest, opts CosignOptions) ([]rawBundle, []string, error) {
	r, err := opts.repository(repo)
	if err != nil {
		return nil, nil, err
	}

	// The first maxReferrers referrers are looked at: enough for the
	// signatures and attestations a chart carries, and a bound on the work
	// that whoever can push to the repository can cause.
	var refs []ocispec.Descriptor
	errEnough := errors.New("enough referrers")
	err = r.Referrers(ctx, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: d}, "", func(page []ocispec.Descriptor) error {
		refs = append(refs, page...)
		if len(refs) >= maxReferrers {
			refs = refs[:maxReferrers]
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, nil, err
	}
	var out []rawBundle
	var skipped []string
	for _, desc := range refs {
		// Registries list a referrer by its artifactType, or (some) by its
		// config's media type, which for a bundle is the empty one.
		at := desc.ArtifactType
		if at != "" && at != ociEmptyMediaType && !strings.HasPrefix(at, bundleMediaTypePrefix) {
			continue
		}
		if desc.MediaType != ocispec.MediaTypeImageManifest {
			continue
		}
		mdata, err := fetch(ctx, r.Manifests(), desc, maxManifestBytes)
		if err != nil {
			return nil, nil, err
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(mdata, &m); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: manifest does not parse: %v", desc.Digest, err))
			continue
		}
		if !strings.HasPrefix(m.ArtifactType, bundleMediaTypePrefix) && !strings.HasPrefix(m.Config.MediaType, bundleMediaTypePrefix) {
			continue
		}
		if m.Subject == nil || m.Subject.Digest != d {
			skipped = append(skipped, fmt.Sprintf("%s: its subject is not this chart", desc.Digest))
			continue
		}
		if len(m.Layers) != 1 || !strings.HasPrefix(m.Layers[0].MediaType, bundleMediaTypePrefix) {
			skipped = append(skipped, fmt.Sprintf("%s: not one bundle layer", desc.Digest))
			continue
		}
		data, err := fetch(ctx, r.Blobs(), m.Layers[0], maxBundleBytes)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, rawBundle{manifest: desc.Digest.String(), data: data})
	}
	return out, skipped, nil
}

type fetcher interface {
	Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error)
}

// fetch reads desc from the registry, checking its size and digest.
func fetch(ctx context.Context, f fetcher, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	if desc.Size > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d read", desc.Digest, desc.Size, limit)
	}
	rc, err := f.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return content.ReadAll(rc, desc)
}
