package render

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
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

// load reads the chart's files (Chart.Files) or its archive; what names it for
// messages.
func (c Chart) load(what string) (*chart.Chart, error) {
	if c.Files == nil {
		return loadChart(c.Archive, what)
	}
	files, err := c.Files()
	if err != nil {
		return nil, err
	}
	return loadChartFiles(files, what)
}

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
	return loadChartFiles(files, what)
}

// loadChartFiles reads a chart from its files, as loadChart an archive's.
func loadChartFiles(files []*archive.BufferedFile, what string) (*chart.Chart, error) {
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
	// revision is .Release.Revision; isUpgrade .Release.IsUpgrade (else IsInstall).
	revision  int64
	isUpgrade bool
	// lookups answers the templates' lookup; nil: lookup finds nothing, as in
	// `helm template`.
	lookups *lookups
}

// template renders the chart with Helm's engine, as `helm install` does in client
// only mode: dependencies enabled by their conditions and tags, values coalesced
// with the chart's and checked against its schema, kubeVersion checked. As `helm
// install` against a cluster, which installs crds/ before it reads the cluster's
// capabilities, the templates see the API versions of the chart's CRDs as served. It
// returns the non-empty manifest files, the crds/ files first, and what the templates
// read of the capabilities. Every error is Unappliable.
func template(ctx context.Context, c *chart.Chart, values map[string]any, o renderOptions, what string) ([]renderedFile, CapabilityReads, error) {
	var none CapabilityReads
	caps, err := o.caps.helmCapabilities()
	if err != nil {
		return nil, none, unappliable("chart %s: %w", what, err)
	}
	if kv := c.Metadata.KubeVersion; kv != "" && !v2util.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, none, unappliable("chart %s requires kubeVersion %s, which the target's Kubernetes %s does not meet", what, kv, caps.KubeVersion.Version)
	}
	if err := v2util.ProcessDependencies(c, values); err != nil {
		return nil, none, unappliable("chart %s: processing its dependencies: %w", what, err)
	}
	if err := validateValues(c, values); err != nil {
		return nil, none, unappliable("chart %s: %w", what, err)
	}
	chartVersions, err := chartAPIVersions(c)
	if err != nil {
		return nil, none, unappliable("chart %s: %w", what, err)
	}
	rec := newCapabilityRecorder(chartVersions)
	if c.Metadata.KubeVersion != "" {
		rec.kube("String", caps.KubeVersion.String()) // the constraint holds while it does
	}
	// The revision and install or upgrade as the caller decided them: a render is
	// reused while its inputs stay, so these do not make a new render by themselves.
	opts := common.ReleaseOptions{
		Name: o.releaseName, Namespace: o.namespace, Revision: int(o.revision), IsInstall: !o.isUpgrade, IsUpgrade: o.isUpgrade,
	}
	renderValues, err := chartutil.ToRenderValuesWithSchemaValidation(c, values, opts, caps, false)
	if err != nil {
		return nil, none, unappliable("chart %s: %w", what, err)
	}
	view, done := rec.view(caps, usesAPIVersionsWhole(c))
	defer done()
	renderValues["Capabilities"] = view
	// DNS is off. lookup reads the target through o.lookups, or finds nothing.
	var e engine.Engine
	if o.lookups != nil {
		e.CustomTemplateFuncs = gotemplate.FuncMap{"lookup": o.lookups.lookup}
	}
	files, err := e.RenderWithContext(ctx, c, renderValues)
	if err != nil {
		return nil, none, unappliable("chart %s: template error: %w", what, err)
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
	return out, rec.recorded(), nil
}

// validateValues checks the values, coalesced with the chart's defaults, against the
// values.schema.json of the chart and of each enabled subchart, as Helm does before
// templating (chartutil.ValidateAgainstSchema walks the charts the same way; its
// message does not say under which parent a subchart's values are). The error names
// every wrong value by its path in the Release's values ("image.pullPolicy",
// "database.service.port"), sorted, and says what to do.
func validateValues(c *chart.Chart, values map[string]any) error {
	coalesced, err := chartutil.CoalesceValues(c, values)
	if err != nil {
		return err
	}
	var violations []string
	var invalid []error
	var walk func(c *chart.Chart, vals map[string]any, prefix string)
	walk = func(c *chart.Chart, vals map[string]any, prefix string) {
		if c.Schema != nil {
			err := chartutil.ValidateAgainstSingleSchema(vals, c.Schema)
			var verr chartutil.JSONSchemaValidationError
			switch {
			case errors.As(err, &verr):
				violations = append(violations, schemaViolations(verr.Error(), prefix)...)
			case err != nil:
				invalid = append(invalid, fmt.Errorf("the values.schema.json of %s is not a valid JSON schema: %w", chartOrSubchart(c, prefix), err))
			}
		}
		for _, sub := range c.Dependencies() {
			raw, ok := vals[sub.Name()]
			if !ok || raw == nil {
				continue
			}
			subVals, ok := raw.(map[string]any)
			if !ok {
				violations = append(violations, fmt.Sprintf("%s: got %s, want the values of subchart %s (an object)", prefix+sub.Name(), jsonType(raw), sub.Name()))
				continue
			}
			walk(sub, subVals, prefix+sub.Name()+".")
		}
	}
	walk(c, coalesced, "")
	if len(invalid) > 0 {
		return errors.Join(invalid...)
	}
	if len(violations) == 0 {
		return nil
	}
	slices.Sort(violations)
	violations = slices.Compact(violations)
	return fmt.Errorf("the values do not meet the chart's values.schema.json: %s; change these values in spec.values or the valuesFrom sources",
		strings.Join(violations, "; "))
}

