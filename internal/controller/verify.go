package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/internal/store"
	"kumodo.io/convoy/internal/targets"
	"kumodo.io/convoy/internal/verify"
)

// Verification of charts (docs/verified-charts.md): a chart that spec.chart.verify
// asks to verify is checked after it is fetched and before it is rendered, at every
// reconcile, so that a chart that fails is never rendered and no render of it is
// applied. What verified is remembered in memory by the chart's digest, the trust
// material's digest and the policy (verifications), so that a steady Release fetches
// no signature and verifies nothing again.

// Trusted key names of the Secret that spec.chart.verify.secretRef names.
const (
	keyCosignPub = "cosign.pub"
	keyKeyring   = "keyring"
)

// Results of convoy_chart_verifications_total besides the failures' kinds.
const (
	verificationVerified = "verified"
	verificationCached   = "cached"
)

// maxVerifications bounds the verifications remembered; past it the memory starts
// again (the next reconcile of each Release verifies once more).
const maxVerifications = 4096

// verifications remembers the charts verified: a key of the chart's digest, the
// trust material and the policy, to the result and when it was verified.
type verifications struct {
	mu    sync.Mutex
	byKey map[string]verification
}

type verification struct {
	result verify.Result
	at     time.Time
}

func (v *verifications) get(key string) (verification, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.byKey[key]
	return e, ok
}

func (v *verifications) put(key string, e verification) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.byKey == nil || len(v.byKey) >= maxVerifications {
		v.byKey = map[string]verification{}
	}
	v.byKey[key] = e
}

// verificationKey is the key of a verification: the chart's digest, the digest of
// the trust material the provider reads, and the policy (spec.chart.verify).
func verificationKey(chartDigest string, policy *v1.ChartVerify, material []byte) (string, error) {
	p, err := json.Marshal(policy)
	if err != nil {
		return "", err
	}
	m := sha256.Sum256(material)
	pd := sha256.Sum256(p)
	return chartDigest + "|" + hex.EncodeToString(m[:]) + "|" + hex.EncodeToString(pd[:]), nil
}

// chartVerificationAsked says whether the Release asks for its chart to be
// verified: spec.chart.verify, or spec.chart.git.verify for a chart from Git.
func chartVerificationAsked(rel *v1.Release) bool {
	return rel.Spec.Chart.Verify != nil || (rel.Spec.Chart.Git != nil && rel.Spec.Chart.Git.Verify != nil)
}

// verificationRequired is the Result that refuses a Release which does not ask for
// verification while the controller requires it (--require-verified-charts); nil
// when it asks or nothing is required.
func (r *Reconciler) verificationRequired(rel *v1.Release) *policy.Result {
	if !r.requireVerified || chartVerificationAsked(rel) {
		return nil
	}
	what := "set spec.chart.verify: cosign with the signers' key or identity for a chart of an OCI registry, helm with their PGP keyring for a chart of an HTTP repository"
	if rel.Spec.Chart.Git != nil {
		what = "set spec.chart.git.verify with the keys allowed to sign the commits"
	}
	return &policy.Result{Reason: v1.ReasonVerificationFailed, Message: fmt.Sprintf(
		"Chart verification is required (--require-verified-charts): %s. Nothing is rendered or applied until then.", what)}
}

// trustMaterial reads the Secret that spec.chart.verify.secretRef names, in the
// Release's namespace, as host's identity (like credentials); nil when the Release
// names none. A missing or unreadable Secret stops the reconcile with
// VerificationFailed (or Forbidden).
func (r *Reconciler) trustMaterial(ctx context.Context, rel *v1.Release, host *targets.Target) (map[string][]byte, *policy.Result) {
	v := rel.Spec.Chart.Verify
	if v == nil || v.SecretRef == nil || v.SecretRef.Name == "" {
		return nil, nil
	}
	reader := r.apiReader
	if host != nil && !host.Identity.IsZero() {
		reader = host.Client
	}
	secret := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: rel.Namespace, Name: v.SecretRef.Name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, &policy.Result{Reason: v1.ReasonVerificationFailed, Message: fmt.Sprintf(
			"The Secret %s/%s named by spec.chart.verify.secretRef does not exist: create it with the key %s.",
			rel.Namespace, v.SecretRef.Name, trustedKeyName(v))}
	case err != nil:
		return nil, &policy.Result{Reason: forbiddenReason(host, v1.ReasonVerificationFailed, err), Message: fmt.Sprintf(
			"Cannot read the Secret %s/%s named by spec.chart.verify.secretRef: %v.", rel.Namespace, v.SecretRef.Name, err)}
	}
	return secret.Data, nil
}

