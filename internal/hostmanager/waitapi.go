package hostmanager

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/startup"
)

// apiStableFor is how long groupVersion must be served without a failure before an
// attempt of the start-up wait succeeds: just after an APIService is registered,
// kube-apiserver's availability checks can still fail once or twice (an aggregated API
// server whose authentication configuration is still loading answers them 403), and
// while the APIService is marked unavailable the group can be missing from discovery, so
// a single success could fall in a window between two failures (test/chaos, seed 11: the
// controller exited with "no matches for convoy.kumodo.io/v1alpha1" a moment after its
// wait returned).
const apiStableFor = 2 * time.Second

// stablePoll is how often an attempt looks again while it confirms that the group stays
// served.
const stablePoll = 250 * time.Millisecond

// requestTimeout bounds each discovery request of the wait: a kube-apiserver that
// accepts connections and answers nothing must not hold the wait past its bound.
const requestTimeout = 10 * time.Second

// Start is how convoy controller and convoy observer start on the host cluster: it waits
// until kube-apiserver answers and serves convoy's API (convoy.kumodo.io/v1alpha1,
// through convoy apiserver's APIService) without a failure for apiStableFor, learns the
// REST mappings of convoy's kinds and the core kinds from discovery, and builds the
// manager with newManager (controller.NewManager, observer.NewManager) on that REST
// mapper. Any failure of these steps (kube-apiserver away, discovery failing, the
// group not served yet, the manager's cache unable to tell whether a kind is
// namespaced) is retried with w's back-off, logged, and ends the start only after
// w.Timeout (--startup-timeout), with an error that says what to check. Nothing the
// manager needs of discovery at its construction or at Setup is left outside the wait.
func Start(ctx context.Context, cfg *rest.Config, o Options, w startup.Wait,
	newManager func(*rest.Config, Options) (manager.Manager, error)) (manager.Manager, error) {
	gv := v1.SchemeGroupVersion
	w.For = fmt.Sprintf("kube-apiserver at %s to serve %s", cfg.Host, gv)
	w.Check = fmt.Sprintf("that kube-apiserver answers at %s, that convoy apiserver runs and that its APIService is Available "+
		"(kubectl get apiservice %s.%s)", cfg.Host, gv.Version, gv.Group)
	waitCfg := rest.CopyConfig(cfg)
	waitCfg.Timeout = requestTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(waitCfg)
	if err != nil {
		return nil, err
	}
	var mgr manager.Manager
	err = w.Until(ctx, func(ctx context.Context) error {
		if err := servedStably(ctx, dc, gv.String()); err != nil {
			return err
		}
		mapper, err := knownMapper(waitCfg)
		if err != nil {
			return err
		}
		mo := o
		mo.RESTMapper = mapper
		mgr, err = newManager(cfg, mo)
		return err
	})
	return mgr, err
}

// WaitForAPI waits until the API server of cfg serves groupVersion without a failure for
// apiStableFor, with w's back-off and bound; w.For and w.Check default to what it waits
// for and what to check. Start includes this wait.
func WaitForAPI(ctx context.Context, cfg *rest.Config, groupVersion string, w startup.Wait) error {
	waitCfg := rest.CopyConfig(cfg)
	waitCfg.Timeout = requestTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(waitCfg)
	if err != nil {
		return err
	}
	if w.For == "" {
		w.For = fmt.Sprintf("%s to be served by %s", groupVersion, cfg.Host)
	}
	if w.Check == "" {
		w.Check = "that the API server answers and serves the group (convoy's: that convoy apiserver runs and its APIService is Available)"
	}
	return w.Until(ctx, func(ctx context.Context) error { return servedStably(ctx, dc, groupVersion) })
}

// servedStably is one attempt: groupVersion is served now and stays served, polled every
// stablePoll, for apiStableFor.
func servedStably(ctx context.Context, dc discovery.DiscoveryInterface, groupVersion string) error {
	var s streak
	for {
		_, err := dc.ServerResourcesForGroupVersion(groupVersion)
		if err != nil {
			if !s.since.IsZero() {
				return fmt.Errorf("%s was served, then not: %w", groupVersion, err)
			}
			return fmt.Errorf("%s is not served: %w", groupVersion, err)
		}
		if s.observe(true, time.Now(), apiStableFor) {
			return nil
		}
		t := time.NewTimer(stablePoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s was served for less than %s: %w", groupVersion, apiStableFor, ctx.Err())
		case <-t.C:
		}
	}
}

// knownMapper returns controller-runtime's dynamic REST mapper on cfg, having looked up
// every resource kind of convoy's API and the core kinds, so that the manager's cache
// and its controllers' watches and indexes find them without asking discovery again.
func knownMapper(cfg *rest.Config) (meta.RESTMapper, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("make the REST mapper: %w", err)
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	kinds := []schema.GroupVersionKind{{Version: "v1", Kind: "Namespace"}}
	for gvk := range scheme.AllKnownTypes() {
		// A kind with a list kind is a resource (the others are options and events).
		if gvk.GroupVersion() == v1.SchemeGroupVersion && !strings.HasSuffix(gvk.Kind, "List") {
			if scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind + "List")) {
				kinds = append(kinds, gvk)
			}
		}
	}
	for _, gvk := range kinds {
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("the REST mapping of %s: %w", gvk, err)
		}
	}
	return mapper, nil
}

// mapperProviderOf hands the manager a REST mapper made before it; nil for none
// (controller-runtime's default).
func mapperProviderOf(m meta.RESTMapper) func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
	if m == nil {
		return nil
	}
	return func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return m, nil }
}

// streak follows a run of successes: observe says whether every observation since the
// run began succeeded and the run has lasted stableFor.
type streak struct {
	since time.Time // when the current run of successes began; zero: none
}

func (s *streak) observe(ok bool, now time.Time, stableFor time.Duration) bool {
	if !ok {
		s.since = time.Time{}
		return false
	}
	if s.since.IsZero() {
		s.since = now
	}
	return now.Sub(s.since) >= stableFor
}
