package render

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/runtime"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

func TestCanonicalForm(t *testing.T) {
	rel := testRelease("demo", "", "demo")
	files := []renderedFile{{name: "demo/templates/all.yaml", content: `
kind: Deployment
apiVersion: apps/v1
metadata: {name: web, labels: {z: "1", a: "2"}}
spec: {replicas: 2, selector: {matchLabels: {app: web}}}
---
# a comment only
---
metadata: {name: settings}
apiVersion: v1
kind: ConfigMap
data: {b: "2", a: "1"}
`}}
	res, err := assemble(rel, defaultCaps, files)
	if err != nil {
		t.Fatal(err)
	}
	want := `---
apiVersion: v1
data:
  a: "1"
  b: "2"
kind: ConfigMap
metadata:
  labels:
    convoy.kumodo.io/release-name: demo
    convoy.kumodo.io/release-namespace: team-a
  name: settings
  namespace: apps
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    a: "2"
    convoy.kumodo.io/release-name: demo
    convoy.kumodo.io/release-namespace: team-a
    z: "1"
  name: web
  namespace: apps
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
`
	if diff := cmp.Diff(want, string(res.Canonical)); diff != "" {
		t.Errorf("canonical stream (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("sha256:"+sha256Hex([]byte(want)), res.Ref); diff != "" {
		t.Errorf("ref (-want +got):\n%s", diff)
	}
}

// shuffled returns the files in a random order, each with its documents in a
// random order.
func shuffled(rng *rand.Rand, files []renderedFile) []renderedFile {
	out := make([]renderedFile, len(files))
	for i, f := range files {
		docs := strings.Split(f.content, "\n---")
		rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		out[i] = renderedFile{name: f.name, content: strings.Join(docs, "\n---\n"), crd: f.crd}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func TestRefIgnoresOrder(t *testing.T) {
	for _, chartName := range []string{"web", "crds", "hooks", "waves"} {
		t.Run(chartName, func(t *testing.T) {
			c, err := loadChart(packageChart(t, chartName, "1.0.0"), chartName)
			if err != nil {
				t.Fatal(err)
			}
			rel := testRelease(chartName, "", chartName)
			files, _, err := template(context.Background(), c, map[string]any{}, renderOptions{releaseName: rel.Name, namespace: "apps", caps: defaultCaps}, chartName)
			if err != nil {
				t.Fatal(err)
			}
			first, err := assemble(rel, defaultCaps, files)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range 25 {
				res, err := assemble(testRelease(chartName, "", chartName), defaultCaps, shuffled(rng, files))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(first.Canonical), string(res.Canonical)); diff != "" {
					t.Fatalf("shuffle %d: canonical stream differs (-first +shuffled):\n%s", i, diff)
				}
			}
		})
	}
}

func TestRefDeterminism(t *testing.T) {
	// Two repositories, each packaging the charts itself (archives differ in their
	// time stamps), and two renderers with their own caches: two machines.
	repoA, repoB := chartServer(t), newChartRepo(t)
	// B's archive of web also holds a README: another archive, the same templates.
	c, err := loader.LoadDir("testdata/charts/web")
	if err != nil {
		t.Fatal(err)
	}
	c.Files = append(c.Files, &common.File{Name: "README.md", Data: []byte("# web\n")})
	repoB.AddArchive(saveChart(t, c, "1.0.0"))
	ra, _ := testRenderer(t)
	rb, _ := testRenderer(t)
	rawValues := func(raw string) releaseOption {
		return func(r *v1alpha1.Release) { r.Spec.Values = &runtime.RawExtension{Raw: []byte(raw)} }
	}
	scale := mutations(v1alpha1.Mutation{Target: v1alpha1.MutationTarget{Group: "apps", Kind: "Deployment"}, Patch: `spec: {replicas: 3}`})

	base := renderOK(t, ra, Request{Release: testRelease("web", repoA.url(), "web", rawValues(`{"settings":{"color":"red","size":"xl"},"replicaCount":2}`), scale)})
	cases := map[string]struct {
		r    *renderer
		rel  *v1alpha1.Release
		same bool
	}{
		"again": {r: ra, same: true,
			rel: testRelease("web", repoA.url(), "web", rawValues(`{"settings":{"color":"red","size":"xl"},"replicaCount":2}`), scale)},
		"another machine, another order of keys": {r: rb, same: true,
			rel: testRelease("web", repoB.url(), "web", rawValues(`{"replicaCount":2,"settings":{"size":"xl","color":"red"}}`), scale)},
		"other values": {r: rb,
			rel: testRelease("web", repoB.url(), "web", rawValues(`{"replicaCount":2,"settings":{"size":"xl","color":"blue"}}`), scale)},
		"other mutations": {r: rb,
			rel: testRelease("web", repoB.url(), "web", rawValues(`{"replicaCount":2,"settings":{"size":"xl","color":"red"}}`))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for range 3 {
				res := renderOK(t, tc.r, Request{Release: tc.rel})
				if got := res.Ref == base.Ref; got != tc.same {
					t.Fatalf("same ref = %t, want %t (%s vs %s)", got, tc.same, res.Ref, base.Ref)
				}
				if tc.same && res.ValuesDigest != base.ValuesDigest {
					t.Errorf("values digest %s, want %s", res.ValuesDigest, base.ValuesDigest)
				}
			}
		})
	}
	if base.ChartDigest == renderOK(t, rb, Request{Release: testRelease("web", repoB.url(), "web")}).ChartDigest {
		t.Error("the two packagings have the same archive digest: the test does not show that the ref ignores the archive")
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	for _, chartName := range []string{"web", "crds", "hooks", "waves"} {
		t.Run(chartName, func(t *testing.T) {
			res := renderOK(t, r, Request{Release: testRelease(chartName, repo.url(), chartName)})
			objs, hooks, err := Decode(res.Canonical)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ids(res.Objects), ids(objs)); diff != "" {
				t.Errorf("objects (-rendered +decoded):\n%s", diff)
			}
			if diff := cmp.Diff(hookNames(res.Hooks), hookNames(hooks)); diff != "" {
				t.Errorf("hooks (-rendered +decoded):\n%s", diff)
			}
			again, err := canonicalize(objs, hooks)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(res.Canonical), string(again)); diff != "" {
				t.Errorf("canonical stream after a round trip (-before +after):\n%s", diff)
			}
		})
	}
}

func TestDuplicateObject(t *testing.T) {
	files := []renderedFile{
		{name: "a.yaml", content: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"},
		{name: "b.yaml", content: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: apps}\n"},
	}
	_, err := assemble(testRelease("demo", "", "demo"), defaultCaps, files)
	if reasons.Of(err, "") != v1alpha1.ReasonUnappliable || !strings.Contains(err.Error(), "v1 ConfigMap apps/x appears twice") {
		t.Fatalf("want Unappliable naming the object, got %v", err)
	}
}
