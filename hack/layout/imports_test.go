package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// architecturePage holds the layer and package tables that TestLayers checks.
const architecturePage = "docs/architecture.md"

// mod is the prefix of the module's import paths in the rules below.
const mod = modulePath + "/"

// Import path patterns of the rules: a path ending in "/..." covers the path and
// every package below it; any other is one package.
var (
	clientGo          = "k8s.io/client-go/..."
	controllerRuntime = "sigs.k8s.io/controller-runtime/..."
	helm              = "helm.sh/helm/..."
	ssa               = "github.com/fluxcd/pkg/ssa/..."
	// helmRender are Helm's packages that render charts or install them: convoy
	// renders with them in internal/render only.
	helmRender = []string{"helm.sh/helm/v4/pkg/engine/...", "helm.sh/helm/v4/pkg/action/...", "helm.sh/helm/v4/pkg/kube/..."}
	// helmFetch are Helm's packages that reach chart repositories and registries:
	// convoy fetches with them in internal/source only.
	helmFetch = []string{"helm.sh/helm/v4/pkg/repo/...", "helm.sh/helm/v4/pkg/registry/...",
		"helm.sh/helm/v4/pkg/getter/...", "helm.sh/helm/v4/pkg/downloader/..."}
	// fetching are the packages that reach chart sources: internal/source, Helm's
	// repository and registry clients, go-git, the OCI client.
	fetching = append([]string{mod + "internal/source", "github.com/go-git/...", "oras.land/..."}, helmFetch...)
	// testSupport are the packages that start local control planes and test servers.
	testSupport = []string{mod + "internal/localcluster", mod + "internal/testenv/...", mod + "internal/dev/...",
		mod + "internal/apiserver/apiservertest", mod + "internal/render/charttest", mod + "internal/render/gittest"}
)

// importRule forbids the packages pkgs (minus except) to import, or to depend on,
// what forbid names (minus allow).
type importRule struct {
	pkgs, except []string
	// direct: only the package's own imports count; else every package it depends on.
	direct        bool
	forbid, allow []string
	// why is where the rule is written.
	why string
}

