package render

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	v2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"
)

// loadChart reads a chart archive. Chart API versions other than v1 and v2 are
// Unsupported; an archive that is not a gzip'd tar is SourceNotReady (a broken
// download); a chart that Helm rejects is Unappliable.
func loadChart(data []byte, what string) (*chart.Chart, error) {
	files, err := archive.LoadArchiveFiles(bytes.NewReader(data))
	if err != nil {
		if errors.Is(err, gzip.ErrHeader) {
			return nil, sourceNotReady("chart %s: the archive is not a gzip'd tar: %w", what, err)
		}
		return nil, sourceNotReady("chart %s: reading the archive: %w", what, err)
	}
	var apiVersion string
	found := false
	for _, f := range files {
		if f.Name == "Chart.yaml" {
			var head struct {
				APIVersion string `json:"apiVersion"`
			}
			if err := yaml.Unmarshal(f.Data, &head); err != nil {
				return nil, unappliable("chart %s: Chart.yaml: %w", what, err)
			}
			apiVersion, found = head.APIVersion, true
		}
	}
	if !found {
		return nil, unappliable("chart %s: the archive has no Chart.yaml", what)
	}
	switch apiVersion {
	case chart.APIVersionV1, chart.APIVersionV2, "":
	default:
		return nil, unsupported("chart %s: chart apiVersion %q is not supported; convoy renders charts of apiVersion v1 and v2", what, apiVersion)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, unappliable("chart %s: %w", what, err)
	}
	if c.Metadata.Type != "" && c.Metadata.Type != "application" {
		return nil, unsupported("chart %s: a chart of type %q cannot be installed; deliver an application chart", what, c.Metadata.Type)
	}
	if err := checkDependencies(c); err != nil {
		return nil, unsupported("chart %s: %w", what, err)
	}
	return c, nil
}

// checkDependencies is Helm's action.CheckDependencies, which `helm install` and
// `helm package` run, applied to the chart and to each vendored subchart: every
// dependency that a Chart.yaml lists must be in that chart's charts/ folder, by name,
// whatever its condition or tags. convoy renders what the archive holds and never
// downloads dependencies (no `helm install --dependency-update`), so a missing one
// is a chart it cannot render: Unsupported.
func checkDependencies(c *chart.Chart) error {
	var missing []string
	var walk func(c *chart.Chart, dir string)
	walk = func(c *chart.Chart, dir string) {
		for _, d := range c.Metadata.Dependencies {
			if d == nil || slices.ContainsFunc(c.Dependencies(), func(v *chart.Chart) bool { return v.Name() == d.Name }) {
				continue
			}
			entry := strconv.Quote(d.Name)
			if d.Version != "" {
				entry += " " + d.Version
			}
			if d.Repository != "" {
				entry += " from " + d.Repository
			}
			missing = append(missing, fmt.Sprintf("%s (listed in %sChart.yaml)", entry, dir))
		}
		for _, sub := range c.Dependencies() {
			walk(sub, dir+"charts/"+sub.Name()+"/")
		}
	}
	walk(c, "")
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("dependencies missing from the chart archive's charts/ folder: %s; "+
		"convoy renders the archive as it is and does not download dependencies: vendor them with "+
		"`helm dependency build` before `helm package`, and publish the chart again",
		strings.Join(missing, ", "))
}

// renderedFile is one rendered template or CRD file.
type renderedFile struct {
	name    string
	content string
	crd     bool // from crds/: not a template
}

// renderOptions are what the templates see of the Release.
type renderOptions struct {
	releaseName string
	namespace   string
	caps        Capabilities
}

// template renders the chart with Helm's engine, as `helm install` does in client
// only mode: dependencies enabled by their conditions and tags, values coalesced
// with the chart's and checked against its schema, kubeVersion checked. It returns
// the non-empty manifest files, the crds/ files first. Every error is Unappliable.
func template(ctx context.Context, c *chart.Chart, values map[string]any, o renderOptions, what string) ([]renderedFile, error) {
	caps, err := o.caps.helmCapabilities()
	if err != nil {
		return nil, unappliable("chart %s: %w", what, err)
	}
	if kv := c.Metadata.KubeVersion; kv != "" && !v2util.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, unappliable("chart %s requires kubeVersion %s, which the target's Kubernetes %s does not meet", what, kv, caps.KubeVersion.Version)
	}
	if err := v2util.ProcessDependencies(c, values); err != nil {
		return nil, unappliable("chart %s: processing its dependencies: %w", what, err)
	}
	// Always an install at revision 1, so that the render depends only on the chart,
	// the values, the mutations and the target's capabilities.
	opts := common.ReleaseOptions{Name: o.releaseName, Namespace: o.namespace, Revision: 1, IsInstall: true}
	renderValues, err := chartutil.ToRenderValuesWithSchemaValidation(c, values, opts, caps, false)
	if err != nil {
		return nil, unappliable("chart %s: %w", what, err)
	}
	// No rest.Config: `lookup` finds nothing, as in `helm template`; DNS is off.
	var e engine.Engine
	files, err := e.RenderWithContext(ctx, c, renderValues)
	if err != nil {
		return nil, unappliable("chart %s: template error: %w", what, err)
	}

	var out []renderedFile
	for _, crd := range c.CRDObjects() {
		if strings.TrimSpace(string(crd.File.Data)) == "" {
			continue
		}
		out = append(out, renderedFile{name: crd.Filename, content: string(crd.File.Data), crd: true})
	}
	for name, content := range files {
		base := path.Base(name)
		if strings.HasPrefix(base, "_") || strings.HasSuffix(name, "NOTES.txt") || strings.TrimSpace(content) == "" {
			continue
		}
		out = append(out, renderedFile{name: name, content: content})
	}
	return out, nil
}

// chartWhat names a chart for messages.
func chartWhat(name, version string) string {
	return fmt.Sprintf("%s %s", name, version)
}