// trustedKeyName is the key of the Secret that the provider reads.
func trustedKeyName(v *v1.ChartVerify) string {
	if v.Provider == v1.ChartVerifyHelm {
		return keyKeyring
	}
	return keyCosignPub
}

// verifyChart verifies chart as spec.chart.verify asks, with the trust material of
// its Secret (trust); nil, nil when the Release asks for no verification. A
// verification remembered for the same chart, trust and policy is taken as it is. A
// failure is a *verify.Error (VerificationFailed) whose message says what to do, or
// the source's error reading the signature.
func (r *Reconciler) verifyChart(ctx context.Context, st *state, chart *source.Chart, trust map[string][]byte) (*v1.VerifiedStatus, error) {
	rel := st.rel
	v := rel.Spec.Chart.Verify
	if v == nil {
		// A chart from Git with spec.chart.git.verify: the source verified its
		// commit before it read anything of it.
		if chart.Verified != nil {
			return &v1.VerifiedStatus{Provider: chart.Verified.Provider, Identity: chart.Verified.Identity, Time: timestamp(st.now)}, nil
		}
		return nil, nil
	}
	material := trust[trustedKeyName(v)]
	key, err := verificationKey(chart.Digest, v, material)
	if err != nil {
		return nil, err
	}
	if e, ok := r.verified.get(key); ok {
		r.metrics.verification(string(v.Provider), verificationCached)
		return verifiedStatus(e), nil
	}
	var res verify.Result
	switch v.Provider {
	case v1.ChartVerifyHelm:
		if chart.Provenance == nil {
			err = &verify.Error{Kind: verify.Misconfigured, Subject: "chart " + chart.What,
				Err: fmt.Errorf("helm verifies the provenance files of http(s) repositories only")}
			break
		}
		var prov []byte
		if prov, err = chart.Provenance(ctx); err != nil {
			return nil, err // the repository did not answer: SourceNotReady
		}
		res, err = verify.HelmProvenance(chart.Archive, prov, material, chart.File)
	case v1.ChartVerifyCosign:
		var opts verify.CosignOptions
		if chart.Registry != nil {
			opts = *chart.Registry
		}
		opts.PublicKey, opts.TrustedMaterial = material, r.sigstoreRoot
		if k := v.Keyless; k != nil {
			opts.PublicKey = nil
			opts.Keyless = &verify.Keyless{Issuer: k.Issuer, Subject: k.Subject, IssuerRegExp: k.IssuerRegExp,
				SubjectRegExp: k.SubjectRegExp, TransparencyLog: k.TransparencyLog == nil || *k.TransparencyLog}
		}
		res, err = verify.Cosign(ctx, chart.OCIRepository, chart.Digest, opts)
		if err != nil && verify.KindOf(err) == "" && ctx.Err() == nil {
			// The registry did not answer the read of the signatures: as for the chart.
			return nil, signaturesUnread{fmt.Errorf("%w; check that the registry is up and serves the chart's referrers (convoy retries)", err)}
		}
	default:
		err = &verify.Error{Kind: verify.Misconfigured, Subject: "chart " + chart.What,
			Err: fmt.Errorf("unknown provider %q", v.Provider)}
	}
	if err != nil {
		kind := verify.KindOf(err)
		if kind == "" {
			return nil, err
		}
		r.metrics.verification(string(v.Provider), string(kind))
		return nil, fmt.Errorf("%w; %s", err, verificationHint(rel, v, kind))
	}
	r.metrics.verification(string(v.Provider), verificationVerified)
	e := verification{result: res, at: st.now}
	r.verified.put(key, e)
	return verifiedStatus(e), nil
}

