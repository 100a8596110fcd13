package hostmanager

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// apiStableFor is how long groupVersion must be served without a failure before
// WaitForAPI returns: just after an APIService is registered, kube-apiserver's
// availability checks can still fail once or twice (an aggregated API server whose
// authentication configuration is still loading answers them 403), and while the
// APIService is marked unavailable the group can be missing from discovery, so a single
// success could fall in a window between two failures (test/chaos, seed 11: the controller exited
// with "no matches for convoy.kumodo.io/v1alpha1" a moment after its wait returned).
const apiStableFor = 2 * time.Second

// WaitForAPI waits until the API server of cfg serves groupVersion (convoy's API, which
// convoy apiserver serves through an APIService) without a failure for apiStableFor,
// for at most timeout. A controller or observer that starts with convoy apiserver, as
// at an installation, would otherwise fail at once: kube-apiserver adds an aggregated
// API to its discovery shortly after the APIService is Available, and a cache cannot
// be set up for a kind that discovery does not list. It logs what it waits for every
// 10 seconds; past timeout it returns an error that says what to check.
func WaitForAPI(ctx context.Context, cfg *rest.Config, groupVersion string, timeout time.Duration, log logr.Logger) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	var served streak
	logged := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		_, last = dc.ServerResourcesForGroupVersion(groupVersion)
		if served.observe(last == nil, time.Now(), apiStableFor) {
			return true, nil
		}
		if last != nil && time.Since(logged) >= 10*time.Second {
			log.Info("Waiting for the API to be served", "groupVersion", groupVersion, "error", last.Error())
			logged = time.Now()
		}
		return false, nil
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if last == nil {
		last = fmt.Errorf("it was not served for %s in a row", apiStableFor)
	}
	return fmt.Errorf("%s is not served by %s after %s: check that convoy apiserver runs and that its APIService is Available (kubectl get apiservices): %w",
		groupVersion, cfg.Host, timeout, last)
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
