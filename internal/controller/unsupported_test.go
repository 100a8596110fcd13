package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/charttest"
)

// TestUnsupportedSchemeRejectedByTheAPIServer: a chart repository whose scheme convoy
// cannot fetch from never reaches the controller: convoy's API server refuses it with
// 422 Invalid on spec.chart.repository, on create, update and patch, and stores
// nothing.
func TestUnsupportedSchemeRejectedByTheAPIServer(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic(), interval(time.Hour))
	e.waitApplied("web", "True", v1.ReasonApplied)
	for _, repository := range []string{"ftp://charts.example.com/stable", "git://github.com/example/charts", "file:///charts"} {
		t.Run(strings.SplitN(repository, ":", 2)[0], func(t *testing.T) {
			rel := testRelease("bad", inNamespace(e.ns), automatic(), func(r *v1.Release) { r.Spec.Chart.Repository = repository })
			rel.ResourceVersion, rel.Generation = "", 0
			wantInvalidRepository(t, e.client.Create(e.ctx, rel), repository)

			before := e.release("web")
			changed := before.DeepCopy()
			changed.Spec.Chart.Repository = repository
			wantInvalidRepository(t, e.client.Update(e.ctx, changed), repository)
			wantInvalidRepository(t, e.client.Patch(e.ctx, changed, client.MergeFrom(before)), repository)
			if after := e.release("web"); after.Spec.Chart.Repository != before.Spec.Chart.Repository || after.Generation != before.Generation {
				t.Errorf("the refused update was stored: repository %q, generation %d", after.Spec.Chart.Repository, after.Generation)
			}
		})
	}
}

func wantInvalidRepository(t *testing.T, err error, repository string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("repository %q: got %v, want 422 Invalid", repository, err)
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		t.Fatalf("repository %q: no details in %v", repository, err)
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	if len(fields) != 1 || fields[0] != "spec.chart.repository" || !strings.Contains(err.Error(), "oci://") {
		t.Errorf("repository %q: causes on %v, message %q; want spec.chart.repository, saying what is accepted", repository, fields, err)
	}
}

// TestSP35_UnsupportedChartWaitsForThePeriodicReconcile: what convoy cannot handle
// and that does reach the controller is a chart it cannot render, here one of chart
// apiVersion v9 from a valid repository. The Release ends Applied=False/Unsupported
// with a message saying what to fix; Unsupported is not transient, so the controller
// does not retry it (no error to the work queue, the reconciles settle) and comes
// back at the interval only. Changing the Release to a chart convoy handles fixes it.
func TestSP35_UnsupportedChartWaitsForThePeriodicReconcile(t *testing.T) {
	// seed: "Unsupported, Unappliable, Pinned, HookFailed and the waiting reasons are
	// not transient. convoy checks them again at the next periodic reconcile."
	e := newEnv(t, envOptions{})
	future := newRawRepo(t, "future", "1.0.0", charttest.RawArchive(t, "future", "apiVersion: v9\nname: future\nversion: 1.0.0\n"))
	e.createRelease("web", automatic(), func(r *v1.Release) {
		r.Spec.Chart = v1.ChartSource{Repository: future.URL, Name: "future"}
	})
	rel := e.waitApplied("web", "False", v1.ReasonUnsupported)
	msg := appliedMessage(rel)
	if !strings.Contains(msg, `apiVersion "v9"`) || !strings.Contains(msg, "v1 and v2") {
		t.Errorf("message %q, want it to name the chart apiVersion and the ones convoy renders", msg)
	}
	if e.configMap("x") != nil {
		t.Error("an object of the unsupported chart was applied")
	}

	// No requeue storm: the reconciles stop, and the last one handed no error to the
	// work queue and scheduled nothing (no interval).
	n := e.settle("web")
	e.consistently("no retry of a non-transient failure", 3*time.Second, func() (bool, string) {
		got := e.reconciles("web")
		return got == n, fmt.Sprintf("%d reconciles after %d", got, n)
	})
	if r, _ := e.lastResult("web"); r.err != nil || r.res.RequeueAfter != 0 {
		t.Errorf("last result %+v, want no error and no requeue", r)
	}

	// With an interval, the failure is checked again at the interval, not sooner.
	e.update("web", interval(time.Hour))
	e.waitReconciled("web", n)
	e.settle("web")
	if r, _ := e.lastResult("web"); r.err != nil || r.res.RequeueAfter != time.Hour {
		t.Errorf("last result %+v, want RequeueAfter 1h (the interval) and no error", r)
	}
	e.waitApplied("web", "False", v1.ReasonUnsupported)

	// The fix the message asks for: a chart convoy renders.
	e.update("web", func(r *v1.Release) { r.Spec.Chart = v1.ChartSource{Repository: charts.url(), Name: "app"} })
	e.waitApplied("web", "True", v1.ReasonApplied)
}

// newRawRepo serves a Helm HTTP repository with one archive, listed as name version
// (apiVersion v2 in the index, whatever the archive says).
func newRawRepo(t *testing.T, name, version string, archive []byte) *httptest.Server {
	t.Helper()
	sum := sha256.Sum256(archive)
	file := fmt.Sprintf("%s-%s.tgz", name, version)
	index := repo.NewIndexFile()
	index.Entries[name] = repo.ChartVersions{{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: version},
		URLs:     []string{file},
		Digest:   hex.EncodeToString(sum[:]),
	}}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.yaml":
			_, _ = w.Write(indexJSON)
		case "/" + file:
			_, _ = w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
