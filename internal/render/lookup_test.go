package render

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fakeLookup is a target cluster of a few objects, keyed "apiVersion/Kind/namespace/name".
type fakeLookup struct {
	mu      sync.Mutex
	objects map[string]map[string]any
	asked   []string // every Get and List, "namespace/name"
}

// clusterScoped are the kinds the fake serves as cluster-scoped; every other kind of
// servedKinds is namespaced.
var (
	clusterScoped = map[string]bool{"Namespace": true}
	servedKinds   = map[string]bool{"Namespace": true, "Secret": true, "ConfigMap": true}
)

func (f *fakeLookup) Namespaced(_ context.Context, _, kind string) (bool, bool, error) {
	return !clusterScoped[kind], servedKinds[kind], nil
}

func (f *fakeLookup) Get(_ context.Context, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, "get "+kind+" "+namespace+"/"+name)
	obj, ok := f.objects[apiVersion+"/"+kind+"/"+namespace+"/"+name]
	if !ok {
		return nil, nil
	}
	return (&unstructured.Unstructured{Object: obj}).DeepCopy(), nil
}

func (f *fakeLookup) List(_ context.Context, apiVersion, kind, namespace string) (*unstructured.UnstructuredList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, "list "+kind+" "+namespace)
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": apiVersion, "kind": kind + "List"}}
	for key, obj := range f.objects {
		if strings.HasPrefix(key, apiVersion+"/"+kind+"/"+namespace+"/") {
			list.Items = append(list.Items, unstructured.Unstructured{Object: obj})
		}
	}
	return list, nil
}

func (f *fakeLookup) put(kind, namespace, name string, data map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.objects == nil {
		f.objects = map[string]map[string]any{}
	}
	f.objects["v1/"+kind+"/"+namespace+"/"+name] = map[string]any{
		"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": namespace, "resourceVersion": "1"},
		"data":     data,
	}
}

