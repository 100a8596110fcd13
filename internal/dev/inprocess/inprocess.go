// Package inprocess runs convoy controller and convoy observer in the calling process,
// as the end-to-end tests do beside convoy apiserver (internal/dev starts them as
// processes). It is a package of its own so that the tests of internal/observer and
// internal/controller can use internal/dev without an import cycle.
package inprocess

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/notify"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/internal/wiring"
)

// Options say how Start runs convoy controller and convoy observer
// in this process, as the end-to-end tests do beside convoy's API server.
type Options struct {
	// Manager configures both managers (resync, namespaces, shard). An empty metrics
	// address turns the metrics endpoint off ("0"); so is the health probe unless set.
	Manager hostmanager.Options
	// Controller configures the release controller; its Source, when nil, is
	// source.New with the chart cache in ChartCacheDir (then required).
	Controller    controller.Options
	ChartCacheDir string
	// Notify configures the notifier of Alerts (wiring.Options.Notify).
	Notify notify.Options
	// Observer configures the observer.
	Observer observer.Options
}

// Convoy is the release controller (with the controller process's other
// reconcilers: internal/wiring) and the
// observer that Start runs, each on a manager of its own, as `convoy
// controller` and `convoy observer` are processes of their own.
type Convoy struct {
	Controller *controller.Reconciler
	Observer   *observer.Observer
	stops      []func() error
}

// Start starts the controller's and the observer's managers on host until
// Stop (or the end of ctx), and returns once both caches have synced. Several may run
// in one process (SkipNameValidation is set).
func Start(ctx context.Context, host *rest.Config, o Options) (_ *Convoy, err error) {
	if o.Manager.MetricsBindAddress == "" {
		o.Manager.MetricsBindAddress = "0"
	}
	if o.Controller.Source == nil {
		if o.ChartCacheDir == "" {
			return nil, errors.New("inprocess: Options needs a ChartCacheDir or a Controller.Source")
		}
		if o.Controller.Source, err = source.New(source.Options{CacheDir: o.ChartCacheDir}); err != nil {
			return nil, err
		}
	}
	o.Controller.SkipNameValidation, o.Observer.SkipNameValidation = true, true
	p := &Convoy{}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.Stop())
		}
	}()
	ctlMgr, err := controller.NewManager(host, o.Manager)
	if err != nil {
		return nil, err
	}
	if p.Controller, err = wiring.Setup(ctx, ctlMgr, wiring.Options{Release: o.Controller, Notify: o.Notify}); err != nil {
		return nil, err
	}
	obsMgr, err := observer.NewManager(host, o.Manager)
	if err != nil {
		return nil, err
	}
	if p.Observer, err = observer.Setup(obsMgr, o.Observer); err != nil {
		return nil, err
	}
	for _, m := range []manager.Manager{ctlMgr, obsMgr} {
		if err := p.run(ctx, m); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// run starts mgr until Stop and waits for its cache to sync.
func (p *Convoy) run(ctx context.Context, mgr manager.Manager) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	p.stops = append(p.stops, func() error {
		cancel()
		return <-done
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("a manager's cache did not sync: %w", ctx.Err())
	}
	return nil
}

// Stop stops the managers and returns what they returned.
func (p *Convoy) Stop() error {
	var errs []error
	for _, stop := range p.stops {
		errs = append(errs, stop())
	}
	p.stops = nil
	return errors.Join(errs...)
}
