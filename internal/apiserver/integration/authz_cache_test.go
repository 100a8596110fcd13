package integration_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"

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

// A permission revoked by deleting its RoleBinding stops allowing requests well before
// the 10 s the authorization cache keeps an answer, and one granted afterwards allows
// them as soon: convoy apiserver forgets its cached answers at every RBAC change
// (internal/apiserver/authzcache.go). The requests go straight to convoy apiserver's
// port: through the aggregator kube-apiserver would authorize them itself first, and
// hide what convoy apiserver's cache answers.
func TestRBAC_CachedAnswersFollowRBACChanges(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "podinfo"))
	name := "reader-" + testenv.RandomSuffix()
	grant(t, ns, name, rule("releases", "get"))
	reader := directClient(t, name)
	kube := kubernetes.NewForConfigOrDie(env.admin)

	getRelease := func() error {
		return reader.Get().Namespace(ns).Resource("releases").Name("podinfo").Do(ctx(t)).Error()
	}
	// Allowed, and the answer cached (10 s).
	if err := getRelease(); err != nil {
		t.Fatalf("GET as the reader: %v", err)
	}
	binding, err := kube.RbacV1().RoleBindings(ns).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.RbacV1().RoleBindings(ns).Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	const within = 4 * time.Second // well below the cache's 10 s
	waitFor := func(what string, done func(error) bool) {
		t.Helper()
		var last error
		if err := wait.PollUntilContextTimeout(ctx(t), 50*time.Millisecond, within, true, func(context.Context) (bool, error) {
			last = getRelease()
			return done(last), nil
		}); err != nil {
			t.Fatalf("%s not within %s: the last GET: %v", what, within, last)
		}
	}
	waitFor("revoked", apierrors.IsForbidden)

	// Denied now (and that answer cached); granted again, it is allowed as soon.
	binding.ResourceVersion = ""
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("granted", func(err error) bool { return err == nil })
}

// directClient is a client of convoy's API as user, straight to convoy apiserver's
// port (the APIService's Service port) with the APIService's CA bundle.
func directClient(t *testing.T, user string) *rest.RESTClient {
	t.Helper()
	agg := dynamic.NewForConfigOrDie(env.admin).Resource(schema.GroupVersionResource{
		Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	svc, err := agg.Get(ctx(t), convoyv1alpha1.Version+"."+convoyv1alpha1.GroupName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	caB64, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle")
	port, _, _ := unstructured.NestedInt64(svc.Object, "spec", "service", "port")
	ca, err := base64.StdEncoding.DecodeString(caB64)
	if err != nil || port == 0 {
		t.Fatalf("the APIService's caBundle and port: %v, %d", err, port)
	}
	cfg, err := env.cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	cfg.CAData, cfg.CAFile, cfg.ServerName = ca, "", "localhost"
	return convoyClient(t, cfg)
}