func (f *fakeLookup) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Decision 0062: lookup reads the target for the target namespace and
// cluster-scoped kinds only; the password of an existing Secret is kept; a lookup
// of another namespace finds nothing and says so; every read is recorded.
func TestLookup(t *testing.T) {
	repo := newChartRepo(t).add("lookup", "1.0.0")
	r, _ := testRenderer(t)
	target := &fakeLookup{}
	target.put("Namespace", "", "apps", nil)
	target.put("Secret", "apps", "db-auth", map[string]any{"password": b64("kept-password")})
	target.put("Secret", "other", "their-secret", map[string]any{"password": b64("not-yours")})
	rel := testRelease("db", repo.url(), "lookup", values(`{otherNamespace: other, otherSecret: their-secret}`))

	res := renderOK(t, r, Request{Release: rel, Lookup: target})

	if got := secretData(t, res, "db-auth")["password"]; got != b64("kept-password") {
		t.Errorf("password %q, want the existing Secret's", got)
	}
	want := map[string]string{"greeting": "hello", "namespaceFound": "true", "otherFound": "false", "otherPassword": ""}
	if diff := cmp.Diff(want, configMapData(t, res, "db-settings")); diff != "" {
		t.Errorf("ConfigMap (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"get Namespace /apps", "get Secret apps/db-auth"}, sortedCopy(target.requests())); diff != "" {
		t.Errorf("reads of the target (-want +got):\n%s", diff)
	}
	var refused []string
	for _, w := range res.Warnings {
		if strings.Contains(w, `lookup "v1" "Secret" "other" "their-secret" was refused`) && strings.Contains(w, "namespace other") {
			refused = append(refused, w)
		}
	}
	if len(refused) != 1 {
		t.Errorf("warnings %q, want one about the refused lookup of namespace other", res.Warnings)
	}
	var reads []string
	for _, rd := range res.Lookups {
		if !strings.HasPrefix(rd.Digest, "sha256:") {
			t.Errorf("read %+v without a digest", rd)
		}
		reads = append(reads, rd.Kind+" "+rd.Namespace+"/"+rd.Name)
	}
	if diff := cmp.Diff([]string{"Namespace /apps", "Secret apps/db-auth"}, reads); diff != "" {
		t.Errorf("recorded reads (-want +got):\n%s", diff)
	}

	// Without the Secret the chart generates a password.
	fresh := &fakeLookup{}
	res = renderOK(t, r, Request{Release: testRelease("db", repo.url(), "lookup"), Lookup: fresh})
	if got := secretData(t, res, "db-auth")["password"]; len(got) == 0 || got == b64("kept-password") {
		t.Errorf("password %q without an existing Secret, want a generated one", got)
	}
	if len(res.Lookups) != 2 || res.Lookups[1].Digest != "" {
		t.Errorf("reads %+v, want the Secret's read recorded as finding nothing", res.Lookups)
	}
}

// A lookup of a namespaced kind across all namespaces is refused like one of another
// namespace; a kind the target does not serve finds nothing.
func TestLookupRefusesAllNamespaces(t *testing.T) {
	target := &fakeLookup{}
	target.put("Secret", "apps", "a", nil)
	l := newLookups(context.Background(), target, "apps")
	for _, call := range [][4]string{
		{"v1", "Secret", "", ""},
		{"v1", "Secret", "", "a"},
		{"example.com/v1", "Widget", "apps", "w"},
	} {
		got, err := l.lookup(call[0], call[1], call[2], call[3])
		if err != nil || len(got) != 0 {
			t.Errorf("lookup %q: %v, %v; want nothing", call, got, err)
		}
	}
	reads, warnings := l.recorded()
	if len(warnings) != 2 || !strings.Contains(warnings[0], "all namespaces") {
		t.Errorf("warnings %q, want two about all namespaces", warnings)
	}
	if len(reads) != 1 || reads[0].Kind != "Widget" || reads[0].Digest != "" {
		t.Errorf("reads %+v, want the unserved Widget as finding nothing", reads)
	}
	if len(target.requests()) != 0 {
		t.Errorf("the target was asked %v", target.requests())
	}
}

// A render is reused while its lookups find the same, and templated anew once one
// finds something else (an input changed).
func TestReuseChecksLookups(t *testing.T) {
	repo := newChartRepo(t).add("lookup", "1.0.0")
	r, _ := testRenderer(t)
	target := &fakeLookup{}
	target.put("Namespace", "", "apps", nil)
	rel := testRelease("db", repo.url(), "lookup")
	first := renderOK(t, r, Request{Release: rel, Lookup: target})
	reuse := func(context.Context, ReuseKey) (*Result, error) {
		c := *first
		return &c, nil
	}

	if got := renderReusingOK(t, r, Request{Release: rel, Lookup: target}, reuse); !got.Reused {
		t.Error("not reused although its lookups find the same")
	}
	target.put("Namespace", "", "apps", map[string]any{"changed": "yes"}) // content, not only resourceVersion
	if got := renderReusingOK(t, r, Request{Release: rel, Lookup: target}, reuse); got.Reused {
		t.Error("reused although a lookup finds another Namespace now")
	}

	target.put("Namespace", "", "apps", nil)
	target.objects["v1/Namespace//apps"]["metadata"].(map[string]any)["resourceVersion"] = "99"
	if got := renderReusingOK(t, r, Request{Release: rel, Lookup: target}, reuse); !got.Reused {
		t.Error("not reused although only the resourceVersion of what a lookup read changed")
	}
	if got := renderReusingOK(t, r, Request{Release: rel}, reuse); got.Reused {
		t.Error("reused without a Lookup to check its lookups")
	}
}

func secretData(t *testing.T, res *Result, name string) map[string]string {
	t.Helper()
	for _, o := range res.Objects {
		if o.GetKind() == "Secret" && o.GetName() == name {
			out := map[string]string{}
			data, _ := o.Object["data"].(map[string]any)
			for k, v := range data {
				out[k], _ = v.(string)
			}
			return out
		}
	}
	t.Fatalf("no Secret %s in the render", name)
	return nil
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }
