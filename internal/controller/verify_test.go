package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/charttest"
	"kumodo.io/convoy/internal/verify/verifytest"
)

// signedRepo is a Helm HTTP repository of the chart app, version 0.1.0, that serves
// the archive's provenance file (app-0.1.0.tgz.prov) when it has one, as a
// repository of `helm package --sign` archives does.
type signedRepo struct {
	server *httptest.Server

	mu       sync.Mutex
	index    []byte
	archive  []byte
	prov     []byte
	provGets int
}

const signedChartFile = "app-0.1.0.tgz"

// newSignedRepo serves archive with the provenance file prov (nil: none).
func newSignedRepo(t *testing.T, archive, prov []byte) *signedRepo {
	t.Helper()
	r := &signedRepo{archive: archive, prov: prov}
	index := repo.NewIndexFile()
	sum := sha256.Sum256(archive)
	if err := index.MustAdd(&chart.Metadata{APIVersion: "v2", Name: "app", Version: "0.1.0"}, signedChartFile, "", hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	var err error
	if r.index, err = yaml.Marshal(index); err != nil {
		t.Fatal(err)
	}
	r.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch req.URL.Path {
		case "/index.yaml":
			_, _ = w.Write(r.index)
		case "/" + signedChartFile:
			_, _ = w.Write(r.archive)
		case "/" + signedChartFile + ".prov":
			r.provGets++
			if r.prov == nil {
				http.NotFound(w, req)
				return
			}
			_, _ = w.Write(r.prov)
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(r.server.Close)
	return r
}

// publish serves prov as the archive's provenance file from now on.
func (r *signedRepo) publish(prov []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prov = prov
}

func (r *signedRepo) provenanceGets() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.provGets
}

// appArchive is the chart app 0.1.0 of testdata, packaged.
func appArchive(t *testing.T, edits ...func(*chart.Chart)) []byte {
	return charttest.Package(t, filepath.Join("testdata", "charts", "app"), append([]func(*chart.Chart){charttest.Version("0.1.0")}, edits...)...)
}

// keyringSecret creates the Secret name with the keyring of keys.
func (e *env) keyringSecret(name string, keys ...*verifytest.Key) {
	e.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Data: map[string][]byte{"keyring": verifytest.Keyring(e.t, keys...)}}
	if err := e.client.Create(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
}

// fromSignedRepo takes the chart from r; verified asks for helm verification with
// the keyring of Secret chart-keys.
func fromSignedRepo(r *signedRepo, verified bool) releaseOption {
	return func(rel *v1.Release) {
		rel.Spec.Chart = v1.ChartSource{Repository: r.server.URL, Name: "app", Version: "0.1.0"}
		if verified {
			rel.Spec.Chart.Verify = &v1.ChartVerify{Provider: v1.ChartVerifyHelm, SecretRef: &v1.LocalObjectReference{Name: "chart-keys"}}
		}
	}
}

// A chart whose provenance file a trusted key signed is applied, status.render.verified
// names the key; a steady Release then fetches no provenance file and verifies
// nothing again (the remembered verification: the metric's cached result), and
// writes nothing.
func TestHelmProvenanceVerified(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := verifytest.NewKey(t, "chart-signer")
	archive := appArchive(t)
	r := newSignedRepo(t, archive, key.Sign(t, archive, signedChartFile))
	e.keyringSecret("chart-keys", verifytest.NewKey(t, "someone-else"), key)

	e.createRelease("web", automatic(), interval(time.Second), fromSignedRepo(r, true))
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	v := rel.Status.Render.Verified
	if v == nil || v.Provider != "helm" || v.Identity != key.Fingerprint() || v.Time == nil {
		t.Fatalf("status.render.verified = %+v, want helm, %s and a time", v, key.Fingerprint())
	}
	if cm := e.configMap("web-config"); cm == nil {
		t.Fatal("the verified chart's ConfigMap web-config was not applied")
	}
	e.wantRenderVerified("web", rel.Status.Render.Ref, key.Fingerprint())

	m := e.reconciler.metrics.verifications
	verified, gets := testutil.ToFloat64(m.WithLabelValues("helm", "verified")), r.provenanceGets()
	if verified != 1 || gets != 1 {
		t.Fatalf("%v verifications and %d reads of the .prov before the steady state, want 1 and 1", verified, gets)
	}
	steady := e.release("web")
	cached := testutil.ToFloat64(m.WithLabelValues("helm", "cached"))
	e.waitReconciled("web", e.reconciles("web")+2) // the interval: three more reconciles
	if got := testutil.ToFloat64(m.WithLabelValues("helm", "cached")); got <= cached {
		t.Errorf("cached verifications %v, want more than %v after steady reconciles", got, cached)
	}
	if got := testutil.ToFloat64(m.WithLabelValues("helm", "verified")); got != 1 {
		t.Errorf("%v verifications, want 1: a steady Release verified its chart again", got)
	}
	if got := r.provenanceGets(); got != 1 {
		t.Errorf("%d reads of the .prov, want 1: a steady Release read its signature again", got)
	}
	if now := e.release("web"); now.ResourceVersion != steady.ResourceVersion {
		t.Errorf("a steady verified Release was written: resourceVersion %s, then %s", steady.ResourceVersion, now.ResourceVersion)
	}
}

// A chart without a provenance file, one that is not what was signed, or one signed
// by a key not in the keyring is not rendered or applied: Applied=False
// VerificationFailed names what failed and what to do, and a Warning Event says it.
func TestHelmProvenanceRefused(t *testing.T) {
	e := newEnv(t, envOptions{})
	trusted, stranger := verifytest.NewKey(t, "chart-signer"), verifytest.NewKey(t, "stranger")
	e.keyringSecret("chart-keys", trusted)
	archive := appArchive(t)
	tampered := appArchive(t, charttest.Value("greeting", "changed after signing"))
	for _, tc := range []struct {
		name    string
		repo    *signedRepo
		message []string
	}{
		{name: "unsigned", repo: newSignedRepo(t, archive, nil),
			message: []string{"NoSignature", "app-0.1.0.tgz", "helm package --sign"}},
		{name: "tampered", repo: newSignedRepo(t, tampered, trusted.Sign(t, archive, signedChartFile)),
			message: []string{"DigestMismatch", "app-0.1.0.tgz", "publish a signature of this archive"}},
		{name: "stranger", repo: newSignedRepo(t, archive, stranger.Sign(t, archive, signedChartFile)),
			message: []string{"WrongKey", stranger.Fingerprint(), "Secret " + e.ns + "/chart-keys", "add the signer's key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.createRelease(tc.name, automatic(), fromSignedRepo(tc.repo, true))
			rel := e.waitApplied(tc.name, "False", v1.ReasonVerificationFailed)
			msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message
			for _, want := range tc.message {
				if !strings.Contains(msg, want) {
					t.Errorf("Applied message %q does not say %q", msg, want)
				}
			}
			if rel.Status.Render != nil || rel.Status.LastSuccessful != nil {
				t.Errorf("status.render %+v, lastSuccessful %+v: a chart that failed verification was rendered", rel.Status.Render, rel.Status.LastSuccessful)
			}
			if cm := e.configMap(tc.name + "-config"); cm != nil {
				t.Errorf("ConfigMap %s-config was applied from a chart that failed verification", tc.name)
			}
			e.eventually("a Warning Event VerificationFailed", func() (bool, string) {
				var events corev1.EventList
				if err := e.client.List(e.ctx, &events); err != nil {
					return false, err.Error()
				}
				return hasEvent(events, e.ns, tc.name, v1.ReasonVerificationFailed), fmt.Sprintf("%d events", len(events.Items))
			})
		})
	}
}

// hasEvent says whether events hold a Warning event of reason about the Release name.
func hasEvent(events corev1.EventList, ns, name, reason string) bool {
	for _, ev := range events.Items {
		if ev.InvolvedObject.Namespace == ns && ev.InvolvedObject.Name == name && ev.Reason == reason && ev.Type == corev1.EventTypeWarning {
			return true
		}
	}
	return false
}

// Manual mode: a render pending approval that was made without verification is not
// applied by a /sync once spec.chart.verify asks for a signature the chart lacks;
// once the signature is published, the chart is verified and its render applied.
func TestPendingUnverifiedRenderNotAppliedOnceVerifyIsOn(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := verifytest.NewKey(t, "chart-signer")
	e.keyringSecret("chart-keys", key)
	archive := appArchive(t)
	r := newSignedRepo(t, archive, nil)

	e.createRelease("web", interval(time.Second), fromSignedRepo(r, false))
	pending := e.waitApplied("web", "False", v1.ReasonWaitingForSync)
	if pending.Status.Render == nil || pending.Status.Render.Verified != nil {
		t.Fatalf("status.render = %+v, want an unverified render pending", pending.Status.Render)
	}

	e.update("web", fromSignedRepo(r, true))
	e.waitApplied("web", "False", v1.ReasonVerificationFailed)
	e.sync("web", false)
	e.consistently("the unverified render not applied", 3*time.Second, func() (bool, string) {
		rel := e.release("web")
		return rel.Status.LastSuccessful == nil && e.configMap("web-config") == nil,
			fmt.Sprintf("lastSuccessful %+v, applied: %s", rel.Status.LastSuccessful, appliedMessage(rel))
	})

	r.publish(key.Sign(t, archive, signedChartFile))
	rel := e.waitApplied("web", "True", v1.ReasonApplied)
	if v := rel.Status.Render.Verified; v == nil || v.Identity != key.Fingerprint() {
		t.Errorf("status.render.verified = %+v, want the key %s", v, key.Fingerprint())
	}
	if rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.RenderRef != rel.Status.Render.Ref {
		t.Errorf("lastSuccessful = %+v, want the verified render %s", rel.Status.LastSuccessful, rel.Status.Render.Ref)
	}
	if e.configMap("web-config") == nil {
		t.Error("ConfigMap web-config not applied from the verified chart")
	}
	// The same manifests: the Render made before verification records it now.
	if rel.Status.Render.Ref != pending.Status.Render.Ref {
		t.Logf("the verified render %s is not the pending one %s", rel.Status.Render.Ref, pending.Status.Render.Ref)
	}
	e.wantRenderVerified("web", rel.Status.Render.Ref, key.Fingerprint())
}

// wantRenderVerified checks that the Render of ref records its verification by key
// (AnnotationVerified), as release history shows it.
func (e *env) wantRenderVerified(release, ref, key string) {
	e.t.Helper()
	e.wantRenderVerifiedBy(release, ref, "helm", key)
}

// wantRenderVerifiedBy checks that the Render of ref records its verification by
// provider with identity.
func (e *env) wantRenderVerifiedBy(release, ref, provider, identity string) {
	e.t.Helper()
	e.eventually("the Render records its verification", func() (bool, string) {
		obj := &v1.Render{}
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: v1.RenderRef(ref).RenderName(release)}, obj); err != nil {
			return false, err.Error()
		}
		var v v1.VerifiedStatus
		ann := obj.Annotations[v1.AnnotationVerified]
		if err := json.Unmarshal([]byte(ann), &v); err != nil {
			return false, fmt.Sprintf("annotation %q: %v", ann, err)
		}
		return v.Provider == provider && v.Identity == identity && v.Time != nil, fmt.Sprintf("annotation %q", ann)
	})
}

// --require-verified-charts: a Release without spec.chart.verify is refused
// (VerificationFailed, "verification is required"), also the render it had pending
// before the controller required verification; a Release that verifies its chart is
// applied.
func TestRequireVerifiedCharts(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := verifytest.NewKey(t, "chart-signer")
	e.keyringSecret("chart-keys", key)
	archive := appArchive(t)
	r := newSignedRepo(t, archive, key.Sign(t, archive, signedChartFile))

	e.createRelease("pending", fromSignedRepo(r, false))
	e.waitApplied("pending", "False", v1.ReasonWaitingForSync)

	e.opts.requireVerifiedCharts = true
	e.restartController()
	e.sync("pending", false)
	rel := e.waitApplied("pending", "False", v1.ReasonVerificationFailed)
	if msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message; !strings.Contains(msg, "verification is required") ||
		!strings.Contains(msg, "spec.chart.verify") {
		t.Errorf("Applied message %q, want it to say that verification is required and to set spec.chart.verify", msg)
	}
	e.consistently("the pending unverified render not applied", 2*time.Second, func() (bool, string) {
		rel := e.release("pending")
		return rel.Status.LastSuccessful == nil && e.configMap("pending-config") == nil, appliedMessage(rel)
	})

	e.createRelease("signed", automatic(), fromSignedRepo(r, true))
	e.waitApplied("signed", "True", v1.ReasonApplied)
	if e.configMap("signed-config") == nil {
		t.Error("ConfigMap signed-config not applied from the verified chart")
	}
}

