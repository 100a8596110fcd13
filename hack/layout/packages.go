package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// modulePath is the module whose packages are mapped.
const modulePath = "kumodo.io/convoy"

// Package is one package of the module, as go list sees it.
type Package struct {
	// ImportPath is the full import path; Rel the path inside the module
	// ("internal/render"; "." for the module's root).
	ImportPath, Rel string
	// Name is the package name; a folder of tests only has the name of its
	// test package without the _test suffix, as go list reports it.
	Name string
	// Command: a main package.
	Command bool
	// Doc is the text of the package doc comment: of the non-test files, or, for a
	// folder of tests only, of its test files. Empty when there is none.
	Doc string
	// Imports are the packages the non-test files import; Deps every package they
	// depend on, transitively (standard library included).
	Imports, Deps []string
}

// listed is the part of go list -json that Load reads.
type listed struct {
	ImportPath, Name, Dir                        string
	GoFiles, CgoFiles, TestGoFiles, XTestGoFiles []string
	Imports, Deps                                []string
	Error                                        *struct{ Err string }
}

// RepoRoot is the folder of the module's go.mod above the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			bytes.HasPrefix(data, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// Load lists the packages of the module at root (go list ./...: other modules below
// it, such as hack/kube, and testdata folders are not part of it), sorted by path.
func Load(root string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-e",
		"-json=ImportPath,Name,Dir,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Imports,Deps,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list ./... in %s: %w: %s", root, err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("read go list's output: %w", err)
		}
		if l.Error != nil {
			return nil, fmt.Errorf("go list %s: %s", l.ImportPath, l.Error.Err)
		}
		rel, ok := strings.CutPrefix(l.ImportPath, modulePath+"/")
		if !ok {
			if l.ImportPath != modulePath {
				return nil, fmt.Errorf("go list ./... in %s listed %s, not a package of %s", root, l.ImportPath, modulePath)
			}
			rel = "."
		}
		files := append(append([]string(nil), l.GoFiles...), l.CgoFiles...)
		if len(files) == 0 {
			files = append(append(files, l.TestGoFiles...), l.XTestGoFiles...)
		}
		text, err := packageDoc(l.Dir, files)
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, Package{
			ImportPath: l.ImportPath, Rel: rel, Name: l.Name, Command: l.Name == "main",
			Doc: text, Imports: l.Imports, Deps: l.Deps,
		})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Rel < pkgs[j].Rel })
	return pkgs, nil
}

// packageDoc returns the package doc comment of the first of files (doc.go first)
// that has one.
func packageDoc(dir string, files []string) (string, error) {
	sort.SliceStable(files, func(i, j int) bool { return files[i] == "doc.go" && files[j] != "doc.go" })
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return "", err
		}
		if f.Doc != nil {
			return f.Doc.Text(), nil
		}
	}
	return "", nil
}
