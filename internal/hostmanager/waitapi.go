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

// WaitForAPI waits until the API server of cfg serves groupVersion (convoy's API, which
// convoy apiserver serves through an APIService), for at most timeout. A controller or
// observer that starts with convoy apiserver, as at an installation, would otherwise
// fail at once: kube-apiserver adds an aggregated API to its discovery shortly after
// the APIService is Available, and a cache cannot be set up for a kind that discovery
// does not list. It logs what it waits for every 10 seconds; past timeout it returns an
// error that says what to check.
func WaitForAPI(ctx context.Context, cfg *rest.Config, groupVersion string, timeout time.Duration, log logr.Logger) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	logged := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		_, last = dc.ServerResourcesForGroupVersion(groupVersion)
		if last == nil {
			return true, nil
		}
		if time.Since(logged) >= 10*time.Second {
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
	return fmt.Errorf("%s is not served by %s after %s: check that convoy apiserver runs and that its APIService is Available (kubectl get apiservices): %w",
		groupVersion, cfg.Host, timeout, last)
}
