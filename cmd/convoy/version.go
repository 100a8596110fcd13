package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and revision are what hack/image stamps with -ldflags
// "-X main.version=v… -X main.revision=<commit>". Empty in other builds.
var version, revision string

// buildVersion is the version convoy was built as ("dev" when it was not stamped)
// and its commit (from the stamp, else from the Go build's VCS information, else
// "unknown").
func buildVersion() (v, rev string) {
	v, rev = version, revision
	if v == "" {
		v = "dev"
	}
	if rev == "" {
		rev = "unknown"
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" {
					rev = s.Value
				}
			}
		}
	}
	return v, rev
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and platform convoy was built for",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, rev := buildVersion()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "convoy %s %s %s/%s %s\n", v, rev, runtime.GOOS, runtime.GOARCH, runtime.Version())
			return err
		},
	}
}