// A pin to a render made before the chart was verified is not applied while the
// Release asks for verification: the verified render stays applied.
func TestPinToAnUnverifiedRenderRefused(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := verifytest.NewKey(t, "chart-signer")
	e.keyringSecret("chart-keys", key)
	archive := appArchive(t)
	r := newSignedRepo(t, archive, key.Sign(t, archive, signedChartFile))

	e.createRelease("web", automatic(), interval(time.Second), fromSignedRepo(r, false), values(`{"greeting":"unverified"}`))
	unverified := e.waitApplied("web", "True", v1.ReasonApplied).Status.LastSuccessful.RenderRef
	e.waitGreeting("unverified")

	e.update("web", fromSignedRepo(r, true), values(`{"greeting":"verified"}`))
	e.waitGreeting("verified")

	e.pin("web", map[string]any{"renderRef": unverified})
	rel := e.waitApplied("web", "False", v1.ReasonVerificationFailed)
	if msg := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied).Message; !strings.Contains(msg, "not verified") {
		t.Errorf("Applied message %q does not say the pinned render is not verified", msg)
	}
	e.consistently("the verified render stays applied", 2*time.Second, func() (bool, string) {
		cm := e.configMap("web-config")
		return cm != nil && cm.Data["greeting"] == "verified", fmt.Sprintf("ConfigMap %+v", cm)
	})
}
