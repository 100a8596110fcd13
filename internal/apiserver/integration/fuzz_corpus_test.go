package integration_test

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// corpusBodies reads the []byte inputs of the committed corpus of FuzzDecodeAndValidate.
func corpusBodies(t *testing.T) map[string][]byte {
	t.Helper()
	dir := filepath.Join("..", "testdata", "fuzz", "FuzzDecodeAndValidate")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the corpus of FuzzDecodeAndValidate: %v", err)
	}
	bodies := map[string][]byte{}
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := bufio.NewScanner(f)
		s.Buffer(nil, 1<<20)
		for s.Scan() {
			line := s.Text()
			if lit, ok := strings.CutPrefix(line, "[]byte("); ok {
				v, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
				if err != nil {
					t.Fatalf("%s: %v", e.Name(), err)
				}
				bodies[e.Name()] = []byte(v)
			}
		}
		_ = f.Close()
	}
	if len(bodies) == 0 {
		t.Fatalf("%s holds no inputs", dir)
	}
	return bodies
}

// Every body of the fuzz corpus of FuzzDecodeAndValidate, sent as a dry-run create
// to each convoy resource through the aggregator, is accepted or refused with a 4xx
// — never a 5xx — and a 422 names a field for each cause.
func TestFuzzCorpusIsRefusedWith4xx(t *testing.T) {
	if env.cluster == nil {
		t.Skip("needs the local control plane (not with -short)")
	}
	kube := kubernetes.NewForConfigOrDie(env.admin)
	for _, ns := range []string{"team-a", "n"} {
		_, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	c := admin(t)
	counts := map[int]int{}
	for name, body := range corpusBodies(t) {
		var meta struct {
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		_ = yaml.Unmarshal(body, &meta)
		ns := meta.Metadata.Namespace
		if ns == "" {
			ns = "team-a"
		}
		contentType := "application/yaml"
		if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
			contentType = "application/json"
		}
		for _, resource := range []string{convoyv1alpha1.ResourceReleases, convoyv1alpha1.ResourceRenders,
			convoyv1alpha1.ResourceReleaseInventories, convoyv1alpha1.ResourceClusters, convoyv1alpha1.ResourceReleaseSets,
			convoyv1alpha1.ResourceAlerts, convoyv1alpha1.ResourceReceivers} {
			req := c.Post().Resource(resource).Param("dryRun", metav1.DryRunAll).SetHeader("Content-Type", contentType).Body(body)
			if resource != convoyv1alpha1.ResourceClusters {
				req = req.Namespace(ns)
			}
			var code int
			err := req.Do(ctx(t)).StatusCode(&code).Error()
			counts[code]++
			switch {
			case code >= 500 || code == 0:
				t.Errorf("%s as %s: HTTP %d: %v\n%s", name, resource, code, err, body)
			case code == http.StatusUnprocessableEntity:
				status, ok := err.(apierrors.APIStatus)
				if !ok || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
					t.Errorf("%s as %s: a 422 without causes: %v", name, resource, err)
					continue
				}
				for _, cause := range status.Status().Details.Causes {
					if cause.Field == "" {
						t.Errorf("%s as %s: a 422 cause without a field: %+v", name, resource, cause)
					}
				}
			}
		}
	}
	t.Logf("answers by HTTP status: %v", counts)
}
