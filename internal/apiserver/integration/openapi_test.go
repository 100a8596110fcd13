package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/discovery"

	"kumodo.io/convoy/internal/testenv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// The OpenAPI v3 document describes retryBackoff's fields, factor as a number.
func TestOpenAPIV3DescribesRetryBackoff(t *testing.T) {
	testenv.Integration(t)
	// The aggregator fetches the document from convoy apiserver a little after the
	// APIService became Available.
	var raw []byte
	err := wait.PollUntilContextTimeout(ctx(t), 200*time.Millisecond, time.Minute, true, func(c context.Context) (bool, error) {
		var err error
		raw, err = admin(t).Get().AbsPath("/openapi/v3/apis/convoy.kumodo.io/v1alpha1").DoRaw(c)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("GET /openapi/v3/apis/convoy.kumodo.io/v1alpha1: %v", err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Type       json.RawMessage `json:"type"`
				Properties map[string]struct {
					Description string `json:"description"`
					AllOf       []any  `json:"allOf"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	backoff, ok := doc.Components.Schemas["io.kumodo.convoy.api.v1alpha1.RetryBackoff"]
	if !ok {
		t.Fatalf("no RetryBackoff schema in the OpenAPI v3 document")
	}
	for _, f := range []string{"initial", "factor", "max"} {
		if backoff.Properties[f].Description == "" {
			t.Errorf("retryBackoff.%s is not described", f)
		}
	}
	if factor := doc.Components.Schemas["io.kumodo.convoy.api.v1alpha1.Factor"]; !strings.Contains(string(factor.Type), `"number"`) {
		t.Errorf("Factor schema type = %s, want number", factor.Type)
	}
}

// kubectl explain release.spec.syncPolicy.retryBackoff describes the fields.
func TestKubectlExplainRetryBackoff(t *testing.T) {
	testenv.Integration(t)
	kubectl := filepath.Join(env.cluster.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("kubectl is not built (%v): run hack/kube/build.sh kubectl", err)
	}
	out, err := exec.CommandContext(ctx(t), kubectl, "--kubeconfig", env.cluster.KubeconfigPath(),
		"explain", "release.spec.syncPolicy.retryBackoff").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl explain: %v\n%s", err, out)
	}
	for _, want := range []string{"initial", "factor", "max", "<number>", "factor^(n−1)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl explain output lacks %q:\n%s", want, out)
		}
	}
}

// Server-side apply of a Release records managedFields, and a second manager's
// conflicting apply is a 409.
func TestServerSideApplyRecordsManagedFields(t *testing.T) {
	ns := testNamespace(t)
	manifest := `{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo","namespace":"` + ns + `"},
"spec":{"chart":{"repository":"oci://ghcr.io/stefanprodan/charts","name":"podinfo"},"syncPolicy":{"retryBackoff":{"initial":"10s","factor":1.5}}}}`
	got := &convoyv1alpha1.Release{}
	err := admin(t).Patch(types.ApplyPatchType).Namespace(ns).Resource("releases").Name("podinfo").
		Param("fieldManager", "alice").Body([]byte(manifest)).Do(ctx(t)).Into(got)
	if err != nil {
		t.Fatalf("server-side apply: %v", err)
	}
	var found bool
	for _, m := range got.ManagedFields {
		if m.Manager == "alice" && m.Operation == metav1.ManagedFieldsOperationApply {
			found = true
			if !strings.Contains(string(m.FieldsV1.GetRawBytes()), `"f:retryBackoff"`) {
				t.Errorf("alice's managed fields lack retryBackoff: %s", m.FieldsV1.GetRawBytes())
			}
		}
	}
	if !found {
		t.Errorf("no Apply entry of alice in managedFields: %+v", got.ManagedFields)
	}
	if f := got.Spec.SyncPolicy.RetryBackoff.Factor; f == nil || f.String() != "1.5" {
		t.Errorf("factor = %v, want 1.5", f)
	}

	conflicting := strings.Replace(manifest, `"name":"podinfo"}`, `"name":"other"}`, 1)
	err = admin(t).Patch(types.ApplyPatchType).Namespace(ns).Resource("releases").Name("podinfo").
		Param("fieldManager", "bob").Body([]byte(conflicting)).Do(ctx(t)).Error()
	if statusCode(err) != http.StatusConflict {
		t.Errorf("bob's conflicting apply: %v, want 409", err)
	}
}

// kubectl get releases columns, and list by field (spec.cluster) and label selectors.
func TestTableAndSelectors(t *testing.T) {
	ns := testNamespace(t)
	create(t, release(ns, "eu", func(r *convoyv1alpha1.Release) {
		r.Spec.Cluster = "prod-eu"
		r.Labels = map[string]string{"team": "a"}
		r.Spec.SyncPolicy.Automatic = boolPtr(true)
	}))
	create(t, release(ns, "host"))

	raw, err := admin(t).Get().Namespace(ns).Resource("releases").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx(t))
	if err != nil {
		t.Fatalf("GET as Table: %v", err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, strings.ToUpper(c.Name))
	}
	for _, want := range []string{"NAME", "MODE", "APPLIED", "HEALTHY", "RENDER", "AGE"} {
		if !strings.Contains(strings.Join(columns, ","), want) {
			t.Errorf("table columns %v lack %s", columns, want)
		}
	}
	modes := map[string]string{}
	for _, row := range table.Rows {
		modes[row.Cells[0].(string)] = row.Cells[2].(string)
	}
	if modes["eu"] != "Automatic" || modes["host"] != "Manual" {
		t.Errorf("MODE cells = %v, want eu Automatic and host Manual", modes)
	}

	list := func(selector, value string) []string {
		l := &convoyv1alpha1.ReleaseList{}
		if err := admin(t).Get().Namespace(ns).Resource("releases").Param(selector, value).Do(ctx(t)).Into(l); err != nil {
			t.Fatalf("list with %s=%s: %v", selector, value, err)
		}
		var names []string
		for _, r := range l.Items {
			names = append(names, r.Name)
		}
		return names
	}
	if got := list("fieldSelector", "spec.cluster=prod-eu"); len(got) != 1 || got[0] != "eu" {
		t.Errorf("fieldSelector spec.cluster=prod-eu: %v, want [eu]", got)
	}
	if got := list("fieldSelector", "spec.cluster="); len(got) != 1 || got[0] != "host" {
		t.Errorf("fieldSelector spec.cluster=: %v, want [host]", got)
	}
	if got := list("labelSelector", "team=a"); len(got) != 1 || got[0] != "eu" {
		t.Errorf("labelSelector team=a: %v, want [eu]", got)
	}
	err = admin(t).Get().Namespace(ns).Resource("releases").Param("fieldSelector", "spec.chart.name=x").Do(ctx(t)).Error()
	if statusCode(err) != http.StatusBadRequest {
		t.Errorf("an unsupported field selector: %v, want 400", err)
	}
}

// Discovery names the short names and the category of every kind, as kubectl uses
// them: `kubectl get rel`, `kubectl get rinv`, `kubectl get relset`, `kubectl get convoy`.
func TestDiscoveryShortNamesAndCategories(t *testing.T) {
	testenv.Integration(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.admin)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.ServerResourcesForGroupVersion(convoyv1alpha1.SchemeGroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	type names struct{ Short, Categories []string }
	got := map[string]names{}
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") {
			got[r.Name] = names{r.ShortNames, r.Categories}
		}
	}
	convoy := []string{"convoy"}
	want := map[string]names{
		"releases":           {Short: []string{"rel"}, Categories: convoy},
		"releaseinventories": {Short: []string{"rinv"}, Categories: convoy},
		"releasesets":        {Short: []string{"relset"}, Categories: convoy},
		"renders":            {Categories: convoy},
		"clusters":           {Categories: convoy},
		"alerts":             {Categories: convoy},
		"receivers":          {Categories: convoy},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("short names and categories (-want +got):\n%s", diff)
	}
}

// No other resource of the cluster, built-in or convoy's, uses a short name of
// convoy's: `kubectl get relset` (or rel, rinv) names one resource.
func TestConvoyShortNamesAreUnique(t *testing.T) {
	testenv.Integration(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.admin)
	if err != nil {
		t.Fatal(err)
	}
	// The aggregated discovery calls convoy's group stale for a moment after the
	// APIService became Available.
	var lists []*metav1.APIResourceList
	testenv.Eventually(t, ctx(t), "the discovery of every group", time.Minute, func() (bool, string) {
		_, lists, err = dc.ServerGroupsAndResources()
		return err == nil, fmt.Sprint(err)
	})
	owners := map[string][]string{}
	for _, l := range lists {
		group := strings.Split(l.GroupVersion, "/")[0]
		for _, r := range l.APIResources {
			for _, s := range r.ShortNames {
				owner := r.Name + "." + group
				if !slices.Contains(owners[s], owner) {
					owners[s] = append(owners[s], owner)
				}
			}
		}
	}
	for _, s := range []string{"rel", "rinv", "relset"} {
		if len(owners[s]) != 1 || !strings.HasSuffix(owners[s][0], "."+convoyv1alpha1.GroupName) {
			t.Errorf("short name %s: used by %v, want only a convoy resource", s, owners[s])
		}
	}
}
