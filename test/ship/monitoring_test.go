package ship_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/hack/chart"
)

// promQL is one expression of the alerts or the dashboard, and where it is.
type promQL struct {
	where, expr string
}

// alertExprs are the expressions of alerts/convoy.rules.yaml (Prometheus' rule file
// format), each with its alert name; the `for` durations must parse too.
func alertExprs(t *testing.T) []promQL {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), chart.Dir, "alerts", "convoy.rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		t.Fatalf("alerts/convoy.rules.yaml: %v", err)
	}
	var out []promQL
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %+v needs alert, expr, a severity label and a summary", r)
			}
			if r.For != "" {
				if _, err := model.ParseDuration(r.For); err != nil {
					t.Errorf("alert %s: for %q: %v", r.Alert, r.For, err)
				}
			}
			out = append(out, promQL{where: "alert " + r.Alert, expr: r.Expr})
		}
	}
	return out
}

// dashboardExprs are the queries of every panel of dashboards/convoy.json.
func dashboardExprs(t *testing.T) []promQL {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), chart.Dir, "dashboards", "convoy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboards/convoy.json: %v", err)
	}
	var out []promQL
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			out = append(out, promQL{where: "panel " + p.Title, expr: q.Expr})
		}
	}
	return out
}

// metricNames parses expr with Prometheus' own PromQL parser and returns the metric
// names its selectors name.
func metricNames(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
					names = append(names, m.Value)
				}
			}
		}
		return nil
	})
	if len(names) == 0 {
		return nil, fmt.Errorf("names no metric")
	}
	return names, nil
}

// Every expression of the alerts and the dashboard parses with Prometheus' parser
// and names its metrics (needs no control plane).
func TestAlertsAndDashboardParse(t *testing.T) {
	exprs := append(alertExprs(t), dashboardExprs(t)...)
	if len(exprs) < 20 {
		t.Fatalf("%d expressions, want the alerts and the dashboard's queries", len(exprs))
	}
	for _, q := range exprs {
		if _, err := metricNames(q.expr); err != nil {
			t.Errorf("%s: %q: %v", q.where, q.expr, err)
		}
	}
	// The parser is the real one: a broken expression fails.
	if _, err := metricNames(`sum(rate(convoy_release_sync_pending[5m])`); err == nil {
		t.Errorf("an unbalanced expression parsed")
	}
}

// syntheticMetrics are series Prometheus makes itself, not a process.
var syntheticMetrics = []string{"up"}

// Every metric that an alert or a dashboard panel names is exported by the
// running convoy processes of the installed chart (their /metrics, read after a
// Release was reconciled, so that the per-reason series exist), except `up`.
func TestAlertsAndDashboardNameExportedMetrics(t *testing.T) {
	in := install(t)
	reconciledRelease(t, in)
	exported := map[string]bool{}
	for dep, url := range in.metrics {
		client := http.DefaultClient
		if strings.HasPrefix(url, "https:") {
			client = adminClient()
		}
		for name := range scrape(t, client, url) {
			exported[name] = true
		}
		t.Logf("%s: %s", dep, url)
	}
	for _, m := range []string{"convoy_release_reconcile_duration_seconds_count", "convoy_observer_status_writes_total", "apiserver_request_total"} {
		if !exported[m] {
			t.Fatalf("the processes do not export %s: the scrape is incomplete", m)
		}
	}
	for _, q := range append(alertExprs(t), dashboardExprs(t)...) {
		names, err := metricNames(q.expr)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		for _, n := range names {
			if !exported[n] && !slices.Contains(syntheticMetrics, n) {
				t.Errorf("%s names %s, which no convoy process exports", q.where, n)
			}
		}
	}
}

// scrape reads the Prometheus text of url and returns the names of its series,
// with the _bucket, _sum and _count series of histograms and summaries.
func scrape(t *testing.T, client *http.Client, url string) map[string]bool {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t, 30*time.Second), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	tp := expfmt.NewTextParser(model.LegacyValidation)
	families, err := tp.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	names := map[string]bool{}
	for name, f := range families {
		names[name] = true
		switch f.GetType().String() {
		case "HISTOGRAM", "GAUGE_HISTOGRAM":
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case "SUMMARY":
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	return names
}

// Decision 0151: a dead or stuck observer shows before the users see it: an alert and a
// dashboard panel on the Releases whose wait on the observer's assessment is overdue
// (needs no control plane).
func TestObserverAssessmentOverdueAlertAndPanel(t *testing.T) {
	const metric = "convoy_release_assessment_overdue"
	found := map[string]bool{}
	for _, q := range append(alertExprs(t), dashboardExprs(t)...) {
		names, err := metricNames(q.expr)
		if err != nil {
			continue // TestAlertsAndDashboardParse reports it
		}
		if slices.Contains(names, metric) {
			found[q.where] = true
		}
	}
	for _, want := range []string{"alert ConvoyObserverAssessmentOverdue", "panel Releases whose observer assessment is overdue"} {
		if !found[want] {
			t.Errorf("no %s on %s (found %v)", want, metric, found)
		}
	}
}
