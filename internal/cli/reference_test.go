package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"kumodo.io/convoy/hack/clidocs"
	"kumodo.io/convoy/internal/localcluster"
)

// docs/reference/kubectl-convoy/*.md is generated from this command tree by
// hack/gen-cli-docs (make generate); the test fails when the committed pages are
// stale. The tree is built as hack/gen-cli-docs builds it.
func TestCLIReferenceIsCurrent(t *testing.T) {
	repo, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{
		ConfigFlags:  genericclioptions.NewConfigFlags(true),
		Streams:      genericiooptions.NewTestIOStreamsDiscard(),
		Getenv:       func(string) string { return "" },
		Now:          time.Now,
		PollInterval: time.Second,
	}
	root := NewCommand(o)
	root.InitDefaultCompletionCmd()
	pages, err := clidocs.Pages(root, clidocs.Portable(repo))
	if err != nil {
		t.Fatal(err)
	}
	stale, err := clidocs.Stale(filepath.Join(repo, "docs", "reference", "kubectl-convoy"), pages)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("docs/reference/kubectl-convoy is stale; run make generate:\n%s", strings.Join(stale, "\n"))
	}
}
