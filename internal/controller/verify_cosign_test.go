package controller

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	gcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/charttest"
	"kumodo.io/convoy/internal/verify/verifytest"
)

// The keyless identity of the tests: a CI workflow of the chart's repository,
// whose OIDC tokens the issuer signs.
const (
	keylessIssuer  = "https://token.actions.example.com"
	keylessSubject = "https://github.com/acme/charts/.github/workflows/release.yml@refs/heads/main"
)

// ociCharts is an OCI registry with the referrers API holding the chart app 0.1.0 of
// testdata under several paths, one a Release: each signed as its test says.
type ociCharts struct {
	*charttest.OCIRegistry
	t *testing.T
}

func newOCICharts(t *testing.T) *ociCharts {
	return &ociCharts{OCIRegistry: charttest.NewOCIRegistry(t, gcrregistry.WithReferrersSupport(true)), t: t}
}

// push pushes the chart app 0.1.0 to <path>/app and returns its repository
// (host:port/<path>/app) and manifest digest. The chart of each path is other
// content (its greeting is the path), so that no two have the same digest: a
// verification is remembered by the chart's digest, whatever its repository.
func (o *ociCharts) push(path string) (string, digest.Digest) {
	o.t.Helper()
	ref := o.Push(o.t, path, appArchive(o.t, charttest.Value("greeting", path)))
	repo := strings.TrimSuffix(ref, ":0.1.0")
	return repo, verifytest.Resolve(o.t, repo, "0.1.0")
}

// referrersGets counts the listings of the signatures of d in <path>/app.
func (o *ociCharts) referrersGets(path string, d digest.Digest) int {
	return o.Count("GET /v2/" + path + "/app/referrers/" + d.String())
}

// fromCosignRepo takes the chart app 0.1.0 from <path> of o, verified by cosign
// with the key of Secret secret, or keyless when keyless is set.
func fromCosignRepo(o *ociCharts, path, secret string, keyless *v1.KeylessVerify) releaseOption {
	return func(r *v1.Release) {
		r.Spec.Chart = v1.ChartSource{Repository: o.Repository(path), Name: "app", Version: "0.1.0"}
		verify := &v1.ChartVerify{Provider: v1.ChartVerifyCosign, Keyless: keyless}
		if secret != "" {
			verify.SecretRef = &v1.LocalObjectReference{Name: secret}
		}
		r.Spec.Chart.Verify = verify
	}
}

// cosignSecret creates the Secret name with key's cosign.pub.
func (e *env) cosignSecret(name string, key *verifytest.CosignKey) {
	e.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Data: map[string][]byte{"cosign.pub": key.PublicPEM}}
	if err := e.client.Create(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
}