// signaturesUnread is a registry's failure to answer the read of a chart's cosign
// signatures: SourceNotReady, retried with a backoff as a failed fetch of the chart
// is, not a failure of convoy's own.
type signaturesUnread struct{ error }

func (e signaturesUnread) Reason() string { return v1.ReasonSourceNotReady }
func (e signaturesUnread) Unwrap() error  { return e.error }

// verificationHint says what to do about a failed verification.
func verificationHint(rel *v1.Release, v *v1.ChartVerify, kind verify.Kind) string {
	secret := "the trusted keys of spec.chart.verify"
	if v.SecretRef != nil {
		secret = fmt.Sprintf("the key %s of Secret %s/%s", trustedKeyName(v), rel.Namespace, v.SecretRef.Name)
	}
	switch kind {
	case verify.NoSignature:
		if v.Provider == v1.ChartVerifyHelm {
			return "publish the chart's provenance file (helm package --sign) next to its archive"
		}
		return "sign the chart with cosign sign"
	case verify.WrongKey:
		return fmt.Sprintf("the trusted keys are %s: publish a signature made with one of them, or add the signer's key to the Secret", secret)
	case verify.WrongIdentity:
		return "check spec.chart.verify.keyless: the signature's certificate names another issuer or subject"
	case verify.DigestMismatch:
		return "the chart is not what was signed: publish a signature of this archive, or check the repository"
	default:
		return fmt.Sprintf("check %s", secret)
	}
}

// verifiedStatus is status.render.verified of a verification.
func verifiedStatus(e verification) *v1.VerifiedStatus {
	return &v1.VerifiedStatus{Provider: e.result.Provider, Identity: e.result.Identity, Time: timestamp(e.at)}
}

// verifiedAnnotation is the value of AnnotationVerified on the Render of a render
// that v verified; "" when v is nil.
func verifiedAnnotation(v *v1.VerifiedStatus) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// recordVerified writes AnnotationVerified on an existing Render (meta) whose
// annotation does not name the provider and identity of v: a render made before
// its chart was verified, or verified by another key. The time of a verification
// already recorded is kept, so a controller that verifies again after a restart
// writes nothing. It returns the Render's metadata as patched; nil when it wrote
// nothing.
func (r *Reconciler) recordVerified(ctx context.Context, v *v1.VerifiedStatus, meta *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
	if v == nil {
		return nil, nil
	}
	var recorded v1.VerifiedStatus
	if old := meta.Annotations[v1.AnnotationVerified]; old != "" && json.Unmarshal([]byte(old), &recorded) == nil &&
		recorded.Provider == v.Provider && recorded.Identity == v.Identity {
		return nil, nil
	}
	patched := meta.DeepCopy()
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	patched.Annotations[v1.AnnotationVerified] = verifiedAnnotation(v)
	if err := store.PatchRenderMetadata(ctx, r.client, patched, meta); err != nil {
		return nil, fmt.Errorf("record the verification: %w", err)
	}
	return patched, nil
}

// unverifiedRender is the Result that refuses to apply a Render other than the
// current render (a pin, a rollback) whose chart was not verified, while the Release
// asks for verification; nil otherwise. The current render was verified by this
// reconcile; an older one counts as verified when its Render records it
// (AnnotationVerified).
func unverifiedRender(rel *v1.Release, obj *v1.Render) *policy.Result {
	if !chartVerificationAsked(rel) || obj.Annotations[v1.AnnotationVerified] != "" {
		return nil
	}
	return &policy.Result{Reason: v1.ReasonVerificationFailed, Message: fmt.Sprintf(
		"Render %s was made from a chart that was not verified, and spec.chart.verify asks for verified charts: it is not applied. "+
			"Pin a verified render (release history shows them), or remove the pin.", obj.Name)}
}
