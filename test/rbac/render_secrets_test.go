package rbac_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

const renderedSecret = "---\napiVersion: v1\ndata:\n  password: aHVudGVyMi1wYXNzd29yZA==\nkind: Secret\nmetadata:\n  name: db\n  namespace: shop\nstringData:\n  token: s3cr3t-token-4711\n" +
	"---\napiVersion: v1\ndata:\n  color: blue\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\n"

// A Render holds the rendered Secrets of a chart. A convoy-view user, who may not
// read the namespace's Secrets, reads Renders (get, list, watch) whose Secrets carry
// the digests of their data instead of the data; an editor, who may read Secrets,
// reads the Render as stored; both see the other objects unchanged.
func TestRenderSecretsOnlyForSecretReaders(t *testing.T) {
	needCluster(t)
	admin := env.RestConfig()
	kube := kubernetes.NewForConfigOrDie(admin)
	applyUserRoles(t, kube)
	waitForAggregation(t, kube)
	ns := testenv.DNSName("render-secrets-" + testenv.RandomSuffix())
	if _, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = io.WriteString(zw, renderedSecret)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	rd := &convoyv1alpha1.Render{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Render"},
		ObjectMeta: metav1.ObjectMeta{Name: "app-0123456789", Namespace: ns},
		RenderRef:  "sha256:0123456789000000000000000000000000000000000000000000000000000000", Release: "app", Chart: convoyv1alpha1.RenderChart{Name: "app"}, Manifests: gz.Bytes(),
	}
	body, err := json.Marshal(rd)
	if err != nil {
		t.Fatal(err)
	}
	if err := convoyClient(t, admin).Post().Namespace(ns).Resource("renders").Body(body).Do(ctx(t)).Error(); err != nil {
		t.Fatalf("create the Render: %v", err)
	}

	as := func(role string) *rest.RESTClient {
		user := "render-" + role + "-" + ns
		bind(t, kube, ns, user, role, convoyv1alpha1.ResourceReleases, false)
		cfg := rest.CopyConfig(admin)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		return convoyClient(t, cfg)
	}
	reads := func(c *rest.RESTClient) map[string]string {
		got := map[string]string{}
		var one convoyv1alpha1.Render
		raw, err := c.Get().Namespace(ns).Resource("renders").Name(rd.Name).Do(ctx(t)).Raw()
		if err == nil {
			err = json.Unmarshal(raw, &one)
		}
		if err != nil {
			t.Fatalf("GET the Render: %v", err)
		}
		got["get"] = gunzip(t, one.Manifests)
		var list convoyv1alpha1.RenderList
		raw, err = c.Get().Namespace(ns).Resource("renders").Do(ctx(t)).Raw()
		if err == nil {
			err = json.Unmarshal(raw, &list)
		}
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("LIST the Renders: %v (%d items)", err, len(list.Items))
		}
		got["list"] = gunzip(t, list.Items[0].Manifests)
		stream, err := c.Get().Namespace(ns).Resource("renders").Param("watch", "true").Param("timeoutSeconds", "1").Stream(ctx(t))
		if err != nil {
			t.Fatalf("WATCH the Renders: %v", err)
		}
		defer stream.Close()
		var event struct {
			Object convoyv1alpha1.Render `json:"object"`
		}
		if err := json.NewDecoder(stream).Decode(&event); err != nil {
			t.Fatalf("WATCH the Renders: %v", err)
		}
		got["watch"] = gunzip(t, event.Object.Manifests)
		return got
	}

	viewer, editor := as("convoy-view"), as("edit")
	for verb, manifests := range reads(viewer) {
		for _, secret := range []string{"aHVudGVyMi1wYXNzd29yZA==", "s3cr3t-token-4711"} {
			if strings.Contains(manifests, secret) {
				t.Errorf("%s as convoy-view serves the Secret's data %q:\n%s", verb, secret, manifests)
			}
		}
		for _, want := range []string{convoyv1alpha1.AnnotationRedactedData, `"password":"sha256:`, `"token":"sha256:`, "color: blue"} {
			if !strings.Contains(manifests, want) {
				t.Errorf("%s as convoy-view: the manifests lack %q:\n%s", verb, want, manifests)
			}
		}
	}
	for verb, manifests := range reads(editor) {
		if manifests != renderedSecret {
			t.Errorf("%s as edit: the manifests are not as stored:\n%s", verb, manifests)
		}
	}
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the manifests are not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
