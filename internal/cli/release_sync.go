package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

type syncOptions struct {
	force   bool
	wait    bool
	timeout time.Duration
	output  string
}

func newReleaseSyncCommand(o *Options) *cobra.Command {
	var so syncOptions
	cmd := &cobra.Command{
		Use:   "sync NAME [--force] [--wait] [--timeout 5m]",
		Short: "Request a sync of a Release (POST releases/NAME/sync) and print the time written",
		Long: "Request a sync: POST releases/NAME/sync writes the current time to the annotation " +
			v1.AnnotationSyncRequestedAt + ". In manual mode convoy applies the current render at the next reconcile.\n\n" +
			"--force also writes " + v1.AnnotationSyncForceRequestedAt + ": the next reconcile skips the pre-apply " +
			"dry run and starts a new rollout.\n\n" +
			"--wait follows the reconcile until the request is handled (exit 0), the Release says why it fails or " +
			"is held (exit 1), or --timeout passes (exit 1).",
		Example:           "  kubectl convoy release sync podinfo\n  kubectl convoy release sync podinfo --force --wait --timeout 10m",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeReleaseNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.runSync(cmd.Context(), args, so)
		},
	}
	cmd.Flags().BoolVar(&so.force, "force", false, "also request a forced sync: skip the pre-apply dry run, start a new rollout")
	cmd.Flags().BoolVar(&so.wait, "wait", false, "follow the reconcile until the request is handled or fails")
	cmd.Flags().DurationVar(&so.timeout, "timeout", 5*time.Minute, "with --wait: how long to wait")
	addOutputFlag(cmd, &so.output)
	return cmd
}

func (o *Options) runSync(ctx context.Context, args []string, so syncOptions) error {
	if err := checkOutputFormat(so.output); err != nil {
		return err
	}
	if so.timeout <= 0 {
		return usageErrorf("--timeout must be more than 0, got %s", so.timeout)
	}
	ns, name, c, err := o.releaseArg(args)
	if err != nil {
		return err
	}
	rel, err := c.Sync(ctx, ns, name, so.force)
	if err != nil {
		return err
	}
	value := rel.Annotations[v1.AnnotationSyncRequestedAt]
	if so.output != "" {
		if err := printObject(o.Streams.Out, so.output, rel); err != nil {
			return err
		}
	} else {
		what := "sync"
		if so.force {
			what = "forced sync"
		}
		fmt.Fprintf(o.Streams.Out, "release.%s/%s %s requested at %s\n", v1.GroupName, name, what, value)
	}
	if !so.wait {
		return nil
	}
	at, err := v1.ParseSyncTime(value)
	if err != nil {
		return fmt.Errorf("the server wrote %s=%q: %w", v1.AnnotationSyncRequestedAt, value, err)
	}
	w := SyncWait{At: at, Force: so.force, Baseline: statusFingerprint(rel)}
	// Progress goes to stderr when stdout carries -o output.
	out := o.Streams.Out
	if so.output != "" {
		out = o.Streams.ErrOut
	}
	return o.waitSync(ctx, c, ns, name, w, so.timeout, out)
}

// errWaitFailed marks the failures of --wait (exit 1), already explained on out.
var errWaitFailed = errors.New("the sync did not succeed")

// waitSync polls the Release until w is handled or failed, or timeout passes,
// writing progress to out.
func (o *Options) waitSync(ctx context.Context, c *Client, ns, name string, w SyncWait, timeout time.Duration, out io.Writer) error {
	term := o.Terminal(out)
	p := &Progress{Terminal: term}
	start := o.Now()
	// The timeout is a timer, not a context deadline: a read that starts before it
	// runs to its end, so the last state is reported rather than a client error.
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	ticker := time.NewTicker(o.PollInterval)
	defer ticker.Stop()
	last := ""
	for {
		rel, err := c.GetRelease(ctx, ns, name)
		if err != nil {
			return err
		}
		now := o.Now()
		outcome, msg := w.Judge(rel, now)
		var b strings.Builder
		switch outcome {
		case Handled:
			p.Finish(&b, term.paint(ansiGreen, "✓")+" "+msg)
		case Failed:
			p.Finish(&b, term.paint(ansiRed, "✗")+" "+msg)
		default:
			last = ProgressLine(rel, 0, 0, Terminal{})
			p.Update(&b, ProgressLine(rel, now.Sub(start), width(out), term), last)
		}
		_, _ = io.WriteString(out, b.String())
		switch outcome {
		case Handled:
			return nil
		case Failed:
			return fmt.Errorf("release %s/%s: %w", ns, name, errWaitFailed)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			b.Reset()
			p.Finish(&b, term.paint(ansiRed, "✗")+" "+fmt.Sprintf("timed out after %s waiting for the sync of %s/%s; last: %s", timeout, ns, name, last))
			_, _ = io.WriteString(out, b.String())
			return fmt.Errorf("release %s/%s: timed out after %s: %w", ns, name, timeout, errWaitFailed)
		case <-ticker.C:
		}
	}
}

// width is the terminal's width, 0 when unknown.
func width(out io.Writer) int {
	f, ok := out.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}
