package main

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"kumodo.io/convoy/hack/clidocs"
	"kumodo.io/convoy/internal/localcluster"
)

var updateReference = flag.Bool("update-reference", false, "rewrite docs/reference/convoy from the command tree")

// The operators' flag reference, docs/reference/convoy/*.md, is generated from this
// command tree (make generate runs this test with -update-reference); it fails when
// the committed pages are stale.
func TestCLIReferenceIsCurrent(t *testing.T) {
	repo, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pages, err := clidocs.Pages(newRootCommand(), clidocs.Portable(repo))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repo, "docs", "reference", "convoy")
	if *updateReference {
		if err := clidocs.Write(dir, pages); err != nil {
			t.Fatal(err)
		}
		return
	}
	stale, err := clidocs.Stale(dir, pages)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("docs/reference/convoy is stale; run make generate:\n%s", strings.Join(stale, "\n"))
	}
}