// schemaLine is one line of a JSON schema validation message:
// "  - at '/image/pullPolicy': value must be one of 'Always', 'Never'".
var schemaLine = regexp.MustCompile(`^(\s*)- at '([^']*)': (.*)$`)

// schemaViolations turns the message of a failed validation into "path: problem"
// entries, the path in the values' dotted form after prefix. Groups of errors
// ("validation failed") give their leaves; other groups (anyOf, oneOf) are one
// entry, since their leaves are alternatives.
func schemaViolations(msg, prefix string) []string {
	type line struct {
		indent      int
		path, issue string
	}
	var lines []line
	for l := range strings.SplitSeq(msg, "\n") {
		m := schemaLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		lines = append(lines, line{indent: len(m[1]), path: m[2], issue: m[3]})
	}
	if len(lines) == 0 {
		return []string{fmt.Sprintf("%s%s", valuesRoot(prefix), strings.TrimSpace(msg))}
	}
	var out []string
	skipBelow := -1 // skip the lines more indented than this: alternatives of a group
	for i, l := range lines {
		if skipBelow >= 0 && l.indent > skipBelow {
			continue
		}
		skipBelow = -1
		hasChildren := i+1 < len(lines) && lines[i+1].indent > l.indent
		if hasChildren {
			if l.issue == "validation failed" {
				continue // its leaves follow
			}
			skipBelow = l.indent
		}
		out = append(out, describeViolation(prefix, l.path, l.issue)...)
	}
	return out
}

var (
	missingProps    = regexp.MustCompile(`^missing propert(?:y|ies) (.*)$`)
	additionalProps = regexp.MustCompile(`^additional propert(?:y|ies) (.*) not allowed$`)
	quoted          = regexp.MustCompile(`'((?:[^']|'')*)'`)
)

// describeViolation says what is wrong at pointer (a JSON pointer into the values
// under prefix); a missing or forbidden key is named by its own path.
func describeViolation(prefix, pointer, issue string) []string {
	path := prefix + dottedPath(pointer)
	keysIn := func(list string) []string {
		var keys []string
		for _, m := range quoted.FindAllStringSubmatch(list, -1) {
			keys = append(keys, joinPath(path, m[1]))
		}
		return keys
	}
	var out []string
	if m := missingProps.FindStringSubmatch(issue); m != nil {
		for _, k := range keysIn(m[1]) {
			out = append(out, k+": is required")
		}
	} else if m := additionalProps.FindStringSubmatch(issue); m != nil {
		for _, k := range keysIn(m[1]) {
			out = append(out, k+": is not allowed (the schema knows no such key)")
		}
	}
	if len(out) > 0 {
		return out
	}
	return []string{fmt.Sprintf("%s%s", valuesRoot(path), issue)}
}

// valuesRoot is "path: ", or "the values: " for the top of the values.
func valuesRoot(path string) string {
	path = strings.TrimSuffix(path, ".")
	if path == "" {
		return "the values: "
	}
	return path + ": "
}

// dottedPath turns a JSON pointer ("/image/pull~1policy", "/hosts/0") into the
// dotted form of --set ("image.pull/policy", "hosts[0]").
func dottedPath(pointer string) string {
	var path string
	for i, seg := range strings.Split(pointer, "/") {
		if i == 0 {
			continue // before the leading slash
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		path = joinPath(path, seg)
	}
	return path
}

func joinPath(path, key string) string {
	path = strings.TrimSuffix(path, ".")
	switch {
	case key != "" && strings.Trim(key, "0123456789") == "":
		return path + "[" + key + "]"
	case strings.ContainsAny(key, ". "):
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// chartOrSubchart names the chart whose values sit under prefix.
func chartOrSubchart(c *chart.Chart, prefix string) string {
	if prefix == "" {
		return "the chart"
	}
	return fmt.Sprintf("subchart %s (values %s)", c.Name(), strings.TrimSuffix(prefix, "."))
}

// jsonType names the JSON type of a decoded value for messages.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	default:
		return "number"
	}
}
