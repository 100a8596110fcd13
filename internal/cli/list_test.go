package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// An operator sees the same render ref in `kubectl convoy release list` and in
// `kubectl get releases` (convoy apiserver's table, printed by the real kubectl).
func TestReleaseListRenderColumnMatchesKubectlGet(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	createRelease(t, ns, "new")
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Render = &v1.RenderStatus{Ref: refB, ChartVersion: "6.7.1"}
	})

	res := plugin(t, nil, "release", "list", "-n", ns)
	if res.code != 0 {
		t.Fatalf("release list: exit %d, stderr %s", res.code, res.stderr)
	}
	cmd := exec.CommandContext(testCtx(t), filepath.Join(env.cluster.BinDir(), "kubectl"),
		"--kubeconfig", env.kubeconfig, "get", "releases", "-n", ns)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get releases: %v\n%s", err, out)
	}
	plugin, kubectl := tableCells(t, res.stdout, "RENDER"), tableCells(t, string(out), "RENDER")
	if plugin["podinfo"] != "9a2b0c1d2e" || plugin["podinfo"] != kubectl["podinfo"] {
		t.Errorf("RENDER of podinfo: release list %q, kubectl get releases %q, want both 9a2b0c1d2e\n%s\n%s",
			plugin["podinfo"], kubectl["podinfo"], res.stdout, out)
	}
	// Without a render, kubectl leaves the cell empty and the plugin shows "-".
	if plugin["new"] != "-" || kubectl["new"] != "" {
		t.Errorf("RENDER of new: release list %q, kubectl get releases %q", plugin["new"], kubectl["new"])
	}
}

// tableCells returns, for each row of a kubectl-style table (columns at least two
// spaces apart, headers never empty), the cell of column by the row's NAME.
func tableCells(t *testing.T, table, column string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	header := lines[0]
	start, name := strings.Index(header, column), strings.Index(header, "NAME")
	if start < 0 || name < 0 {
		t.Fatalf("no %s or NAME column in\n%s", column, table)
	}
	cell := func(line string, at int) string {
		if at >= len(line) {
			return ""
		}
		s := line[at:]
		if i := strings.Index(s, "  "); i >= 0 {
			s = s[:i]
		}
		return strings.TrimSpace(s)
	}
	cells := map[string]string{}
	for _, line := range lines[1:] {
		cells[cell(line, name)] = cell(line, start)
	}
	return cells
}
