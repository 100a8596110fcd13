package clidocs

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

func tree() *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "A tool"}
	sub := &cobra.Command{Use: "sub", Short: "A subcommand", Run: func(*cobra.Command, []string) {}}
	sub.Flags().String("dir", "/home/someone/cache", "a folder")
	hidden := &cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub, hidden)
	return root
}

func TestPagesWriteAndStale(t *testing.T) {
	pages, err := Pages(tree(), strings.NewReplacer("/home/someone", "$HOME").Replace)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"tool.md", "tool_sub.md"}, slices.Sorted(maps.Keys(pages))); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	sub := string(pages["tool_sub.md"])
	for _, want := range []string{Header, "## tool sub", `(default "$HOME/cache")`, "[tool](tool.md)"} {
		if !strings.Contains(sub, want) {
			t.Errorf("tool_sub.md lacks %q:\n%s", want, sub)
		}
	}
	if strings.Contains(sub, "Auto generated") {
		t.Errorf("tool_sub.md has a dated footer:\n%s", sub)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, pages); err != nil {
		t.Fatal(err)
	}
	if stale, err := Stale(dir, pages); err != nil || len(stale) > 0 {
		t.Fatalf("right after Write: stale %v, err %v", stale, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "old.md")); !os.IsNotExist(err) {
		t.Errorf("Write kept old.md (err %v)", err)
	}

	_ = os.WriteFile(filepath.Join(dir, "tool.md"), []byte("edited by hand"), 0o644)
	_ = os.Remove(filepath.Join(dir, "tool_sub.md"))
	_ = os.WriteFile(filepath.Join(dir, "tool_gone.md"), []byte("x"), 0o644)
	stale, err := Stale(dir, pages)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"changed: tool.md", "extra: tool_gone.md", "missing: tool_sub.md"}
	if diff := cmp.Diff(want, stale); diff != "" {
		t.Errorf("Stale (-want +got):\n%s", diff)
	}
}
