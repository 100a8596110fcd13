package verifytest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"google.golang.org/protobuf/encoding/protojson"
	"oras.land/oras-go/v2/registry/remote"
)

// Cosign signatures made in the test, as `cosign sign` (v3, or v2 with
// --new-bundle-format) makes them: an in-toto statement over the chart's
// manifest digest, signed in a Sigstore bundle, pushed as an OCI 1.1 referrer
// of the manifest. A registry reached here is reached over plain HTTP, as the
// in-process registries of tests are.

const (
	// CosignSignPredicate is the predicate type of the statement `cosign sign`
	// signs; other predicates are attestations.
	CosignSignPredicate = "https://sigstore.dev/cosign/sign/v1"
	// bundleMediaType is the media type of the bundles made here: the
	// artifactType of the referrer manifest and of its one layer.
	bundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// inTotoPayloadType is the DSSE payload type of an in-toto statement.
	inTotoPayloadType = "application/vnd.in-toto+json"
)

// Remote is the repository repo ("host:port/path/chart", without oci://) of
// an in-process registry, reached over plain HTTP.
func Remote(t testing.TB, repo string) *remote.Repository {
	t.Helper()
	r, err := remote.NewRepository(repo)
	if err != nil {
		t.Fatal(err)
	}
	r.PlainHTTP = true
	return r
}

// Resolve is the manifest digest of repo:tag.
func Resolve(t testing.TB, repo, tag string) digest.Digest {
	t.Helper()
	desc, err := Remote(t, repo).Resolve(context.Background(), tag)
	if err != nil {
		t.Fatalf("resolve %s:%s: %v", repo, tag, err)
	}
	return desc.Digest
}

// Attach pushes bundleJSON as cosign does: a manifest of artifactType the
// bundle's media type, with the bundle as its one layer and the manifest
// subject of repo as its subject. Where the registry has no referrers API,
// oras-go keeps the referrers tag sha256-<hex> index instead, as cosign does.
func Attach(t testing.TB, repo string, subject digest.Digest, bundleJSON []byte) {
	t.Helper()
	ctx := context.Background()
	r := Remote(t, repo)
	push := func(mt string, data []byte) ocispec.Descriptor {
		desc := ocispec.Descriptor{MediaType: mt, Digest: digest.FromBytes(data), Size: int64(len(data))}
		if err := r.Push(ctx, desc, bytes.NewReader(data)); err != nil {
			t.Fatalf("push %s: %v", mt, err)
		}
		return desc
	}
	// The subject's size is that of the chart manifest.
	sd, err := r.Resolve(ctx, subject.String())
	if err != nil {
		t.Fatalf("resolve the subject %s: %v", subject, err)
	}
	cfg := push(ocispec.MediaTypeEmptyJSON, []byte("{}"))
	layer := push(bundleMediaType, bundleJSON)
	layer.Annotations = map[string]string{ocispec.AnnotationTitle: "sha256-" + layer.Digest.Encoded() + ".sigstore.json"}
	raw, err := json.Marshal(ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: bundleMediaType,
		Config:       cfg,
		Layers:       []ocispec.Descriptor{layer},
		Subject:      &ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: subject, Size: sd.Size},
		Annotations:  map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": CosignSignPredicate},
	})
	if err != nil {
		t.Fatal(err)
	}
	push(ocispec.MediaTypeImageManifest, raw)
}

// Statement is the in-toto statement `cosign sign` signs: the manifest digest
// d as its subject, of predicateType (CosignSignPredicate for a signature).
func Statement(d digest.Digest, predicateType string) []byte {
	return fmt.Appendf(nil, `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"chart","digest":{"sha256":%q}}],"predicateType":%q,"predicate":{}}`, d.Encoded(), predicateType)
}

// CosignKey is a cosign key pair made for a test.
type CosignKey struct {
	Keypair sign.Keypair
	// PublicPEM is the public key as `cosign generate-key-pair` writes
	// cosign.pub.
	PublicPEM []byte
}

// NewCosignKey makes an ephemeral ECDSA P-256 key pair.
func NewCosignKey(t testing.TB) *CosignKey {
	t.Helper()
	k, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := k.GetPublicKeyPem()
	if err != nil {
		t.Fatal(err)
	}
	return &CosignKey{Keypair: k, PublicPEM: []byte(p)}
}