// importRules are the rules of the packages' doc comments and of docs/architecture.md
// ("Import rules"), stated as the code follows them.
var importRules = []importRule{
	{
		pkgs:   []string{mod + "api/..."},
		forbid: []string{mod + "internal/...", mod + "cmd/...", clientGo, controllerRuntime, helm},
		why:    "api/v1alpha1/doc.go: the package only describes the API",
	},
	{
		pkgs: []string{mod + "internal/observer/health", mod + "internal/manifest", mod + "internal/reasons", mod + "internal/gz",
			mod + "internal/releaseset/clustervars", mod + "internal/apiserver/validation"},
		forbid: []string{clientGo, controllerRuntime, helm, ssa, "k8s.io/apiserver/...", "go.etcd.io/..."},
		why: "their doc comments: no I/O of any kind (health), must not import Helm (manifest), no I/O (reasons), " +
			"every function is pure (validation); docs/architecture.md: the core layer",
	},
	{
		pkgs:   []string{mod + "internal/policy", mod + "internal/hooks"},
		direct: true,
		forbid: []string{clientGo, controllerRuntime, helm, ssa, "k8s.io/apiserver/..."},
		// The hook annotations' names and Helm's hook types; nothing of Helm that does I/O.
		allow: []string{"helm.sh/helm/v4/pkg/release/..."},
		why: "internal/policy/doc.go: no API server or cluster client, no Helm; internal/hooks/hooks.go: it does no I/O " +
			"(internal/hooks names Helm's hook annotations with Helm's own constants, so both link Helm's release package)",
	},
	{
		pkgs:   []string{mod + "internal/policy"},
		direct: true,
		forbid: []string{"helm.sh/helm/..."},
		why:    "internal/policy/doc.go: no Helm",
	},
	{
		pkgs: []string{mod + "..."},
		// Test harnesses (test/...) package and serve charts of their own, as hack/chart does.
		except: []string{mod + "internal/render", mod + "hack/chart", mod + "test/..."},
		direct: true,
		forbid: helmRender,
		why:    "internal/render/doc.go: the only package of convoy that renders with Helm",
	},
	{
		pkgs: []string{mod + "..."},
		// The test and dev chart servers serve what internal/source fetches; the harnesses
		// under test/ publish charts into the repositories they serve.
		except: []string{mod + "internal/source", mod + "internal/render/chartrepo", mod + "internal/render/charttest", mod + "test/..."},
		direct: true,
		forbid: helmFetch,
		why:    "internal/source/doc.go: it alone reaches chart repositories and registries",
	},
	{
		pkgs:   []string{mod + "api/...", mod + "cmd/...", mod + "internal/..."},
		except: []string{mod + "internal/source", mod + "internal/verify", mod + "internal/render/gittest"},
		direct: true,
		forbid: []string{"github.com/go-git/..."},
		why:    "internal/source/doc.go: it alone reads Git repositories (internal/verify checks the commits it fetched; internal/render/gittest serves them to tests)",
	},
	{
		pkgs:   []string{mod + "internal/render"},
		forbid: fetching,
		why:    "internal/render/doc.go: it fetches nothing; it takes the chart internal/source fetched",
	},
	{
		pkgs:   []string{mod + "internal/render"},
		direct: true,
		forbid: []string{"net", "net/http/..."},
		why:    "internal/render/doc.go: it fetches nothing, and talks to no server",
	},
	{
		pkgs:   []string{mod + "internal/source"},
		forbid: append([]string{mod + "internal/render", mod + "internal/controller", mod + "internal/releaseset", controllerRuntime}, helmRender...),
		why:    "internal/source/doc.go: it does not load or template charts and reads nothing on a cluster",
	},
	{
		pkgs:   []string{mod + "..."},
		except: []string{mod + "internal/fromhelm"},
		direct: true,
		forbid: []string{"helm.sh/helm/v4/pkg/storage/..."},
		why:    "internal/fromhelm/doc.go: Storage reads and writes Helm's records through Helm's own Secrets storage driver",
	},
	{
		pkgs:   []string{mod + "internal/controller"},
		direct: true,
		forbid: []string{helm},
		why:    "internal/controller/doc.go: it must not call Helm",
	},
	{
		pkgs:   []string{mod + "..."},
		except: []string{mod + "internal/apply", mod + "internal/diff"},
		direct: true,
		forbid: []string{ssa},
		why: "internal/apply/doc.go: the only package that writes to a target cluster (server-side apply); " +
			"internal/diff/doc.go: a server-side apply dry run of the rendered object",
	},
	{
		pkgs:   []string{mod + "internal/render"},
		forbid: []string{mod + "internal/apply", mod + "internal/targets", mod + "internal/controller", controllerRuntime},
		why:    "internal/render/doc.go: it must not apply, delete or read anything on a cluster",
	},
	{
		pkgs:   []string{mod + "internal/apply"},
		forbid: []string{mod + "internal/targets", mod + "internal/render", mod + "internal/controller", mod + "internal/observer/..."},
		why:    "internal/apply/doc.go: it must not decide when to apply; it knows nothing of how that client was made",
	},
	{
		pkgs:   []string{mod + "internal/diff", mod + "internal/observer/drift"},
		forbid: []string{mod + "internal/apply", mod + "internal/targets"},
		why:    "internal/diff/doc.go, internal/observer/drift/doc.go: it never writes; it knows nothing of how the target client was made",
	},
	{
		pkgs:   []string{mod + "internal/targets"},
		forbid: []string{mod + "internal/apply", mod + "internal/render", mod + "internal/policy"},
		why:    "internal/targets/doc.go: it must not apply anything, write any status, or decide when to retry",
	},
	{
		pkgs: []string{mod + "internal/store"},
		forbid: []string{mod + "internal/render/...", mod + "internal/source", mod + "internal/apply", mod + "internal/targets",
			mod + "internal/policy", mod + "internal/controller", mod + "internal/releaseset", mod + "internal/observer/..."},
		why: "internal/store/doc.go: it decides nothing: what to render, keep or prune is the callers'",
	},
	{
		pkgs:   []string{mod + "internal/observer/..."},
		forbid: []string{mod + "internal/apply", mod + "internal/render", mod + "internal/source", mod + "internal/controller"},
		why: "internal/observer/doc.go: it must not apply, patch or delete anything on a target cluster " +
			"(and reads renders without rendering charts: internal/manifest/manifest.go)",
	},
	{
		pkgs:   []string{mod + "internal/controller"},
		forbid: []string{mod + "internal/observer/...", mod + "internal/apiserver/...", mod + "internal/cli", mod + "internal/ui"},
		why:    "docs/architecture.md: the controller and the observer never talk to each other but through the API",
	},
	{
		pkgs:   []string{mod + "internal/apiserver/..."},
		except: []string{mod + "internal/apiserver/apiservertest", mod + "internal/apiserver/integration"},
		// internal/policy, the decision core, is allowed: the server checks the controller's
		// one recording of a namespace's UID with the core's own rule (NamespaceUIDToRecord).
		forbid: []string{mod + "internal/controller", mod + "internal/observer/...", mod + "internal/apply", mod + "internal/targets",
			mod + "internal/render/...", mod + "internal/source", mod + "internal/releaseset"},
		why: "internal/apiserver/doc.go: it never reconciles anything and never talks to target clusters; " +
			"internal/apiserver/registry/releaseset/doc.go: it does not plan or write Releases",
	},
	{
		pkgs:   []string{mod + "internal/cli"},
		forbid: []string{mod + "internal/controller", mod + "internal/observer", mod + "internal/apiserver/..."},
		why:    "internal/cli/doc.go: the package never reconciles anything",
	},
	{
		pkgs: []string{mod + "internal/ui"},
		forbid: []string{mod + "internal/policy", mod + "internal/controller", mod + "internal/observer/...", mod + "internal/apply",
			mod + "internal/render", mod + "internal/releaseset"},
		why: "internal/ui/doc.go: it must not decide anything convoy's controller decides; it shows the API's state",
	},
	{
		pkgs:   []string{mod + "internal/fromhelm", mod + "internal/releaseset"},
		forbid: []string{mod + "internal/apply"},
		why: "internal/fromhelm/doc.go: it must not apply or delete anything else on a cluster; " +
			"internal/releaseset/doc.go: it only ever writes Releases and the ReleaseSet's status",
	},
	{
		pkgs:   []string{mod + "internal/backup"},
		forbid: []string{mod + "...", clientGo, "k8s.io/api/..."},
		why:    "internal/backup/format.go: it knows nothing of Kubernetes objects beyond their apiVersion",
	},
	{
		pkgs: []string{mod + "api/...", mod + "internal/...", mod + "cmd/kubectl-convoy"},
		except: append([]string{mod + "internal/dev", mod + "internal/localcluster", mod + "internal/apiserver/integration",
			mod + "internal/render/chartrepo"}, testSupport...),
		forbid: testSupport,
		why: "internal/localcluster/doc.go: it must never be imported by convoy's production processes; " +
			"internal/dev/dev.go: nothing in production imports it (cmd/convoy does, for convoy dev)",
	},
	{
		pkgs:   []string{mod + "..."},
		except: []string{mod + "internal/apiserver/apiservertest", mod + "internal/testenv/convoytest", mod + "test/...", mod + "bench/..."},
		direct: true,
		forbid: []string{mod + "internal/testenv"},
		why:    "internal/testenv/testenv.go: only tests, test harnesses and benchmarks import it",
	},
}

