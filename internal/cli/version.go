package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// version is the release of kubectl-convoy; hack/release stamps it with
// -ldflags "-X kumodo.io/convoy/internal/cli.version=v…". Empty in other builds.
var version string

// Version is the release kubectl-convoy was built as, "dev" when it was not built
// by hack/release.
func Version() string {
	if version == "" {
		return "dev"
	}
	return version
}

func newVersionCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl-convoy",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(o.Streams.Out, "kubectl-convoy %s %s/%s %s\n", Version(), runtime.GOOS, runtime.GOARCH, runtime.Version())
			return err
		},
	}
}
