// Package convoytest is the part of the tests' shared layer that runs convoy's own
// processes: the release controller and the observer in the test's process
// (internal/dev/inprocess), with clients of hostmanager's scheme. It imports the
// controller and the observer, so their own (internal) tests cannot import it; the
// test packages around them (releaseset_test, test/…) do. What needs no convoy
// process is in internal/testenv.
package convoytest

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/internal/dev/inprocess"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/testenv"
)

// Start runs the release controller and the observer on cfg in this process
// (inprocess.Start) with o until the end of the test.
func Start(t testing.TB, ctx context.Context, cfg *rest.Config, o inprocess.Options) {
	t.Helper()
	p, err := inprocess.Start(ctx, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("controller and observer: %v", err)
		}
	})
}

// Client is a client of cfg that watches, with the scheme of convoy's processes
// (hostmanager.Scheme).
func Client(t testing.TB, cfg *rest.Config) client.WithWatch {
	t.Helper()
	scheme, err := hostmanager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return testenv.WatchClient(t, cfg, scheme)
}

// SetUp starts an integration test (it skips with -short): a context of timeout, a
// client of cfg (the admin's) with the scheme of convoy's processes and a dynamic REST
// mapper, and a new namespace named after prefix.
func SetUp(t testing.TB, cfg *rest.Config, timeout time.Duration, prefix string) (context.Context, client.Client, string) {
	t.Helper()
	testenv.Integration(t)
	scheme, err := hostmanager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return testenv.SetUp(t, cfg, scheme, timeout, prefix)
}
