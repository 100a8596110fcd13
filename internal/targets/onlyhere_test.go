package targets

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// clientConstructors are the functions that build a client from a *rest.Config,
// by import path.
var clientConstructors = map[string][]string{
	"k8s.io/client-go/rest":                              {"RESTClientFor", "UnversionedRESTClientFor", "RESTClientForConfigAndClient", "UnversionedRESTClientForConfigAndClient", "HTTPClientFor"},
	"k8s.io/client-go/kubernetes":                        {"NewForConfig", "NewForConfigAndClient", "NewForConfigOrDie"},
	"k8s.io/client-go/dynamic":                           {"NewForConfig", "NewForConfigAndClient", "NewForConfigOrDie"},
	"k8s.io/client-go/metadata":                          {"NewForConfig", "NewForConfigAndClient", "NewForConfigOrDie"},
	"k8s.io/client-go/discovery":                         {"NewDiscoveryClientForConfig", "NewDiscoveryClientForConfigAndClient", "NewDiscoveryClientForConfigOrDie"},
	"sigs.k8s.io/controller-runtime/pkg/client":          {"New", "NewWithWatch"},
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil":  {"NewDynamicRESTMapper"},
	"sigs.k8s.io/controller-runtime/pkg/cluster":         {"New"},
	"k8s.io/client-go/discovery/cached/disk":             {"NewCachedDiscoveryClientForConfig"},
	"k8s.io/client-go/scale":                             {"NewForConfig"},
	"k8s.io/client-go/kubernetes/typed/core/v1":          {"NewForConfig", "NewForConfigAndClient"},
	"k8s.io/client-go/kubernetes/typed/apps/v1":          {"NewForConfig", "NewForConfigAndClient"},
	"k8s.io/client-go/kubernetes/typed/batch/v1":         {"NewForConfig", "NewForConfigAndClient"},
	"k8s.io/client-go/kubernetes/typed/rbac/v1":          {"NewForConfig", "NewForConfigAndClient"},
	"k8s.io/client-go/kubernetes/typed/authorization/v1": {"NewForConfig", "NewForConfigAndClient"},
}

// clientBuilders are the places outside internal/targets that may build a
// client, each with why it is not a client for a target cluster acting for a
// Release. A directory (ending in "/") covers every file below it.
var clientBuilders = map[string]string{
	"internal/targets/":               "the one place that builds clients for target clusters",
	"internal/observer/sync.go":       "convoy's own API on the host (/sync), not a target cluster",
	"internal/hostmanager/waitapi.go": "convoy's own API in the host's discovery, read at start, not a target cluster",
	"internal/apiserver/":             "convoy apiserver registering itself on the host (APIService)",
	"internal/cli/":                   "kubectl convoy: the user's own kubeconfig and identity",
	"internal/ui/":                    "kubectl convoy ui: the user's own kubeconfig and identity",
	"internal/dev/":                   "convoy dev: the local control plane's admin, for setting it up",
	"internal/localcluster/":          "the local control plane's admin, for starting it",
	"internal/testenv/":               "tests' admin clients",
	"bench/":                          "benchmarks' admin clients",
	"test/":                           "tests' admin clients",
}

// TestOnlyClustersBuildsTargetClients fails when a non-test Go file of the module
// outside internal/targets (and the listed host-only places) builds a Kubernetes
// client: every request to a target cluster must go through internal/targets,
// which chooses the identity (impersonation) it is made as. A new entry in
// clientBuilders needs a reason why the client is not one for a target cluster.
func TestOnlyClustersBuildsTargetClients(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root: %v", err)
	}
	var got []string
	used := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// Other modules (hack/kube has its own go.mod), tools' output, dependencies.
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" ||
				rel == "bin" || rel == "hack") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		calls, err := constructorCalls(p)
		if err != nil {
			return err
		}
		if len(calls) == 0 {
			return nil
		}
		if allowed := allowedBuilder(rel); allowed != "" {
			used[allowed] = true
			return nil
		}
		for _, c := range calls {
			got = append(got, rel+": "+c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string(nil), got); diff != "" {
		t.Errorf("client constructors outside internal/targets (-want +got); get the client from a clusters.Target "+
			"(Resolve, Host) instead, or, for a client that is not for a target cluster, add the place to clientBuilders with the reason:\n%s", diff)
	}
	var stale []string
	for place := range clientBuilders {
		if !used[place] {
			stale = append(stale, place)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("clientBuilders lists places that build no client any more: remove them: %v", stale)
	}
}

// allowedBuilder returns the clientBuilders entry that covers the file rel, or "".
func allowedBuilder(rel string) string {
	for place := range clientBuilders {
		if place == rel || (strings.HasSuffix(place, "/") && strings.HasPrefix(rel, place)) {
			return place
		}
	}
	return ""
}

// constructorCalls lists the calls of clientConstructors in the Go file p, as
// "importpath.Func" at their line.
func constructorCalls(p string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	imports := map[string]string{} // local name to import path
	for _, spec := range f.Imports {
		ip, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, err
		}
		if _, ok := clientConstructors[ip]; !ok {
			continue
		}
		name := path.Base(ip)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		imports[name] = ip
	}
	if len(imports) == 0 {
		return nil, nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		ip, ok := imports[x.Name]
		if !ok {
			return true
		}
		for _, fn := range clientConstructors[ip] {
			if sel.Sel.Name == fn {
				out = append(out, ip+"."+fn+" at line "+strconv.Itoa(fset.Position(sel.Pos()).Line))
			}
		}
		return true
	})
	return out, nil
}
