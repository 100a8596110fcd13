package render

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// What the templates read of the capabilities decides whether a render is reused: a
// Has question answered otherwise, a part of the Kubernetes version read that
// changed, or (for templates that use the list whole) any change of the list.
func TestCapabilityReadsChanged(t *testing.T) {
	target := Capabilities{KubeVersion: "v1.37.2", APIVersions: []string{"v1", "apps/v1", "apps/v1/Deployment"}}
	with := func(f func(*Capabilities)) Capabilities {
		c := target
		c.APIVersions = append([]string(nil), target.APIVersions...)
		f(&c)
		return c
	}
	gained := with(func(c *Capabilities) {
		c.APIVersions = append(c.APIVersions, "example.com/v1", "example.com/v1/Widget")
	})
	lost := with(func(c *Capabilities) { c.APIVersions = c.APIVersions[:1] })
	patch := with(func(c *Capabilities) { c.KubeVersion = "v1.37.3" })
	minor := with(func(c *Capabilities) { c.KubeVersion = "v1.38.0" })
	vendor := with(func(c *Capabilities) { c.KubeVersion = "v1.37.2-gke.1" })
	whole := apiVersionsDigest(target.APIVersions, []string{"example.com/v1"})

	cases := map[string]struct {
		reads CapabilityReads
		caps  Capabilities
		want  bool
	}{
		"nothing read, an API version more":    {caps: gained},
		"nothing read, another Kubernetes":     {caps: minor},
		"a question about another API":         {reads: CapabilityReads{APIVersions: map[string]bool{"policy/v1": false}}, caps: gained},
		"a question now answered yes":          {reads: CapabilityReads{APIVersions: map[string]bool{"example.com/v1": false}}, caps: gained, want: true},
		"a question now answered no":           {reads: CapabilityReads{APIVersions: map[string]bool{"apps/v1/Deployment": true}}, caps: lost, want: true},
		"a question answered the same":         {reads: CapabilityReads{APIVersions: map[string]bool{"apps/v1": true, "batch/v1": false}}, caps: target},
		"Minor read, a patch release":          {reads: CapabilityReads{KubeVersion: map[string]string{"Major": "1", "Minor": "37"}}, caps: patch},
		"Minor read, a minor release":          {reads: CapabilityReads{KubeVersion: map[string]string{"Minor": "37"}}, caps: minor, want: true},
		"Version read, a patch release":        {reads: CapabilityReads{KubeVersion: map[string]string{"Version": "v1.37.2"}}, caps: patch, want: true},
		"String read, a vendor suffix":         {reads: CapabilityReads{KubeVersion: map[string]string{"String": "v1.37.2"}}, caps: vendor},
		"Version read, a vendor suffix":        {reads: CapabilityReads{KubeVersion: map[string]string{"Version": "v1.37.2"}}, caps: vendor, want: true},
		"an unknown part":                      {reads: CapabilityReads{KubeVersion: map[string]string{"Patch": "2"}}, caps: target, want: true},
		"the whole list, the same":             {reads: CapabilityReads{AllAPIVersions: apiVersionsDigest(target.APIVersions)}, caps: target},
		"the whole list, one more":             {reads: CapabilityReads{AllAPIVersions: apiVersionsDigest(target.APIVersions)}, caps: gained, want: true},
		"the whole list, another order":        {reads: CapabilityReads{AllAPIVersions: apiVersionsDigest(target.APIVersions)}, caps: with(func(c *Capabilities) { c.APIVersions[0], c.APIVersions[1] = c.APIVersions[1], c.APIVersions[0] })},
		"the whole list with the chart's CRDs": {reads: CapabilityReads{AllAPIVersions: whole, ChartAPIVersions: []string{"example.com/v1"}}, caps: with(func(c *Capabilities) { c.APIVersions = append(c.APIVersions, "example.com/v1") })},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.reads.Changed(tc.caps)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Changed = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := (CapabilityReads{KubeVersion: map[string]string{"Version": "v1"}}).Changed(Capabilities{KubeVersion: "banana"}); err == nil {
		t.Error("no error for a Kubernetes version that does not parse")
	}
}

// The API versions that a chart's crds/ serve are those discovery lists once they are
// installed: group/version and group/version/kind of each served version, of the
// chart's and its subcharts' CRDs (apiextensions.k8s.io/v1 only; other objects in
// crds/ serve nothing).
func TestChartAPIVersions(t *testing.T) {
	sub := testChart("sub", nil, map[string]string{"crds/gadgets.yaml": crdYAML("sub.example.com", "Gadget", "v1")})
	c := testChart("top", nil, map[string]string{
		"crds/widgets.yaml": crdYAML("example.com", "Widget", "v1", "v2beta1") + "---\n" + crdYAML("example.com", "Sprocket", "v1"),
		"crds/old.yaml": "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: olds.old.example.com}\n" +
			"spec: {group: old.example.com, version: v1, names: {kind: Old, plural: olds}}\n",
		"crds/unserved.yaml":  strings.Replace(crdYAML("unserved.example.com", "Gone", "v1"), "served: true", "served: false", 1),
		"crds/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: extra}\n",
		"README.md":           "crds/ is not here",
	}, sub)
	got, err := chartAPIVersions(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"example.com/v1", "example.com/v1/Sprocket", "example.com/v1/Widget",
		"example.com/v2beta1", "example.com/v2beta1/Widget",
		"sub.example.com/v1", "sub.example.com/v1/Gadget",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("API versions (-want +got):\n%s", diff)
	}

	broken := testChart("broken", nil, map[string]string{"crds/x.yaml": "kind: [unclosed"})
	if _, err := chartAPIVersions(broken); err == nil {
		t.Error("no error for a crds/ file that is not YAML")
	}
}

// A template that names APIVersions otherwise than as APIVersions.Has uses the list
// whole.
func TestUsesAPIVersionsWhole(t *testing.T) {
	cases := map[string]struct {
		template string
		want     bool
	}{
		"no capabilities":      {template: `kind: ConfigMap`},
		"Has":                  {template: `{{ if .Capabilities.APIVersions.Has "policy/v1" }}{{ end }}{{ $.Capabilities.APIVersions.Has "x" }}`},
		"range":                {template: `{{ range .Capabilities.APIVersions }}{{ . }}{{ end }}`, want: true},
		"sprig has":            {template: `{{ has "policy/v1" .Capabilities.APIVersions }}`, want: true},
		"toYaml":               {template: `{{ toYaml .Capabilities.APIVersions }}`, want: true},
		"a variable":           {template: `{{ $v := .Capabilities.APIVersions }}{{ $v.Has "x" }}`, want: true},
		"Has, then the list":   {template: `{{ .Capabilities.APIVersions.Has "x" }}{{ len .Capabilities.APIVersions }}`, want: true},
		"only the KubeVersion": {template: `{{ .Capabilities.KubeVersion.Version }}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := testChart("c", map[string]string{"templates/a.yaml": tc.template}, nil)
			if got := usesAPIVersionsWhole(c); got != tc.want {
				t.Errorf("usesAPIVersionsWhole = %v, want %v", got, tc.want)
			}
			parent := testChart("parent", nil, nil, c)
			if got := usesAPIVersionsWhole(parent); got != tc.want {
				t.Errorf("as a subchart's template: usesAPIVersionsWhole = %v, want %v", got, tc.want)
			}
		})
	}
}

// The templates see the chart's own CRDs' API versions as served (Helm installs crds/
// first), and the render records what they read of the rest: Has questions the target
// answered, parts of the Kubernetes version, the whole list. What the templates make
// of .Capabilities is Helm's.
func TestTemplatesCapabilityReads(t *testing.T) {
	caps := Capabilities{KubeVersion: "v1.37.2-gke.1", APIVersions: []string{"v1", "v1/ConfigMap", "apps/v1"}}
	widgets := map[string]string{"crds/widgets.yaml": crdYAML("example.com", "Widget", "v1")}
	cases := map[string]struct {
		template string
		crds     map[string]string
		sub      map[string]string // crds/ of a subchart
		kube     string            // the chart's kubeVersion constraint
		want     string            // data.out of the ConfigMap
		reads    CapabilityReads
	}{
		"a guard on the chart's own kind": {
			template: `{{ .Capabilities.APIVersions.Has "example.com/v1/Widget" }} {{ .Capabilities.APIVersions.Has "example.com/v1" }}`,
			crds:     widgets, want: "true true",
		},
		"a guard on a subchart's kind": {
			template: `{{ .Capabilities.APIVersions.Has "example.com/v1/Widget" }}`,
			sub:      widgets, want: "true",
		},
		"questions the target answers": {
			template: `{{ .Capabilities.APIVersions.Has "apps/v1" }} {{ .Capabilities.APIVersions.Has "policy/v1" }} {{ .Capabilities.APIVersions.Has "example.com/v1/Widget" }}`,
			crds:     widgets, want: "true false true",
			reads: CapabilityReads{APIVersions: map[string]bool{"apps/v1": true, "policy/v1": false}},
		},
		"the list in a variable": {
			template: `{{ $apis := .Capabilities.APIVersions }}{{ $apis.Has "apps/v1" }} {{ len $apis }}`,
			crds:     widgets, want: "true 5",
			reads: CapabilityReads{
				APIVersions:    map[string]bool{"apps/v1": true},
				AllAPIVersions: apiVersionsDigest(caps.APIVersions, []string{"example.com/v1", "example.com/v1/Widget"}), ChartAPIVersions: []string{"example.com/v1", "example.com/v1/Widget"},
			},
		},
		"range over the list": {
			template: `{{ range .Capabilities.APIVersions }}{{ . }},{{ end }}`,
			want:     "v1,v1/ConfigMap,apps/v1,",
			reads:    CapabilityReads{AllAPIVersions: apiVersionsDigest(caps.APIVersions)},
		},
		"range over the list with the chart's CRDs": {
			template: `{{ range .Capabilities.APIVersions }}{{ . }},{{ end }}`,
			crds:     widgets, want: "apps/v1,example.com/v1,example.com/v1/Widget,v1,v1/ConfigMap,",
			reads: CapabilityReads{
				AllAPIVersions: apiVersionsDigest(caps.APIVersions, []string{"example.com/v1", "example.com/v1/Widget"}), ChartAPIVersions: []string{"example.com/v1", "example.com/v1/Widget"},
			},
		},
		"toJson of the capabilities": {
			template: `{{ (fromJson (toJson .Capabilities)).KubeVersion.Major }}`,
			want:     "1",
			reads:    CapabilityReads{KubeVersion: map[string]string{"Version": "v1.37.2-gke.1"}, AllAPIVersions: apiVersionsDigest(caps.APIVersions)},
		},
		"parts of the Kubernetes version": {
			template: `{{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }}`,
			want:     "1.37",
			reads:    CapabilityReads{KubeVersion: map[string]string{"Major": "1", "Minor": "37"}},
		},
		"the Kubernetes version, and as GitVersion": {
			template: `{{ .Capabilities.KubeVersion.Version }} {{ semverCompare ">=1.30-0" .Capabilities.KubeVersion.GitVersion }}`,
			want:     "v1.37.2-gke.1 true",
			reads:    CapabilityReads{KubeVersion: map[string]string{"Version": "v1.37.2-gke.1"}},
		},
		"the Kubernetes version printed": {
			template: `{{ .Capabilities.KubeVersion }}`,
			want:     "v1.37.2",
			reads:    CapabilityReads{KubeVersion: map[string]string{"String": "v1.37.2"}},
		},
		"a kubeVersion constraint": {
			template: `none`, kube: ">=1.30.0-0", want: "none",
			reads: CapabilityReads{KubeVersion: map[string]string{"String": "v1.37.2"}},
		},
		"Has through tpl": {
			template: `{{ tpl "{{ .Capabilities.APIVersions.Has \"batch/v1\" }}" . }}`,
			want:     "false",
			reads:    CapabilityReads{APIVersions: map[string]bool{"batch/v1": false}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			repo := newChartRepo(t)
			r, _ := testRenderer(t)
			chartName := "caps"
			var subs []*chart.Chart
			if tc.sub != nil {
				subs = append(subs, testChart("sub", nil, tc.sub))
			}
			c := testChart(chartName, map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caps}\ndata:\n  out: '" + tc.template + "'\n"}, tc.crds, subs...)
			c.Metadata.KubeVersion = tc.kube
			repo.AddArchive(saveChart(t, c, "1.0.0"))
			res := renderOK(t, r, Request{Release: testRelease("web", repo.url(), chartName), Capabilities: caps})
			if got := find(t, res.Objects, "ConfigMap", "caps").Object["data"].(map[string]any)["out"]; got != tc.want {
				t.Errorf("the template said %q, want %q", got, tc.want)
			}
			if diff := cmp.Diff(tc.reads, res.Capabilities); diff != "" {
				t.Errorf("reads (-want +got):\n%s", diff)
			}
		})
	}
}

// A render is reused while the target answers its templates' questions the same: a
// target that gains an API version no template asked about keeps it, one that a
// template asked about renders anew.
func TestCapabilityReadsDecideReuse(t *testing.T) {
	c := testChart("guarded", map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guarded}\n" +
		"data:\n  widget: '{{ .Capabilities.APIVersions.Has \"example.com/v1/Widget\" }}'\n  optional: '{{ .Capabilities.APIVersions.Has \"optional.example.com/v1\" }}'\n"},
		map[string]string{"crds/widgets.yaml": crdYAML("example.com", "Widget", "v1")})
	repo := newChartRepo(t)
	repo.AddArchive(saveChart(t, c, "1.0.0"))
	r, _ := testRenderer(t)
	rel := testRelease("web", repo.url(), "guarded")
	target := Capabilities{KubeVersion: "v1.37.2", APIVersions: []string{"v1", "apps/v1"}}
	first := renderOK(t, r, Request{Release: rel, Capabilities: target})
	earlier := func(context.Context, ReuseKey) (*Result, error) {
		prev := *first
		return &prev, nil
	}

	cases := map[string]struct {
		add    []string
		reused bool
	}{
		"the chart's own CRDs installed":  {add: []string{"example.com/v1", "example.com/v1/Widget"}, reused: true},
		"an API version nobody asked for": {add: []string{"unrelated.example.com/v1"}, reused: true},
		"an API version a template asked": {add: []string{"optional.example.com/v1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			caps := target
			caps.APIVersions = append(append([]string(nil), target.APIVersions...), tc.add...)
			res := renderReusingOK(t, r, Request{Release: rel, Capabilities: caps}, earlier)
			if res.Reused != tc.reused {
				t.Errorf("reused = %v, want %v", res.Reused, tc.reused)
			}
		})
	}
}

// testChart is a chart of API version v2 with templates and other files (crds/…),
// and subcharts.
func testChart(name string, templates, files map[string]string, subs ...*chart.Chart) *chart.Chart {
	c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "1.0.0"}}
	for n, data := range templates {
		c.Templates = append(c.Templates, &common.File{Name: n, Data: []byte(data)})
	}
	for n, data := range files {
		c.Files = append(c.Files, &common.File{Name: n, Data: []byte(data)})
	}
	c.SetDependencies(subs...)
	return c
}

// crdYAML is a namespaced CustomResourceDefinition of kind in group, serving versions.
func crdYAML(group, kind string, versions ...string) string {
	plural := strings.ToLower(kind) + "s"
	var vs strings.Builder
	for i, v := range versions {
		fmt.Fprintf(&vs, "  - name: %s\n    served: true\n    storage: %v\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n", v, i == 0)
	}
	return fmt.Sprintf("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s.%s\nspec:\n  group: %s\n  scope: Namespaced\n"+
		"  names: {kind: %s, plural: %s}\n  versions:\n%s", plural, group, group, kind, plural, vs.String())
}