// Fingerprint is the key's identity as status.render.verified reports it:
// "sha256:" and the first 16 hex digits of the SHA-256 of its DER form.
func (k *CosignKey) Fingerprint(t testing.TB) string {
	t.Helper()
	blk, _ := pem.Decode(k.PublicPEM)
	if blk == nil {
		t.Fatal("the public key is not PEM")
	}
	if _, err := x509.ParsePKIXPublicKey(blk.Bytes); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(blk.Bytes)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// Bundle signs the statement of predicateType over d, as `cosign sign --key`
// does with the bundle format (without a transparency-log entry).
func (k *CosignKey) Bundle(t testing.TB, d digest.Digest, predicateType string) []byte {
	t.Helper()
	return bundleOf(t, &sign.DSSEData{Data: Statement(d, predicateType), PayloadType: inTotoPayloadType}, k.Keypair)
}

// MessageBundle signs the bytes of manifest themselves (a message signature
// over the manifest digest).
func (k *CosignKey) MessageBundle(t testing.TB, manifest []byte) []byte {
	t.Helper()
	return bundleOf(t, &sign.PlainData{Data: manifest}, k.Keypair)
}

// SignOCI signs the manifest d of repo ("host:port/path/chart") with k and
// attaches the signature to it, as `cosign sign --key` does.
func (k *CosignKey) SignOCI(t testing.TB, repo string, d digest.Digest) {
	t.Helper()
	Attach(t, repo, d, k.Bundle(t, d, CosignSignPredicate))
}

func bundleOf(t testing.TB, content sign.Content, key sign.Keypair) []byte {
	t.Helper()
	b, err := sign.Bundle(content, key, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Sigstore is a Sigstore instance of the test (a virtual Fulcio, Rekor log
// and timestamp authority) that signs keyless.
type Sigstore struct {
	vs *ca.VirtualSigstore
}

// NewSigstore makes a Sigstore instance with its own CAs and keys.
func NewSigstore(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return &Sigstore{vs: vs}
}

// TrustedMaterial is the instance's trusted root, as a trusted_root.json of
// it would give (the controller's --sigstore-trusted-root).
func (s *Sigstore) TrustedMaterial() root.TrustedMaterial { return s.vs }

// Bundle signs the statement over d with a certificate for subject and issuer
// from the instance's Fulcio, with an RFC 3161 timestamp from its authority
// and, when withTlog, the entry of its Rekor log (inclusion proof and signed
// entry timestamp).
func (s *Sigstore) Bundle(t testing.TB, subject, issuer string, d digest.Digest, withTlog bool) []byte {
	t.Helper()
	vs := s.vs
	e, err := vs.AttestAtTime(subject, issuer, Statement(d, CosignSignPredicate), time.Now().Add(5*time.Minute), true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	env := sc.EnvelopeContent().RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var sigs []*protodsse.Signature
	for _, s := range env.Signatures {
		raw, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, &protodsse.Signature{Sig: raw, Keyid: s.KeyID})
	}
	tss, _ := e.Timestamps()
	vm := &protobundle.VerificationMaterial{
		Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
		TimestampVerificationData: &protobundle.TimestampVerificationData{},
	}
	for _, ts := range tss {
		vm.TimestampVerificationData.Rfc3161Timestamps = append(vm.TimestampVerificationData.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
	}
	if withTlog {
		entries, _ := e.TlogEntries()
		for _, en := range entries {
			tle := en.TransparencyLogEntry()
			tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
			set, err := vs.RekorSignPayload(tlog.RekorPayload{
				Body:           base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
				IntegratedTime: tle.IntegratedTime,
				LogIndex:       tle.LogIndex,
				LogID:          hex.EncodeToString(tle.LogId.KeyId),
			})
			if err != nil {
				t.Fatal(err)
			}
			tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
			vm.TlogEntries = append(vm.TlogEntries, tle)
		}
	}
	out, err := protojson.Marshal(&protobundle.Bundle{
		MediaType:            bundleMediaType,
		VerificationMaterial: vm,
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: payload, PayloadType: env.PayloadType, Signatures: sigs,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// SignOCI signs the manifest d of repo ("host:port/path/chart") keyless as
// subject of issuer, with a transparency-log entry, and attaches the
// signature to it, as `cosign sign` does with an OIDC token.
func (s *Sigstore) SignOCI(t testing.TB, repo string, d digest.Digest, subject, issuer string) {
	t.Helper()
	Attach(t, repo, d, s.Bundle(t, subject, issuer, d, true))
}
