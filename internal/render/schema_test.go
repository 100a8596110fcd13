package render

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

// violationsIn returns the "path: problem" entries of a schema error's message.
func violationsIn(t *testing.T, msg string) []string {
	t.Helper()
	const head, tail = "the values do not meet the chart's values.schema.json: ", "; change these values in spec.values or the valuesFrom sources"
	i, j := strings.Index(msg, head), strings.LastIndex(msg, tail)
	if i < 0 || j < i {
		t.Fatalf("error %q does not list schema violations and say what to do", msg)
	}
	return strings.Split(msg[i+len(head):j], "; ")
}

func TestValuesSchemaViolations(t *testing.T) {
	repo := corpusRepo(t, "schema", "subchart-deps")
	r, _ := testRenderer(t)
	cases := map[string]struct {
		chart  string
		values string
		want   []string // nil: the values are valid
	}{
		"valid values": {
			chart: "schema", values: `{replicaCount: 3, service: {type: NodePort, port: 443}, logLevel: debug}`,
		},
		"a wrong type": {
			chart: "schema", values: `{replicaCount: two}`,
			want: []string{"replicaCount: got string, want integer"},
		},
		"a value outside the enum": {
			chart: "schema", values: `{image: {pullPolicy: Sometimes}}`,
			want: []string{"image.pullPolicy: value must be one of 'Always', 'IfNotPresent', 'Never'"},
		},
		"out of range": {
			chart: "schema", values: `{service: {port: 70000}}`,
			want: []string{"service.port: maximum: got 70,000, want 65,535"},
		},
		"a required key removed with null": {
			chart: "schema", values: `{image: {repository: null}}`,
			want: []string{"image.repository: is required"},
		},
		"a required top-level key removed": {
			chart: "schema", values: `{service: null}`,
			want: []string{"service: is required"},
		},
		"a key the schema does not allow": {
			chart: "schema", values: `{image: {tags: "3.2"}}`,
			want: []string{"image.tags: is not allowed (the schema knows no such key)"},
		},
		"several at once, sorted by path": {
			chart: "schema", values: `{replicaCount: -1, logLevel: 3, image: {pullPolicy: Sometimes, repository: ""}, service: {type: Internal}}`,
			want: []string{
				"image.pullPolicy: value must be one of 'Always', 'IfNotPresent', 'Never'",
				"image.repository: minLength: got 0, want 1",
				"logLevel: got number, want string",
				"replicaCount: minimum: got -1, want 0",
				"service.type: value must be one of 'ClusterIP', 'NodePort', 'LoadBalancer'",
			},
		},
		"a subchart's schema: paths under the subchart's key": {
			chart: "subchart-deps", values: `{database: {service: {port: "5432"}, persistence: {size: 8G}}}`,
			want: []string{
				"database.persistence.size: '8G' does not match pattern '^[0-9]+(Mi|Gi|Ti)$'",
				"database.service.port: got string, want integer",
			},
		},
		"a disabled subchart's schema is not checked": {
			chart: "subchart-deps", values: `{database: {enabled: false, service: {port: "5432"}}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := r.Render(context.Background(), Request{Release: testRelease("api", repo.url(), tc.chart, values(tc.values)), Capabilities: defaultCaps})

			// Helm's own install agrees on whether the values are valid.
			_, helmErr := helmRender(t, corpusArchive(t, tc.chart), tc.values)
			if diff := cmp.Diff(tc.want != nil, helmErr != nil && strings.Contains(helmErr.Error(), "schema")); diff != "" {
				t.Errorf("Helm refuses the values (-want +got):\n%s\nHelm's error: %v", diff, helmErr)
			}

			if tc.want == nil {
				if err != nil {
					t.Fatalf("Render: %v", err)
				}
				return
			}
			if diff := cmp.Diff(v1alpha1.ReasonUnappliable, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if diff := cmp.Diff(tc.want, violationsIn(t, err.Error())); diff != "" {
				t.Errorf("violations (-want +got):\n%s\nerror: %v", diff, err)
			}
			if !strings.Contains(err.Error(), "Release team-a/api: chart "+tc.chart+" 1.0.0: ") {
				t.Errorf("error %q does not name the Release and chart", err)
			}
		})
	}
}

// TestSchemaViolationMessages reads the messages of Helm's schema validation for
// schema features the corpus chart does not use.
func TestSchemaViolationMessages(t *testing.T) {
	cases := map[string]struct {
		schema string
		values string
		prefix string
		want   []string
	}{
		"several required keys at the top": {
			schema: `{"type": "object", "required": ["a", "b"]}`,
			values: `{}`,
			want:   []string{"a: is required", "b: is required"},
		},
		"alternatives are one entry, not each alternative's failure": {
			schema: `{"properties": {"size": {"oneOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+Gi$"}]}}}`,
			values: `{size: 8G}`,
			want:   []string{"size: 'oneOf' failed, none matched"},
		},
		"list items by index, keys with dots and slashes quoted": {
			schema: `{"properties": {"hosts": {"items": {"type": "string"}}, "annotations": {"additionalProperties": {"type": "string"}}}}`,
			values: `{hosts: [a, 1], annotations: {"example.com/ttl": 30}}`,
			want:   []string{`annotations."example.com/ttl": got number, want string`, "hosts[1]: got number, want string"},
		},
		"under a subchart's key": {
			schema: `{"properties": {"port": {"type": "integer"}}}`,
			values: `{port: x}`,
			prefix: "database.",
			want:   []string{"database.port: got string, want integer"},
		},
		"the values themselves": {
			schema: `{"type": "object", "minProperties": 2}`,
			values: `{a: 1}`,
			want:   []string{"the values: minProperties: got 1, want 2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var vals map[string]any
			if err := yaml.Unmarshal([]byte(tc.values), &vals); err != nil {
				t.Fatal(err)
			}
			err := chartutil.ValidateAgainstSingleSchema(vals, []byte(tc.schema))
			if err == nil {
				t.Fatal("the values are valid")
			}
			got := schemaViolations(err.Error(), tc.prefix)
			if diff := cmp.Diff(tc.want, got, sortStrings); diff != "" {
				t.Errorf("violations (-want +got):\n%s\nHelm's message:\n%s", diff, err)
			}
		})
	}
}
