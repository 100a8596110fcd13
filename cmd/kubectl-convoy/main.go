// Command kubectl-convoy is the kubectl plugin of convoy: `kubectl convoy release sync
// podinfo`. It also runs alone. See docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"kumodo.io/convoy/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.StdStreams(), os.Getenv)
	stop()
	os.Exit(code)
}
