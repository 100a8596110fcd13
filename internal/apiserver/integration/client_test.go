package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// convoyClient returns a REST client of convoy.kumodo.io/v1alpha1 for cfg.
func convoyClient(t *testing.T, cfg *rest.Config) *rest.RESTClient {
	t.Helper()
	testenv.Integration(t)
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	return testenv.RESTClient(t, cfg)
}

// listNames lists resource in ns as the admin with the query params (name, value, …)
// and returns the names of the items, in the order of the answer.
func listNames(t *testing.T, resource, ns string, params ...string) []string {
	t.Helper()
	req := admin(t).Get().Namespace(ns).Resource(resource)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	raw, err := req.Do(ctx(t)).Raw()
	if err != nil {
		t.Fatalf("list %v: %v", params, err)
	}
	var l struct {
		Items []metav1.PartialObjectMetadata `json:"items"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range l.Items {
		names = append(names, o.Name)
	}
	return names
}

func admin(t *testing.T) *rest.RESTClient { return convoyClient(t, env.admin) }

// testNamespace creates a namespace for one test and deletes it afterwards.
func testNamespace(t *testing.T) string {
	t.Helper()
	testenv.Integration(t)
	kube := kubernetes.NewForConfigOrDie(env.admin)
	name := strings.ToLower(strings.NewReplacer("_", "-", "/", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + "-" + testenv.RandomSuffix()
	_, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func ctx(t *testing.T) context.Context {
	return testenv.Context(t, 2*time.Minute)
}

// release builds a valid Release; options change it.
func release(ns, name string, opts ...func(*convoyv1alpha1.Release)) *convoyv1alpha1.Release {
	r := &convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart: convoyv1alpha1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"},
		},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

func create(t *testing.T, r *convoyv1alpha1.Release) *convoyv1alpha1.Release {
	t.Helper()
	out := &convoyv1alpha1.Release{}
	if err := admin(t).Post().Namespace(r.Namespace).Resource("releases").Body(r).Do(ctx(t)).Into(out); err != nil {
		t.Fatalf("creating Release %s/%s: %v", r.Namespace, r.Name, err)
	}
	return out
}

func get(t *testing.T, ns, name string) *convoyv1alpha1.Release {
	t.Helper()
	out := &convoyv1alpha1.Release{}
	if err := admin(t).Get().Namespace(ns).Resource("releases").Name(name).Do(ctx(t)).Into(out); err != nil {
		t.Fatalf("getting Release %s/%s: %v", ns, name, err)
	}
	return out
}

// update PUTs r to the main resource or to a subresource ("" for the main resource).
func update(t *testing.T, r *convoyv1alpha1.Release, subresource string) *convoyv1alpha1.Release {
	t.Helper()
	out := &convoyv1alpha1.Release{}
	req := admin(t).Put().Namespace(r.Namespace).Resource("releases").Name(r.Name).Body(r)
	if subresource != "" {
		req = req.SubResource(subresource)
	}
	if err := req.Do(ctx(t)).Into(out); err != nil {
		t.Fatalf("updating Release %s/%s %s: %v", r.Namespace, r.Name, subresource, err)
	}
	return out
}

// mergePatch sends a JSON merge patch to the main resource or a subresource.
func mergePatch(c *rest.RESTClient, ctx context.Context, ns, name, subresource string, patch interface{}) (*convoyv1alpha1.Release, error) {
	body, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	req := c.Patch(types.MergePatchType).Namespace(ns).Resource("releases").Name(name).Body(body)
	if subresource != "" {
		req = req.SubResource(subresource)
	}
	out := &convoyv1alpha1.Release{}
	return out, req.Do(ctx).Into(out)
}

// postSync POSTs /sync, with ?force=<force> when force is not empty.
func postSync(c *rest.RESTClient, ctx context.Context, ns, name, force string) (*convoyv1alpha1.Release, error) {
	return postBoundSync(c, ctx, ns, name, "", force)
}

// postBoundSync POSTs /sync, with ?render=<render> and ?force=<force> when they are
// not empty.
func postBoundSync(c *rest.RESTClient, ctx context.Context, ns, name, render, force string) (*convoyv1alpha1.Release, error) {
	req := c.Post().Namespace(ns).Resource("releases").Name(name).SubResource("sync")
	if render != "" {
		req = req.Param("render", render)
	}
	if force != "" {
		req = req.Param("force", force)
	}
	out := &convoyv1alpha1.Release{}
	return out, req.Do(ctx).Into(out)
}

// statusCode is the HTTP status of an API error (0 for nil).
func statusCode(err error) int {
	if err == nil {
		return 0
	}
	var status apierrors.APIStatus
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s
		return int(status.Status().Code)
	}
	return http.StatusInternalServerError
}

func boolPtr(b bool) *bool { return &b }
