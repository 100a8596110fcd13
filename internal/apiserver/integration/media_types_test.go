package integration_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// convoyResources are the namespaced resources of the group.
var convoyResources = []string{"releases", "renders", "releaseinventories"}

// get sends a GET with the Accept header accept through kube-apiserver and returns the
// status code, the Content-Type and the body.
func getWithAccept(t *testing.T, path, accept string) (int, string, []byte) {
	t.Helper()
	transport, err := rest.TransportFor(env.admin)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, strings.TrimSuffix(env.admin.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading GET %s: %v", path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// The convoy types have no protobuf encoding. kube-controller-manager and other
// clients built with ContentType protobuf ask for it first and JSON after; they must
// get JSON, not a 500 (or a cut-off body) from a protobuf encoder that cannot encode
// the object. A client that accepts protobuf only is told 406 Not Acceptable.
func TestProtobufClientsAreServedJSON(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "web"))
	for _, resource := range convoyResources {
		list := fmt.Sprintf("/apis/%s/namespaces/%s/%s", convoyv1alpha1.SchemeGroupVersion, ns, resource)
		t.Run(resource, func(t *testing.T) {
			code, contentType, body := getWithAccept(t, list, "application/vnd.kubernetes.protobuf, application/json")
			if code != http.StatusOK || !strings.HasPrefix(contentType, "application/json") {
				t.Fatalf("protobuf-then-JSON list: %d %s %.200s, want 200 application/json", code, contentType, body)
			}
			var out metav1.List
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("the list is not JSON: %v: %.200s", err, body)
			}

			code, _, body = getWithAccept(t, list, "application/vnd.kubernetes.protobuf")
			if code != http.StatusNotAcceptable {
				t.Errorf("protobuf-only list: %d %.200s, want 406 Not Acceptable", code, body)
			}
		})
	}
	code, contentType, body := getWithAccept(t,
		fmt.Sprintf("/apis/%s/namespaces/%s/releases/web", convoyv1alpha1.SchemeGroupVersion, ns),
		"application/vnd.kubernetes.protobuf, */*")
	if code != http.StatusOK || !strings.HasPrefix(contentType, "application/json") {
		t.Errorf("protobuf-then-any get: %d %s %.200s, want 200 application/json", code, contentType, body)
	}
}

// The garbage collector, the namespace controller and the quota controller read every
// resource through the metadata client, which asks for PartialObjectMetadata in
// protobuf first: its lists and watches of convoy resources must work.
func TestMetadataClientListsAndWatches(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "web"))
	cfg := rest.CopyConfig(env.admin)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, resource := range convoyResources {
		t.Run(resource, func(t *testing.T) {
			gvr := convoyv1alpha1.SchemeGroupVersion.WithResource(resource)
			list, err := md.Resource(gvr).Namespace(ns).List(ctx(t), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("metadata list of %s: %v", resource, err)
			}
			if resource == "releases" && (len(list.Items) != 1 || list.Items[0].Name != "web") {
				t.Errorf("metadata list of releases: %+v, want web", list.Items)
			}
			w, err := md.Resource(gvr).Namespace(ns).Watch(ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatalf("metadata watch of %s: %v", resource, err)
			}
			w.Stop()
		})
	}
	got, err := md.Resource(convoyv1alpha1.SchemeGroupVersion.WithResource("releases")).Namespace(ns).Get(ctx(t), "web", metav1.GetOptions{})
	if err != nil || got.Name != "web" {
		t.Fatalf("metadata get of releases/web: %v %+v", err, got)
	}
}
