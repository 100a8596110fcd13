package render

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	gotemplate "text/template"

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
	return c, nil
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
	// revision is .Release.Revision; isUpgrade .Release.IsUpgrade (else IsInstall).
	revision  int64
	isUpgrade bool
	// lookups answers the templates' lookup; nil: lookup finds nothing, as in
	// `helm template`.
	lookups *lookups
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
	// The revision and install or upgrade as the caller decided them: a render is
	// reused while its inputs stay, so these do not make a new render by themselves.
	opts := common.ReleaseOptions{
		Name: o.releaseName, Namespace: o.namespace, Revision: int(o.revision), IsInstall: !o.isUpgrade, IsUpgrade: o.isUpgrade,
	}
	renderValues, err := chartutil.ToRenderValuesWithSchemaValidation(c, values, opts, caps, false)
	if err != nil {
		return nil, unappliable("chart %s: %w", what, err)
	}
	// DNS is off. lookup reads the target through o.lookups, or finds nothing.
	var e engine.Engine
	if o.lookups != nil {
		e.CustomTemplateFuncs = gotemplate.FuncMap{"lookup": o.lookups.lookup}
	}
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
