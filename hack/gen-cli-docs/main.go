// Command gen-cli-docs writes the command reference of kubectl-convoy, one Markdown
// page per command, from its cobra command tree (internal/cli) with
// github.com/spf13/cobra/doc.
//
//	go run ./hack/gen-cli-docs [-out docs/reference/kubectl-convoy]
//
// hack/update-codegen.sh runs it; internal/cli's TestCLIReferenceIsCurrent fails
// when the committed pages differ from what it writes.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"kumodo.io/convoy/hack/clidocs"
	"kumodo.io/convoy/internal/cli"
	"kumodo.io/convoy/internal/localcluster"
)

func main() {
	out := flag.String("out", "docs/reference/kubectl-convoy", "folder of the pages; other *.md files in it are removed")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen-cli-docs:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	repo, _ := localcluster.RepoRoot()
	pages, err := clidocs.Pages(command(), clidocs.Portable(repo))
	if err != nil {
		return err
	}
	return clidocs.Write(out, pages)
}

// command is kubectl-convoy's command tree as cmd/kubectl-convoy runs it, with the
// completion command cobra adds at run time. internal/cli's reference test builds
// the same tree.
func command() *cobra.Command {
	o := &cli.Options{
		ConfigFlags:  genericclioptions.NewConfigFlags(true),
		Streams:      genericiooptions.NewTestIOStreamsDiscard(),
		Getenv:       func(string) string { return "" },
		Now:          time.Now,
		PollInterval: time.Second,
	}
	root := cli.NewCommand(o)
	root.InitDefaultCompletionCmd()
	return root
}
