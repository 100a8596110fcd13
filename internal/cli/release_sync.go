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
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

type syncOptions struct {
	force     bool
	render    string
	anyRender bool
	wait      bool
	timeout   time.Duration
	output    string
}

func newReleaseSyncCommand(o *Options) *cobra.Command {
	var so syncOptions
	cmd := &cobra.Command{
		Use:   "sync NAME [--render REF | --any-render] [--force] [--wait] [--timeout 5m]",
		Short: "Approve the current render of a Release (POST releases/NAME/sync?render=REF) and print it",
		Long: "Request a sync that approves one render: POST releases/NAME/sync?render=REF writes the current time to the annotation " +
			v1.AnnotationSyncRequestedAt + " and REF to " + v1.AnnotationSyncRequestedRender + ". " +
			"REF is the Release's current render (status.render.ref), the one `kubectl convoy release diff NAME` shows; " +
			"--render names it explicitly (the full ref or its 10-digit short form). " +
			"In manual mode convoy applies that render at the next reconcile, and only that render: " +
			"if the render changes first, the request waits for a new approval. " +
			"The server refuses a render that is not the current one (nor the pinned one) and nothing is written.\n\n" +
			"--any-render sends the plain POST releases/NAME/sync, which approves whatever render is current when " +
			"the request is handled.\n\n" +
			"--force also writes " + v1.AnnotationSyncForceRequestedAt + ": the next reconcile skips the pre-apply " +
			"dry run and starts a new rollout.\n\n" +
			"--wait follows the reconcile until the request is handled (exit 0), the Release says why it fails or " +
			"is held, or that the render changed before it was applied (exit 1), or --timeout passes (exit 1).",
		Example: "  kubectl convoy release sync podinfo\n" +
			"  kubectl convoy release sync podinfo --render 9a2b0c1d2e --wait\n" +
			"  kubectl convoy release sync podinfo --any-render\n" +
			"  kubectl convoy release sync podinfo --force --wait --timeout 10m",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeReleaseNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.runSync(cmd.Context(), args, so)
		},
	}
	cmd.Flags().BoolVar(&so.force, "force", false, "also request a forced sync: skip the pre-apply dry run, start a new rollout")
	cmd.Flags().StringVar(&so.render, "render", "", "approve this render (sha256:<64 hex> or its 10-digit short form) instead of the current one; refused unless it is current or pinned")
	cmd.Flags().BoolVar(&so.anyRender, "any-render", false, "send the plain /sync: approve whatever render is current when the request is handled")
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
	if so.render != "" && so.anyRender {
		return usageErrorf("--render and --any-render exclude each other: --render approves one render, --any-render any")
	}
	if so.render != "" {
		if p := v1.RenderRef(so.render).ShortProblem(); p != "" {
			return usageErrorf("--render must be a render ref, sha256: and 64 hex digits or its first 10 hex digits, got %q: %s", so.render, p)
		}
	}
	ns, name, c, err := o.releaseArg(args)
	if err != nil {
		return err
	}
	render := so.render
	if render == "" && !so.anyRender {
		if render, err = currentRender(ctx, c, ns, name); err != nil {
			return err
		}
	}
	rel, err := c.Sync(ctx, ns, name, v1.SyncOptions{Force: so.force, Render: render})
	if apierrors.IsConflict(err) {
		return renderChanged(ctx, c, ns, name, render, err)
	}
	if err != nil {
		return err
	}
	value := rel.Annotations[v1.AnnotationSyncRequestedAt]
	if so.output != "" {
		if err := printObject(o.Streams.Out, so.output, rel); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(o.Streams.Out, "release.%s/%s %s requested at %s\n", v1.GroupName, name, syncWhat(so.force, render), value)
	}
	if !so.wait {
		return nil
	}
	at, err := v1.ParseSyncTime(value)
	if err != nil {
		return fmt.Errorf("the server wrote %s=%q: %w", v1.AnnotationSyncRequestedAt, value, err)
	}
	w := SyncWait{At: at, Force: so.force, Render: render, Baseline: statusFingerprint(rel)}
	// Progress goes to stderr when stdout carries -o output.
	out := o.Streams.Out
	if so.output != "" {
		out = o.Streams.ErrOut
	}
	return o.waitSync(ctx, c, ns, name, w, so.timeout, out)
}

// syncWhat is what a /sync requested, for its line: "sync of render 9a2b0c1d2e",
// "forced sync of render …", or "sync" and "forced sync" for the plain request.
func syncWhat(force bool, render string) string {
	what := "sync"
	if force {
		what = "forced sync"
	}
	if render != "" {
		what += " of render " + ShortRef(render)
	}
	return what
}

// currentRender is the Release's status.render.ref, the render `release diff` shows
// and a /sync approves by default.
func currentRender(ctx context.Context, c *Client, ns, name string) (string, error) {
	rel, err := c.GetRelease(ctx, ns, name)
	if apierrors.IsForbidden(err) {
		return "", fmt.Errorf("%w; release sync reads the Release to approve its current render: "+
			"--render REF approves a render you name without reading it, --any-render approves any", err)
	}
	if err != nil {
		return "", err
	}
	if rel.Status.Render == nil || rel.Status.Render.Ref == "" {
		return "", fmt.Errorf("release %s/%s has no render yet: the controller has not rendered it, so there is no render to approve; "+
			"wait for it (kubectl convoy release status %s), or approve whatever render comes with --any-render", ns, name, name)
	}
	return rel.Status.Render.Ref, nil
}

// RenderChangedError is the server's 409 to a /sync that approves a render which is
// no longer the Release's current one (nor its pinned one): nothing was requested.
type RenderChangedError struct {
	// Namespace and Name are the Release's.
	Namespace, Name string
	// Approved is the render the /sync named; Current the Release's render now (empty
	// when it could not be read).
	Approved, Current string
	// Err is the API error.
	Err error
}

// Error says what changed and what to do: review the current render and sync again.
func (e *RenderChangedError) Error() string {
	current := "another one"
	if e.Current != "" {
		current = ShortRef(e.Current)
	}
	msg := fmt.Sprintf("the render of Release %q in namespace %q changed since it was reviewed: the sync approved render %s, "+
		"the current render is %s; nothing was requested. Review it with `kubectl convoy release diff %s` and sync again",
		e.Name, e.Namespace, ShortRef(e.Approved), current, e.Name)
	if m := apiMessage(e.Err); m != "" {
		msg += " (server: " + m + ")"
	}
	return msg
}

// Unwrap returns the API error.
func (e *RenderChangedError) Unwrap() error { return e.Err }

// renderChanged explains a 409 of a /sync bound to render, with the current render
// read again.
func renderChanged(ctx context.Context, c *Client, ns, name, render string, err error) error {
	e := &RenderChangedError{Namespace: ns, Name: name, Approved: render, Err: err}
	if rel, gerr := c.GetRelease(ctx, ns, name); gerr == nil && rel.Status.Render != nil {
		e.Current = rel.Status.Render.Ref
	}
	return e
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
