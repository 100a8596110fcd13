package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/diff"
	"kumodo.io/convoy/internal/store"
	"kumodo.io/convoy/internal/ui"
)

func newUICommand(o *Options) *cobra.Command {
	var port int
	var open bool
	cmd := &cobra.Command{
		Use:   "ui [--port N] [--open]",
		Short: "Serve a live web view of Releases, with sync and pin, on loopback",
		Long: "Serve convoy's web UI on 127.0.0.1, talking to the cluster with your kubeconfig (so what it shows and " +
			"what it lets you do is your RBAC): Releases across the namespaces you may list (or the namespace of -n), " +
			"a Release's conditions, sync requests, sync waves, hooks, rollout, drift, events, render history and " +
			"diffs, Clusters and their cluster waves, ReleaseSets with their stages as lanes, Alerts and Receivers with " +
			"their last delivery or call (and on a Release's page the Alerts that select it); Sync, Force sync, Pin, " +
			"Unpin and Promote where you are allowed. " +
			"Everything updates live from watches. Stop it with Ctrl-C.",
		Example: "  kubectl convoy ui --open\n  kubectl convoy ui -n team-a --port 8080",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return &UsageError{Err: fmt.Errorf("--port %d: want 0 (any free port) to 65535", port)}
			}
			return o.runUI(cmd.Context(), port, open)
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "the loopback port to listen on; 0 picks a free one")
	cmd.Flags().BoolVar(&open, "open", false, "open the UI in the default browser")
	return cmd
}

func (o *Options) runUI(ctx context.Context, port int, open bool) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	defaultNS, err := o.Namespace()
	if err != nil {
		return err
	}
	var only string
	if o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		only = *o.ConfigFlags.Namespace
	}
	var kubeContext string
	if raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig(); err == nil {
		kubeContext = raw.CurrentContext
		if o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "" {
			kubeContext = *o.ConfigFlags.Context
		}
	}
	srv, err := ui.New(ctx, ui.Options{Config: cfg, Backend: &uiBackend{o: o, c: c}, Namespace: only, DefaultNamespace: defaultNS, Context: kubeContext})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listening on 127.0.0.1:%d: %w; pick another --port", port, err)
	}
	url := "http://" + l.Addr().String() + "/"
	fmt.Fprintf(o.Streams.Out, "convoy UI on %s (Ctrl-C to stop)\n", url)
	if open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(o.Streams.ErrOut, "could not open a browser (%v); open %s yourself\n", err, url)
		}
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
	}()
	if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Start()
}

// uiBackend gives the UI the CLI's requests and diff.
type uiBackend struct {
	o *Options
	c *Client
}

func (b *uiBackend) Sync(ctx context.Context, ns, name string, opts v1.SyncOptions) (*v1.Release, error) {
	return b.c.Sync(ctx, ns, name, opts)
}

func (b *uiBackend) Promote(ctx context.Context, ns, name string) (*v1.ReleaseSet, error) {
	return b.c.Promote(ctx, ns, name)
}

func (b *uiBackend) MergePatch(ctx context.Context, ns, name, subresource string, patch []byte) (*v1.Release, error) {
	return b.c.MergePatch(ctx, ns, name, subresource, patch)
}

func (b *uiBackend) ClusterDiff(ctx context.Context, ns, name, ref string) (string, []diff.Result, error) {
	rel, err := b.c.GetRelease(ctx, ns, name)
	if err != nil {
		return "", nil, err
	}
	rd, err := b.o.findRender(ctx, b.c, ns, name, ref)
	if err != nil {
		return "", nil, err
	}
	target, err := b.o.target(ctx, rel)
	if err != nil {
		return "", nil, err
	}
	// The UI lists the objects it compared; a Secret it may not show is not one.
	results, _, err := ReleaseDiff(ctx, b.c, target, rel, rd)
	return rd.RenderRef, results, err
}

func (b *uiBackend) RenderObjects(ctx context.Context, ns, name, ref string) ([]*unstructured.Unstructured, error) {
	if err := ValidateRenderRef(ref); err != nil {
		return nil, err
	}
	rel, err := b.c.GetRelease(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	rd, err := store.FindRender(ctx, b.c.Reader(), ns, name, ref)
	if err != nil {
		return nil, err
	}
	return AppliedObjects(rel, rd)
}
