package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"kumodo.io/convoy/internal/render/charttest"
	"kumodo.io/convoy/internal/verify/verifytest"
)

// testRegistry is an in-process OCI registry holding charts and the cosign
// signatures (Sigstore bundles as OCI 1.1 referrers) made for them in the test.
type testRegistry struct {
	*charttest.OCIRegistry
}

func newTestRegistry(t testing.TB, referrersAPI bool) *testRegistry {
	return &testRegistry{charttest.NewOCIRegistry(t, gcrregistry.WithReferrersSupport(referrersAPI))}
}

// pushChart pushes a chart of the given version to <path>/podinfo and returns
// its repository (host/path/podinfo) and manifest digest.
func (r *testRegistry) pushChart(t testing.TB, path, version string) (string, digest.Digest) {
	t.Helper()
	archive := charttest.RawArchive(t, "podinfo", "apiVersion: v2\nname: podinfo\nversion: "+version+"\n")
	ref := r.Push(t, path, archive)
	repo := strings.TrimSuffix(ref, ":"+version)
	return repo, verifytest.Resolve(t, repo, version)
}

const (
	issuer      = "https://token.actions.example.com"
	signer      = "https://github.com/acme/charts/.github/workflows/release.yml@refs/heads/main"
	otherIssuer = "https://accounts.example.org"
	otherSigner = "mallory@example.org"
)

