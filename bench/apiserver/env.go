package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/apiserver"
)

// serveArg is the first argument of this program re-executed as convoy apiserver:
// the one benchenv gives convoy's binary.
const serveArg = benchenv.APIServerCommand

// serve runs convoy apiserver with `convoy apiserver`'s flags (cmd/convoy/apiserver.go
// does the same: apiserver.NewOptions, AddFlags, Run).
func serve(args []string) int {
	opts := apiserver.NewOptions()
	fs := newFlagSet()
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := opts.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "convoy apiserver:", err)
		return 1
	}
	return 0
}

// env is the running control plane (etcd and kube-apiserver, no workloads) and convoy
// apiserver (benchenv), with the admin's client at the load generator's QPS.
type env struct {
	*benchenv.Env
}

func startEnv(ctx context.Context, cfg config) (*env, error) {
	bin := cfg.convoyBin
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil { // this program, as serveArg
			return nil, err
		}
	}
	be, err := benchenv.Start(ctx, bin, benchenv.Options{Dir: cfg.stateDir, QPS: float32(cfg.qps), Burst: cfg.burst})
	if err != nil {
		return nil, err
	}
	e := &env{be}
	e.Track("bench client", os.Getpid())
	if _, err := e.ScrapeConvoy(ctx); err != nil {
		e.Stop()
		return nil, fmt.Errorf("reading convoy apiserver's metrics: %w", err)
	}
	return e, nil
}

// newRelease is a valid Release.
func newRelease(ns, name string) *convoyv1alpha1.Release {
	return &convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"bench": "convoy"}},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart: convoyv1alpha1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"},
		},
	}
}

func (e *env) create(ctx context.Context, r *convoyv1alpha1.Release) error {
	return e.Convoy.Post().Namespace(r.Namespace).Resource("releases").Body(r).Do(ctx).Error()
}

func (e *env) get(ctx context.Context, ns, name string) (*convoyv1alpha1.Release, error) {
	out := &convoyv1alpha1.Release{}
	return out, e.Convoy.Get().Namespace(ns).Resource("releases").Name(name).Do(ctx).Into(out)
}

// statusCode is the HTTP status of err: 0 for nil, -1 when no response came.
func statusCode(err error) int {
	if err == nil {
		return 0
	}
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return int(s.Status().Code)
	}
	return -1
}
