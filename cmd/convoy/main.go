// Command convoy runs convoy's processes: apiserver, controller, observer,
// and dev (all of them on a local control plane), and backs up and restores
// convoy's etcd (backup, restore).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "convoy",
		Short:         "convoy delivers Helm charts to Kubernetes clusters under a sync policy",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newAPIServerCommand())
	root.AddCommand(newBackupCommand())
	root.AddCommand(newRestoreCommand())
	root.AddCommand(newDevCommand())
	root.AddCommand(newControllerCommand())
	root.AddCommand(newObserverCommand())
	root.AddCommand(newVersionCommand())
	return root
}