// matches reports whether path is matched by pattern (see importRule).
func matches(pattern, path string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == tree || strings.HasPrefix(path, tree+"/")
	}
	return path == pattern
}

func matchesAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if matches(p, path) {
			return true
		}
	}
	return false
}

// TestImportRules fails, naming the package and the import, when a package of the
// module imports or depends on what a rule of importRules forbids it. A rule whose
// pkgs match no package fails too, so that a renamed package cannot leave a rule
// that checks nothing.
func TestImportRules(t *testing.T) {
	_, pkgs := modulePackages(t)
	for _, r := range importRules {
		checked := 0
		for _, p := range pkgs {
			if !matchesAny(r.pkgs, p.ImportPath) || matchesAny(r.except, p.ImportPath) {
				continue
			}
			checked++
			deps := p.Deps
			how := "depends on"
			if r.direct {
				deps, how = p.Imports, "imports"
			}
			for _, pattern := range r.forbid {
				var bad []string
				for _, d := range deps {
					if matches(pattern, d) && !matchesAny(r.allow, d) {
						bad = append(bad, d)
					}
				}
				if len(bad) == 0 {
					continue
				}
				// A forbidden package the package imports itself says the most.
				sort.SliceStable(bad, func(i, j int) bool {
					return slices.Contains(p.Imports, bad[i]) && !slices.Contains(p.Imports, bad[j])
				})
				what := bad[0]
				if len(bad) > 1 {
					what = fmt.Sprintf("%s (and %d more of %s)", bad[0], len(bad)-1, pattern)
				}
				t.Errorf("%s %s %s%s, which it must not (%s)", p.Rel, how, what, through(p, pkgs, bad), r.why)
			}
		}
		if checked == 0 {
			t.Errorf("the rule for %v checks no package of the module: fix or remove it (%s)", r.pkgs, r.why)
		}
	}
}

// through names the imports of p that bring in bad, the packages a rule forbids p to
// depend on: those forbidden themselves, and the module's packages that depend on one.
func through(p Package, pkgs []Package, bad []string) string {
	deps := map[string][]string{}
	for _, q := range pkgs {
		deps[q.ImportPath] = q.Deps
	}
	var via []string
	for _, imp := range p.Imports {
		if slices.Contains(bad, imp) {
			continue
		}
		for _, d := range deps[imp] {
			if slices.Contains(bad, d) {
				via = append(via, strings.TrimPrefix(imp, mod))
				break
			}
		}
	}
	if len(via) == 0 {
		return ""
	}
	return " through its imports of " + strings.Join(via, ", ")
}