// TestCosign verifies real signatures made in the test, of charts in a real
// (in-process) OCI registry: keys and keyless (a virtual Fulcio, Rekor and
// TSA), with the referrers API and with the referrers tag schema.
func TestCosign(t *testing.T) {
	if verifytest.CosignSignPredicate != cosignSignPredicate {
		t.Fatalf("verifytest signs the predicate %q, cosign's is %q", verifytest.CosignSignPredicate, cosignSignPredicate)
	}
	vs := verifytest.NewSigstore(t)
	// untrusted is another Sigstore instance (its own Fulcio, Rekor and TSA)
	// than the trusted root's.
	untrusted := verifytest.NewSigstore(t)
	trusted, other := verifytest.NewCosignKey(t), verifytest.NewCosignKey(t)
	keyID := trusted.Fingerprint(t)

	keyless := func(k Keyless) CosignOptions {
		return CosignOptions{Keyless: &k, TrustedMaterial: vs.TrustedMaterial()}
	}
	byKey := CosignOptions{PublicKey: trusted.PublicPEM}
	exact := Keyless{Issuer: issuer, Subject: signer, TransparencyLog: true}

	type signFunc func(t *testing.T, r *testRegistry, repo string, d digest.Digest)
	attach := func(make func(t *testing.T, d digest.Digest) []byte) signFunc {
		return func(t *testing.T, r *testRegistry, repo string, d digest.Digest) {
			verifytest.Attach(t, repo, d, make(t, d))
		}
	}
	withKey := func(k *verifytest.CosignKey) signFunc {
		return func(t *testing.T, r *testRegistry, repo string, d digest.Digest) { k.SignOCI(t, repo, d) }
	}
	keylessAs := func(subject, iss string, withTlog bool) signFunc {
		return attach(func(t *testing.T, d digest.Digest) []byte { return vs.Bundle(t, subject, iss, d, withTlog) })
	}
	keylessUntrusted := func(t *testing.T, r *testRegistry, repo string, d digest.Digest) {
		untrusted.SignOCI(t, repo, d, signer, issuer)
	}

	cases := []struct {
		name string
		// noReferrersAPI serves a registry without the referrers API, where
		// signatures are listed by the referrers tag sha256-<hex>.
		noReferrersAPI bool
		sign           signFunc
		// replace pushes other content under the chart's tag after signing:
		// the chart verified is then the replacement.
		replace bool
		// copySignature attaches the signature of the signed chart to the
		// replacement as well.
		copySignature bool
		opts          CosignOptions
		want          Result
		wantKind      Kind
		wantMessage   string
	}{
		{name: "key: valid", sign: withKey(trusted), opts: byKey, want: Result{Provider: "cosign", Identity: keyID}},
		{name: "key: valid, referrers tag schema", noReferrersAPI: true, sign: withKey(trusted), opts: byKey, want: Result{Provider: "cosign", Identity: keyID}},
		{name: "key: message signature over the manifest", sign: func(t *testing.T, r *testRegistry, repo string, d digest.Digest) {
			_, rc, err := verifytest.Remote(t, repo).FetchReference(context.Background(), d.String())
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(rc)
			rc.Close()
			verifytest.Attach(t, repo, d, trusted.MessageBundle(t, buf.Bytes()))
		}, opts: byKey, want: Result{Provider: "cosign", Identity: keyID}},
		{name: "key: missing", opts: byKey, wantKind: NoSignature, wantMessage: "no cosign signature refers to it"},
		{name: "key: missing, referrers tag schema", noReferrersAPI: true, opts: byKey, wantKind: NoSignature},
		{name: "key: only a signature in the older format (the .sig tag)", sign: func(t *testing.T, r *testRegistry, repo string, d digest.Digest) {
			r.pushLegacy(t, repo, d)
		}, opts: byKey, wantKind: NoSignature, wantMessage: "older format (the tag sha256-" + "%HEX%" + ".sig)"},
		{name: "key: only an attestation", sign: attach(func(t *testing.T, d digest.Digest) []byte {
			return trusted.Bundle(t, d, "https://slsa.dev/provenance/v1")
		}), opts: byKey, wantKind: NoSignature, wantMessage: "not a cosign signature"},
		{name: "key: wrong key", sign: withKey(other), opts: byKey, wantKind: WrongKey},
		{name: "key: keyless signature where a key is trusted", sign: keylessAs(signer, issuer, true), opts: byKey, wantKind: WrongKey, wantMessage: "signed keyless"},
		{name: "key: chart replaced under its tag after signing", sign: withKey(trusted), replace: true, opts: byKey, wantKind: NoSignature},
		{name: "key: signature copied to a replaced chart", sign: withKey(trusted), replace: true, copySignature: true, opts: byKey, wantKind: DigestMismatch, wantMessage: "not of this chart"},
		{name: "key: signature copied to a replaced chart, referrers tag schema", noReferrersAPI: true, sign: withKey(trusted), replace: true, copySignature: true, opts: byKey, wantKind: DigestMismatch},
		{name: "key: a wrong key's and the trusted key's signatures", sign: func(t *testing.T, r *testRegistry, repo string, d digest.Digest) {
			withKey(other)(t, r, repo, d)
			withKey(trusted)(t, r, repo, d)
		}, opts: byKey, want: Result{Provider: "cosign", Identity: keyID}},
		{name: "key: not PEM", sign: withKey(trusted), opts: CosignOptions{PublicKey: []byte("ssh-ed25519 AAAA")}, wantKind: Misconfigured, wantMessage: "not a PEM public key"},

		{name: "keyless: valid", sign: keylessAs(signer, issuer, true), opts: keyless(exact), want: Result{Provider: "cosign", Identity: signer}},
		{name: "keyless: valid, referrers tag schema", noReferrersAPI: true, sign: keylessAs(signer, issuer, true), opts: keyless(exact), want: Result{Provider: "cosign", Identity: signer}},
		{name: "keyless: regexp identity", sign: keylessAs(signer, issuer, true), opts: keyless(Keyless{
			IssuerRegExp: `https://token\.actions\.example\.com`, SubjectRegExp: `https://github\.com/acme/.*`, TransparencyLog: true,
		}), want: Result{Provider: "cosign", Identity: signer}},
		{name: "keyless: regexp is anchored", sign: keylessAs(signer, issuer, true), opts: keyless(Keyless{
			Issuer: issuer, SubjectRegExp: `github\.com/acme/charts`, TransparencyLog: true,
		}), wantKind: WrongIdentity},
		{name: "keyless: other subject", sign: keylessAs(otherSigner, issuer, true), opts: keyless(exact), wantKind: WrongIdentity, wantMessage: "the Release trusts issuer"},
		{name: "keyless: the right identity from an untrusted Fulcio", sign: keylessUntrusted, opts: keyless(exact), wantKind: WrongKey},
		{name: "keyless: the right identity from an untrusted Fulcio, log not required", sign: keylessUntrusted, opts: keyless(Keyless{Issuer: issuer, Subject: signer}), wantKind: WrongKey},
		{name: "keyless: other issuer", sign: keylessAs(signer, otherIssuer, true), opts: keyless(exact), wantKind: WrongIdentity},
		{name: "keyless: no transparency-log entry, log required", sign: keylessAs(signer, issuer, false), opts: keyless(exact), wantKind: WrongKey, wantMessage: "no transparency-log entry"},
		{name: "keyless: no transparency-log entry, log not required", sign: keylessAs(signer, issuer, false), opts: keyless(Keyless{
			Issuer: issuer, Subject: signer, TransparencyLog: false,
		}), want: Result{Provider: "cosign", Identity: signer}},
		{name: "keyless: with a log entry, log not required", sign: keylessAs(signer, issuer, true), opts: keyless(Keyless{
			Issuer: issuer, Subject: signer,
		}), want: Result{Provider: "cosign", Identity: signer}},
		{name: "keyless: key signature where keyless is trusted", sign: withKey(trusted), opts: keyless(exact), wantKind: WrongKey, wantMessage: "signed with a key"},
		{name: "keyless: signature copied to a replaced chart", sign: keylessAs(signer, issuer, true), replace: true, copySignature: true, opts: keyless(exact), wantKind: DigestMismatch},
		{name: "keyless: no trusted root", sign: keylessAs(signer, issuer, true), opts: CosignOptions{Keyless: &exact}, wantKind: Misconfigured, wantMessage: "trusted root"},
		{name: "keyless: regexp does not compile", opts: keyless(Keyless{Issuer: issuer, SubjectRegExp: `(`}), wantKind: Misconfigured},
		{name: "keyless: neither subject nor subjectRegExp", opts: keyless(Keyless{Issuer: issuer}), wantKind: Misconfigured},
		{name: "neither key nor keyless", opts: CosignOptions{}, wantKind: Misconfigured},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRegistry(t, !tc.noReferrersAPI)
			repo, d := r.pushChart(t, "charts", "1.0.0")
			if tc.sign != nil {
				tc.sign(t, r, repo, d)
			}
			verified := d
			if tc.replace {
				// Other content under the same tag, which the push moves.
				archive := charttest.RawArchive(t, "podinfo", "apiVersion: v2\nname: podinfo\nversion: 1.0.0\ndescription: replaced\n")
				r.Push(t, "charts", archive)
				verified = verifytest.Resolve(t, repo, "1.0.0")
				if verified == d {
					t.Fatal("the replacement has the signed chart's digest")
				}
				if tc.copySignature {
					r.copyReferrers(t, repo, d, verified)
				}
			}
			opts := tc.opts
			opts.PlainHTTP = true
			got, err := Cosign(context.Background(), repo, verified.String(), opts)
			if tc.wantKind != "" {
				if err == nil {
					t.Fatalf("Cosign = %+v, want a %s error", got, tc.wantKind)
				}
				t.Logf("error: %v", err)
				if k := KindOf(err); k != tc.wantKind {
					t.Fatalf("Cosign error kind = %q, want %q; error: %v", k, tc.wantKind, err)
				}
				if !strings.Contains(err.Error(), strings.ReplaceAll(tc.wantMessage, "%HEX%", verified.Encoded())) {
					t.Errorf("Cosign error %q does not say %q", err, tc.wantMessage)
				}
				if !strings.Contains(err.Error(), "oci://"+repo+"@"+verified.String()) {
					t.Errorf("Cosign error %q does not name the chart", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Cosign: %v", err)
			}
			if got != tc.want {
				t.Errorf("Cosign = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// pushLegacy pushes a signature manifest as older cosign does, at the tag
// sha256-<hex>.sig: a simple-signing payload layer (its signature is not
// checked, so it is a dummy).
func (r *testRegistry) pushLegacy(t testing.TB, repo string, d digest.Digest) {
	t.Helper()
	ctx := context.Background()
	rr := verifytest.Remote(t, repo)
	push := func(mt string, data []byte) ocispec.Descriptor {
		desc := ocispec.Descriptor{MediaType: mt, Digest: digest.FromBytes(data), Size: int64(len(data))}
		if err := rr.Push(ctx, desc, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		return desc
	}
	cfg := push("application/vnd.oci.image.config.v1+json", []byte(`{"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":[]}}`))
	payload := push("application/vnd.dev.cosign.simplesigning.v1+json", fmt.Appendf(nil, `{"critical":{"identity":{"docker-reference":%q},"image":{"docker-manifest-digest":%q},"type":"cosign container image signature"},"optional":null}`, repo, d))
	payload.Annotations = map[string]string{"dev.cosignproject.cosign/signature": "MEUCIQDdummy"}
	raw, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: []ocispec.Descriptor{payload}})
	if err != nil {
		t.Fatal(err)
	}
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(raw), Size: int64(len(raw))}
	if err := rr.PushReference(ctx, desc, bytes.NewReader(raw), "sha256-"+d.Encoded()+".sig"); err != nil {
		t.Fatal(err)
	}
}

// copyReferrers attaches the bundles that refer to from to to as well: what
// someone replacing a chart does to pass it off as signed.
func (r *testRegistry) copyReferrers(t testing.TB, repo string, from, to digest.Digest) {
	t.Helper()
	ctx := context.Background()
	rr := verifytest.Remote(t, repo)
	var refs []ocispec.Descriptor
	if err := rr.Referrers(ctx, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: from}, "", func(p []ocispec.Descriptor) error {
		refs = append(refs, p...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(refs) == 0 {
		t.Fatal("no referrers to copy")
	}
	for _, desc := range refs {
		rc, err := rr.Manifests().Fetch(ctx, desc)
		if err != nil {
			t.Fatal(err)
		}
		var m ocispec.Manifest
		err = json.NewDecoder(rc).Decode(&m)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		lrc, err := rr.Blobs().Fetch(ctx, m.Layers[0])
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(lrc)
		lrc.Close()
		verifytest.Attach(t, repo, to, buf.Bytes())
	}
}

// BenchmarkCosignVerify measures one verification of a key-signed chart:
// listing its referrers, reading the bundle and checking it.
func BenchmarkCosignVerify(b *testing.B) {
	r := newTestRegistry(b, true)
	key := verifytest.NewCosignKey(b)
	repo, d := r.pushChart(b, "charts", "1.0.0")
	key.SignOCI(b, repo, d)
	opts := CosignOptions{PublicKey: key.PublicPEM, PlainHTTP: true}
	ctx := context.Background()
	for b.Loop() {
		if _, err := Cosign(ctx, repo, d.String(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWorst pins which failure is reported when several bundles fail.
func TestWorst(t *testing.T) {
	e := func(k Kind) *Error { return &Error{Kind: k, Subject: "s", Err: fmt.Errorf("%s", k)} }
	cases := []struct {
		name  string
		in    []*Error
		want  Kind
		wantN string
	}{
		{name: "one", in: []*Error{e(WrongKey)}, want: WrongKey},
		{name: "a copied signature before a wrong key", in: []*Error{e(WrongKey), e(DigestMismatch)}, want: DigestMismatch, wantN: "1 other"},
		{name: "a wrong identity before a wrong key", in: []*Error{e(WrongKey), e(WrongIdentity), e(WrongKey)}, want: WrongIdentity, wantN: "2 other"},
		{name: "a copied signature before a wrong identity", in: []*Error{e(WrongIdentity), e(DigestMismatch)}, want: DigestMismatch, wantN: "1 other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := worst(tc.in)
			if diff := cmp.Diff(tc.want, got.Kind); diff != "" {
				t.Errorf("worst kind (-want +got):\n%s", diff)
			}
			if !strings.Contains(got.Error(), tc.wantN) {
				t.Errorf("worst = %q, want it to say %q", got, tc.wantN)
			}
		})
	}
}

// TestAnchor pins that a keyless regular expression matches whole values.
func TestAnchor(t *testing.T) {
	cases := []struct{ re, value string }{
		{`https://github\.com/acme/[a-z]+`, "https://github.com/acme/charts"},
		{`alice@example\.com`, "alice@example.com"},
		{`a|b`, "a"},
	}
	var got []bool
	var want []bool
	for _, tc := range cases {
		re := regexp.MustCompile(anchor(tc.re))
		got = append(got, re.MatchString(tc.value), re.MatchString("x"+tc.value), re.MatchString(tc.value+"/x"))
		want = append(want, true, false, false)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("matches (-want +got):\n%s", diff)
	}
	if anchor("") != "" {
		t.Error(`anchor("") is not ""`)
	}
}
