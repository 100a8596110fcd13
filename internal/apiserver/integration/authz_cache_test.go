package integration_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"kumodo.io/convoy/internal/testenv"
)

// subjectAccessReviews is the number of SubjectAccessReviews kube-apiserver has served
// (its apiserver_request_total), read as the admin.
func subjectAccessReviews(t *testing.T) float64 {
	t.Helper()
	b, err := kubernetes.NewForConfigOrDie(env.admin).CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx(t))
	if err != nil {
		t.Fatalf("reading kube-apiserver's /metrics: %v", err)
	}
	var n float64
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="subjectaccessreviews"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("parsing %q: %v", line, err)
		}
		n += v
	}
	return n
}

// Requests of one user for many named objects of one resource cost kube-apiserver one
// SubjectAccessReview, not one per object: convoy apiserver asks for every name first
// and its delegated authorizer caches that answer (internal/apiserver/authz.go).
func TestRBAC_NamedRequestsShareOneSubjectAccessReview(t *testing.T) {
	ns := testNamespace(t)
	const releases = 10
	for i := range releases {
		create(t, release(ns, fmt.Sprintf("podinfo-%d", i)))
	}
	reader := grant(t, ns, "reader-"+testenv.RandomSuffix(), rule("releases", "get"))

	before := subjectAccessReviews(t)
	for i := range releases {
		if err := reader.Get().Namespace(ns).Resource("releases").Name(fmt.Sprintf("podinfo-%d", i)).Do(ctx(t)).Error(); err != nil {
			t.Fatalf("GET podinfo-%d as the reader: %v", i, err)
		}
	}
	// The 10 s cache of the answers outlives the loop; 2 leaves room for one expiry.
	if got := subjectAccessReviews(t) - before; got > 2 {
		t.Errorf("kube-apiserver served %.0f SubjectAccessReviews for %d GETs of named Releases by one user, want at most 2", got, releases)
	}
}
