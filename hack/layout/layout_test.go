package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	loadOnce sync.Once
	loaded   []Package
	loadErr  error
	rootDir  string
)

// modulePackages lists the module's packages once for the package's tests.
func modulePackages(t *testing.T) (string, []Package) {
	t.Helper()
	loadOnce.Do(func() {
		if rootDir, loadErr = RepoRoot(); loadErr == nil {
			loaded, loadErr = Load(rootDir)
		}
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return rootDir, loaded
}

// rowPath reads the package folder of a row of the section.
var rowPath = regexp.MustCompile("^\\| \\[`([^`]+)`\\]")

// rows maps each package folder of section to its row.
func rows(section string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if m := rowPath.FindStringSubmatch(line); m != nil {
			out[m[1]] = line
		}
	}
	return out
}

// TestLayoutIsCurrent fails when the Layout section of docs/development.md misses a
// package of the module, lists one that is gone, or says something else than the first
// sentence of a package's doc comment.
func TestLayoutIsCurrent(t *testing.T) {
	root, pkgs := modulePackages(t)
	want, err := Section(pkgs)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Current(string(data))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	if got == want {
		return
	}
	wantRows, gotRows := rows(want), rows(got)
	var missing, gone, stale []string
	for path, row := range wantRows {
		switch have, ok := gotRows[path]; {
		case !ok:
			missing = append(missing, path)
		case have != row:
			stale = append(stale, path+"\n    has:  "+have+"\n    want: "+row)
		}
	}
	for path := range gotRows {
		if _, ok := wantRows[path]; !ok {
			gone = append(gone, path)
		}
	}
	sort.Strings(missing)
	sort.Strings(gone)
	sort.Strings(stale)
	for _, p := range missing {
		t.Errorf("%s's Layout misses the package %s", page, p)
	}
	for _, p := range gone {
		t.Errorf("%s's Layout lists %s, which is no package of the module", page, p)
	}
	for _, p := range stale {
		t.Errorf("%s's Layout is stale for %s", page, p)
	}
	if len(missing)+len(gone)+len(stale) == 0 {
		t.Errorf("%s's Layout lists every package as it should, but not in the generated order or form", page)
	}
	t.Log("run go run ./hack/layout to rewrite the section from the packages' doc comments")
}

// TestEveryPackageHasADocComment fails when a package of the module has no package
// doc comment, or one that does not begin as go doc expects: "Package <name> …", or
// "Command <folder> …" for a main package.
func TestEveryPackageHasADocComment(t *testing.T) {
	_, pkgs := modulePackages(t)
	for _, p := range pkgs {
		prefixes := []string{"Package " + p.Name + " ", "Package " + p.Name + "_test "}
		if p.Command {
			prefixes = []string{"Command " + filepath.Base(p.Rel) + " "}
		}
		ok := false
		for _, prefix := range prefixes {
			ok = ok || strings.HasPrefix(p.Doc, prefix)
		}
		switch {
		case p.Doc == "":
			t.Errorf("%s has no package doc comment: add one (doc.go) whose first sentence says what the package is, beginning %q",
				p.Rel, prefixes[0])
		case !ok:
			t.Errorf("%s's package doc comment begins %q, not %q", p.Rel, firstWords(p.Doc), prefixes[0])
		}
	}
}

func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}