// The layers of docs/architecture.md, lowest first. support is apart: see layerAllows.
var layerRank = map[string]int{"api": 0, "core": 1, "adapter": 2, "process": 3, "entry": 4, "support": 5}

// layerAllows says whether a package of layer from may import one of layer to:
// its own layer or a lower one; a support package only from entry and support.
func layerAllows(from, to string) bool {
	if to == "support" {
		return from == "entry" || from == "support"
	}
	return from == "support" || layerRank[to] <= layerRank[from]
}

// tableRow reads a row of the package table: | `path` | layer | what | may import |.
var tableRow = regexp.MustCompile("^\\| `((?:api|cmd|internal)/[^`]+)` \\| ([a-z]+) \\| [^|]* \\| ([^|]*) \\|$")

// packageRow is one row of the package table.
type packageRow struct {
	layer     string
	mayImport []string
}

// readPackageTable reads the package table of docs/architecture.md.
func readPackageTable(t *testing.T, root string) map[string]packageRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, architecturePage))
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]packageRow{}
	for _, line := range strings.Split(string(data), "\n") {
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := table[m[1]]; dup {
			t.Errorf("%s lists %s twice", architecturePage, m[1])
		}
		row := packageRow{layer: m[2]}
		if cell := strings.TrimSpace(m[3]); cell != "—" {
			for _, entry := range strings.Split(cell, ",") {
				row.mayImport = append(row.mayImport, strings.TrimSpace(entry))
			}
		}
		table[m[1]] = row
	}
	if len(table) == 0 {
		t.Fatalf("%s has no package table (rows | `internal/…` | layer | what it is | may import |)", architecturePage)
	}
	return table
}

// TestLayers fails when the package table of docs/architecture.md misses a package
// under api/, cmd/ or internal/ (or lists one that is gone), when an entry of its "may
// import" column breaks the layers, and when a package imports a package of the module
// that its row does not allow.
func TestLayers(t *testing.T) {
	root, pkgs := modulePackages(t)
	table := readPackageTable(t, root)
	byRel := map[string]Package{}
	for _, p := range pkgs {
		byRel[p.Rel] = p
	}
	var inLayers []Package
	for _, p := range pkgs {
		if top, _, _ := strings.Cut(p.Rel, "/"); top == "api" || top == "cmd" || top == "internal" {
			inLayers = append(inLayers, p)
			if _, ok := table[p.Rel]; !ok {
				t.Errorf("%s's package table misses %s: add a row (its layer, what it is, what it may import)", architecturePage, p.Rel)
			}
		}
	}
	var rels []string
	for rel := range table {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		row := table[rel]
		if _, ok := byRel[rel]; !ok {
			t.Errorf("%s's package table lists %s, which is no package of the module", architecturePage, rel)
		}
		if _, ok := layerRank[row.layer]; !ok {
			t.Errorf("%s: %s is in the layer %q, which is none of api, core, adapter, process, entry, support", architecturePage, rel, row.layer)
		}
		for _, entry := range row.mayImport {
			if _, isLayer := layerRank[entry]; isLayer {
				if !layerAllows(row.layer, entry) {
					t.Errorf("%s: %s (%s) may import the layer %s: that breaks the layers", architecturePage, rel, row.layer, entry)
				}
				continue
			}
			found := false
			for _, other := range rels {
				if matches(entry, other) {
					found = true
					if o := table[other]; !layerAllows(row.layer, o.layer) {
						t.Errorf("%s: %s (%s) may import %s (%s): that breaks the layers", architecturePage, rel, row.layer, other, o.layer)
					}
				}
			}
			if !found {
				t.Errorf("%s: %s may import %q, which is no layer and no package of the table", architecturePage, rel, entry)
			}
		}
	}
	for _, p := range inLayers {
		row, ok := table[p.Rel]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, mod)
			if !ok {
				continue
			}
			if !mayImport(table, row, dep) {
				t.Errorf("%s imports %s, which its row in %s does not allow (%s); if the import is right, add it to the row's \"may import\" (within the layers)",
					p.Rel, dep, architecturePage, describe(row))
			}
		}
	}
}

// mayImport says whether a package of row may import dep (a path in the module).
func mayImport(table map[string]packageRow, row packageRow, dep string) bool {
	depRow, listed := table[dep]
	for _, entry := range row.mayImport {
		if listed && entry == depRow.layer {
			return true
		}
		if matches(entry, dep) {
			return true
		}
	}
	return false
}

func describe(row packageRow) string {
	if len(row.mayImport) == 0 {
		return fmt.Sprintf("layer %s, may import no package of the module", row.layer)
	}
	return fmt.Sprintf("layer %s, may import %s", row.layer, strings.Join(row.mayImport, ", "))
}