// TestCosignVerifiedChart: charts of an OCI registry verified by cosign signatures
// made in the test and attached as referrers, as `cosign sign` attaches them. A chart
// signed by the Secret's key is applied (Ready once assessed), status.render.verified
// names the key's fingerprint and the Render records it; a steady Release lists no
// signature and verifies nothing again (the cached result of the metric). Unsigned,
// signed by another key, or keyless by another subject: Applied=False
// VerificationFailed with the failure's kind, nothing rendered or applied. Keyless,
// against the trusted root of the controller's options: applied, the identity is the
// certificate's subject. A registry that does not answer the read of the signatures:
// SourceNotReady.
func TestCosignVerifiedChart(t *testing.T) {
	sigstore := verifytest.NewSigstore(t)
	e := newEnv(t, envOptions{sigstoreRoot: sigstore.TrustedMaterial()})
	reg := newOCICharts(t)
	trusted, other := verifytest.NewCosignKey(t), verifytest.NewCosignKey(t)
	e.cosignSecret("cosign-keys", trusted)
	exact := &v1.KeylessVerify{Issuer: keylessIssuer, Subject: keylessSubject}

	// Signed by the trusted key, then steady.
	repo, d := reg.push("signed")
	trusted.SignOCI(t, repo, d)
	e.createRelease("signed", automatic(), interval(time.Second), fromCosignRepo(reg, "signed", "cosign-keys", nil))
	rel := e.waitApplied("signed", "True", v1.ReasonApplied)
	v := rel.Status.Render.Verified
	if v == nil || v.Provider != "cosign" || v.Identity != trusted.Fingerprint(t) || v.Time == nil {
		t.Fatalf("status.render.verified = %+v, want cosign, %s and a time", v, trusted.Fingerprint(t))
	}
	if e.configMap("signed-config") == nil {
		t.Fatal("the verified chart's ConfigMap signed-config was not applied")
	}
	e.wantRenderVerifiedBy("signed", rel.Status.Render.Ref, "cosign", trusted.Fingerprint(t))
	e.writeAssessment("signed", v1.HealthHealthy)
	e.waitReady("signed", "True", "Ready")

	m := e.reconciler.metrics.verifications
	if got := testutil.ToFloat64(m.WithLabelValues("cosign", "verified")); got != 1 {
		t.Fatalf("%v cosign verifications before the steady state, want 1", got)
	}
	cached, listings := testutil.ToFloat64(m.WithLabelValues("cosign", "cached")), reg.referrersGets("signed", d)
	if listings == 0 {
		t.Fatal("the registry listed no referrers of the chart: its signature was not read from it")
	}
	e.waitReconciled("signed", e.reconciles("signed")+2) // the interval: three more reconciles
	if got := testutil.ToFloat64(m.WithLabelValues("cosign", "cached")); got <= cached {
		t.Errorf("cached cosign verifications %v, want more than %v after steady reconciles", got, cached)
	}
	if got := testutil.ToFloat64(m.WithLabelValues("cosign", "verified")); got != 1 {
		t.Errorf("%v cosign verifications, want 1: a steady Release verified its chart again", got)
	}
	if got := reg.referrersGets("signed", d); got != listings {
		t.Errorf("%d listings of the chart's signatures, want %d: a steady Release read its signatures again", got, listings)
	}
	if now := e.release("signed").Status.Render.Verified; now == nil || now.Identity != trusted.Fingerprint(t) {
		t.Errorf("status.render.verified of the steady Release = %+v, want the key %s", now, trusted.Fingerprint(t))
	}

	// Keyless, against the trusted root of the controller's options.
	repo, d = reg.push("keyless")
	sigstore.SignOCI(t, repo, d, keylessSubject, keylessIssuer)
	e.createRelease("keyless", automatic(), fromCosignRepo(reg, "keyless", "", exact))
	rel = e.waitApplied("keyless", "True", v1.ReasonApplied)
	if v := rel.Status.Render.Verified; v == nil || v.Provider != "cosign" || v.Identity != keylessSubject {
		t.Errorf("status.render.verified = %+v, want cosign and the subject %s", v, keylessSubject)
	}
	if e.configMap("keyless-config") == nil {
		t.Error("the keyless-verified chart's ConfigMap keyless-config was not applied")
	}

	for _, tc := range []struct {
		name    string
		sign    func(repo string, d digest.Digest)
		secret  string
		keyless *v1.KeylessVerify
		message []string
	}{
		{name: "unsigned", secret: "cosign-keys",
			message: []string{"NoSignature", "cosign sign"}},
		{name: "other-key", sign: func(repo string, d digest.Digest) { other.SignOCI(t, repo, d) }, secret: "cosign-keys",
			message: []string{"WrongKey", "Secret " + e.ns + "/cosign-keys", "add the signer's key"}},
		{name: "other-subject", sign: func(repo string, d digest.Digest) {
			sigstore.SignOCI(t, repo, d, "mallory@example.org", keylessIssuer)
		}, keyless: exact,
			message: []string{"WrongIdentity", "spec.chart.verify.keyless"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, d := reg.push(tc.name)
			if tc.sign != nil {
				tc.sign(repo, d)
			}
			e.createRelease(tc.name, automatic(), fromCosignRepo(reg, tc.name, tc.secret, tc.keyless))
			rel := e.waitApplied(tc.name, "False", v1.ReasonVerificationFailed)
			msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message
			for _, want := range append(tc.message, "oci://"+repo+"@"+d.String()) {
				if !strings.Contains(msg, want) {
					t.Errorf("Applied message %q does not say %q", msg, want)
				}
			}
			if rel.Status.Render != nil || rel.Status.LastSuccessful != nil {
				t.Errorf("status.render %+v, lastSuccessful %+v: a chart that failed verification was rendered", rel.Status.Render, rel.Status.LastSuccessful)
			}
			if len(e.renders(tc.name)) != 0 {
				t.Errorf("Renders %v of a chart that failed verification", e.renders(tc.name))
			}
			if e.configMap(tc.name+"-config") != nil {
				t.Errorf("ConfigMap %s-config was applied from a chart that failed verification", tc.name)
			}
		})
	}

	// A registry that serves the chart but fails to list its signatures: the source is
	// not ready (retried), not a verification failure nor a failure of convoy's own.
	t.Run("signatures-unread", func(t *testing.T) {
		repo, d := reg.push("unread")
		trusted.SignOCI(t, repo, d)
		target, err := url.Parse(reg.Server.URL)
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if strings.Contains(req.URL.Path, "/referrers/") {
				http.Error(w, "referrers are down", http.StatusInternalServerError)
				return
			}
			proxy.ServeHTTP(w, req)
		}))
		t.Cleanup(front.Close)
		e.createRelease("unread", automatic(), fromCosignRepo(reg, "unread", "cosign-keys", nil), func(r *v1.Release) {
			r.Spec.Chart.Repository = "oci://" + strings.TrimPrefix(front.URL, "http://") + "/unread"
		})
		rel := e.waitApplied("unread", "False", v1.ReasonSourceNotReady)
		msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message
		for _, want := range []string{"reading the cosign signatures", "/unread/app@" + d.String(), "convoy retries"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Applied message %q does not say %q", msg, want)
			}
		}
		if rel.Status.Render != nil || e.configMap("unread-config") != nil {
			t.Errorf("status.render %+v: a chart whose signatures were not read was rendered or applied", rel.Status.Render)
		}
	})
}
