package render

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	ci "helm.sh/helm/v4/pkg/chart"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

// depsView is what the subchart-deps chart's render shows of Helm's dependency
// rules: which objects exist, the parent's ConfigMap (environment from globals, the
// database URL from import-values, the session store when the cache is on), each
// workload's image (global.imageRegistry) and the chart label that the library's
// named template writes in each chart's context.
type depsView struct {
	Objects []string
	Config  map[string]any
	Images  map[string]string
	Charts  map[string]string
}

func viewDeps(t *testing.T, res *Result) depsView {
	t.Helper()
	v := depsView{Images: map[string]string{}, Charts: map[string]string{}}
	for _, o := range res.Objects {
		v.Objects = append(v.Objects, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		if o.GetKind() == "ConfigMap" {
			v.Config = o.Object["data"].(map[string]any)
		}
		if c, ok := o.GetLabels()["helm.sh/chart"]; ok {
			v.Charts[o.GetKind()+" "+o.GetName()] = c
		}
		containers, _, _ := unstructuredSlice(o, "spec", "template", "spec", "containers")
		if len(containers) > 0 {
			v.Images[o.GetKind()+" "+o.GetName()] = containers[0].(map[string]any)["image"].(string)
		}
	}
	return v
}

func TestSubchartDependencies(t *testing.T) {
	repo := corpusRepo(t, "subchart-deps")
	// One renderer (and fetcher) for every case: a render must not leak its dependency choices
	// (Helm's ProcessDependencies changes the chart it is given) into the next.
	r, _ := testRenderer(t)
	parent := map[string]string{
		"ConfigMap shop-subchart-deps":  "subchart-deps-1.0.0",
		"Deployment shop-subchart-deps": "subchart-deps-1.0.0",
	}
	database := map[string]string{ // the library's template in the subchart's context
		"Service shop-database":     "database-1.2.3",
		"StatefulSet shop-database": "database-1.2.3",
	}
	withDatabase := func(m ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, x := range append(m, parent, database) {
			for k, v := range x {
				out[k] = v
			}
		}
		return out
	}
	cases := []struct {
		name   string
		values string
		want   depsView
	}{{
		name:   "defaults: database on by its condition, cache off by its tag, globals in parent and subchart",
		values: `{}`,
		want: depsView{
			Objects: []string{"ConfigMap apps/shop-subchart-deps", "Service apps/shop-database", "Deployment apps/shop-subchart-deps", "StatefulSet apps/shop-database"},
			Config: map[string]any{
				"environment": "staging",
				// databaseService.port (child/parent form), databaseName and sslMode
				// (exports form) come from the database subchart.
				"databaseURL": "postgres://shop@shop-database:5432/app?sslmode=disable",
			},
			Images: map[string]string{"Deployment shop-subchart-deps": "registry.example/shop:2.4.1", "StatefulSet shop-database": "registry.example/postgres:16.4"},
			Charts: withDatabase(),
		},
	}, {
		name:   "condition false: the subchart and its imports are gone",
		values: `{database: {enabled: false}}`,
		want: depsView{
			Objects: []string{"ConfigMap apps/shop-subchart-deps", "Deployment apps/shop-subchart-deps"},
			Config:  map[string]any{"environment": "staging"},
			Images:  map[string]string{"Deployment shop-subchart-deps": "registry.example/shop:2.4.1"},
			Charts:  parent,
		},
	}, {
		name:   "a tag turns the cache on; a global set by the user reaches every chart",
		values: `{tags: {cache: true}, global: {imageRegistry: mirror.example}}`,
		want: depsView{
			Objects: []string{
				"ConfigMap apps/shop-subchart-deps", "Service apps/shop-cache", "Service apps/shop-database",
				"Deployment apps/shop-cache", "Deployment apps/shop-subchart-deps", "StatefulSet apps/shop-database",
			},
			Config: map[string]any{
				"environment":  "staging",
				"databaseURL":  "postgres://shop@shop-database:5432/app?sslmode=disable",
				"sessionStore": "redis://shop-cache:6379",
			},
			Images: map[string]string{
				"Deployment shop-cache":         "mirror.example/redis:7.2",
				"Deployment shop-subchart-deps": "mirror.example/shop:2.4.1",
				"StatefulSet shop-database":     "mirror.example/postgres:16.4",
			},
			Charts: withDatabase(),
		},
	}, {
		name:   "one true tag of several is enough",
		values: `{tags: {cache: false, sessions: true}, database: {enabled: false}}`,
		want: depsView{
			Objects: []string{"ConfigMap apps/shop-subchart-deps", "Service apps/shop-cache", "Deployment apps/shop-cache", "Deployment apps/shop-subchart-deps"},
			Config:  map[string]any{"environment": "staging"},
			Images: map[string]string{
				"Deployment shop-cache":         "registry.example/redis:7.2",
				"Deployment shop-subchart-deps": "registry.example/shop:2.4.1",
			},
			Charts: parent,
		},
	}, {
		name:   "a condition that resolves wins over the tags",
		values: `{tags: {cache: true}, cache: {enabled: false}, database: {enabled: false}}`,
		want: depsView{
			Objects: []string{"ConfigMap apps/shop-subchart-deps", "Deployment apps/shop-subchart-deps"},
			Config:  map[string]any{"environment": "staging"},
			Images:  map[string]string{"Deployment shop-subchart-deps": "registry.example/shop:2.4.1"},
			Charts:  parent,
		},
	}, {
		// Helm imports the subchart's defaults, not the user's values for it; the
		// parent's own values win over what it imports.
		name:   "import-values read the subchart's defaults; the parent's values win",
		values: `{database: {service: {port: 6543}, exports: {connection: {databaseName: ignored}}}, sslMode: require}`,
		want: depsView{
			Objects: []string{"ConfigMap apps/shop-subchart-deps", "Service apps/shop-database", "Deployment apps/shop-subchart-deps", "StatefulSet apps/shop-database"},
			Config: map[string]any{
				"environment": "staging",
				"databaseURL": "postgres://shop@shop-database:5432/app?sslmode=require",
			},
			Images: map[string]string{"Deployment shop-subchart-deps": "registry.example/shop:2.4.1", "StatefulSet shop-database": "registry.example/postgres:16.4"},
			Charts: withDatabase(),
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := renderOK(t, r, Request{Release: testRelease("shop", repo.url(), "subchart-deps", values(tc.values))})
			if diff := cmp.Diff(tc.want, viewDeps(t, res)); diff != "" {
				t.Errorf("render (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubchartPortFromUserValues shows the other half of the import-values case:
// the user's value for the subchart reaches the subchart itself.
func TestSubchartPortFromUserValues(t *testing.T) {
	repo := corpusRepo(t, "subchart-deps")
	r, _ := testRenderer(t)
	res := renderOK(t, r, Request{Release: testRelease("shop", repo.url(), "subchart-deps", values(`{database: {service: {port: 6543}}}`))})
	ports, _, _ := unstructuredSlice(find(t, res.Objects, "Service", "shop-database"), "spec", "ports")
	if diff := cmp.Diff(int64(6543), ports[0].(map[string]any)["port"]); diff != "" {
		t.Errorf("the database Service's port (-want +got):\n%s", diff)
	}
}

// withoutDependency removes the vendored subchart name from the chart's charts/
// (the chart at path, a "/"-separated list of subchart names; "" is the top).
func withoutDependency(path, name string) func(*chart.Chart) {
	return func(c *chart.Chart) {
		for _, p := range strings.Split(path, "/") {
			if p == "" {
				continue
			}
			i := slices.IndexFunc(c.Dependencies(), func(d *chart.Chart) bool { return d.Name() == p })
			c = c.Dependencies()[i]
		}
		c.SetDependencies(slices.DeleteFunc(slices.Clone(c.Dependencies()), func(d *chart.Chart) bool { return d.Name() == name })...)
	}
}

func TestMissingDependencies(t *testing.T) {
	cases := map[string]struct {
		edits []func(*chart.Chart)
		// helmRefuses: Helm's own action.CheckDependencies (which `helm install`
		// runs on the top chart) refuses the archive too.
		helmRefuses bool
		msgHas      []string
	}{
		"all vendored": {},
		"an enabled dependency": {
			edits:       []func(*chart.Chart){withoutDependency("", "database")},
			helmRefuses: true,
			msgHas:      []string{`"database" ~1.2.0 from oci://registry.example/charts (listed in Chart.yaml)`},
		},
		"a dependency its condition turns off": {
			// Helm checks every listed dependency, whatever its condition or tags.
			edits:       []func(*chart.Chart){withoutDependency("", "cache")},
			helmRefuses: true,
			msgHas:      []string{`"cache" 0.3.0 from https://charts.example/stable (listed in Chart.yaml)`},
		},
		"the library chart": {
			edits:       []func(*chart.Chart){withoutDependency("", "toolkit")},
			helmRefuses: true,
			msgHas:      []string{`"toolkit" 1.x.x`},
		},
		"several at once": {
			edits:       []func(*chart.Chart){withoutDependency("", "cache"), withoutDependency("", "toolkit")},
			helmRefuses: true,
			msgHas:      []string{`"cache" 0.3.0`, `"toolkit" 1.x.x`},
		},
		"a subchart's own dependency": {
			// `helm install` checks only the top chart's; `helm package` refuses a
			// subchart without its dependencies, so only a hand-built archive has one.
			edits:  []func(*chart.Chart){withoutDependency("database", "toolkit")},
			msgHas: []string{`"toolkit" 1.x.x from oci://registry.example/charts (listed in charts/database/Chart.yaml)`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			archive := corpusArchive(t, "subchart-deps", tc.edits...)
			repo := newChartRepo(t)
			repo.AddArchive(archive)
			r, _ := testRenderer(t)
			_, err := r.Render(context.Background(), Request{Release: testRelease("shop", repo.url(), "subchart-deps"), Capabilities: defaultCaps})

			helm, lerr := loader.LoadArchive(bytes.NewReader(archive))
			if lerr != nil {
				t.Fatal(lerr)
			}
			ac, aerr := ci.NewAccessor(helm)
			if aerr != nil {
				t.Fatal(aerr)
			}
			helmErr := action.CheckDependencies(helm, ac.MetaDependencies())
			if diff := cmp.Diff(tc.helmRefuses, helmErr != nil); diff != "" {
				t.Errorf("Helm's CheckDependencies refuses the archive (-want +got):\n%s\nerror: %v", diff, helmErr)
			}

			if tc.msgHas == nil {
				if err != nil {
					t.Fatalf("Render: %v", err)
				}
				return
			}
			if diff := cmp.Diff(v1alpha1.ReasonUnsupported, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			for _, s := range append(tc.msgHas, "chart subchart-deps 1.0.0", "helm dependency build", "Release team-a/shop") {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}
