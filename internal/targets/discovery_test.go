package targets

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"kumodo.io/convoy/internal/testenv"
)

// TestDiscoveryIsTheSameUntilReadAgain: within its time to live a Target's Discovery
// is one *Discovery (what the controller keeps its render Capabilities by), and a new
// one once it is read again — after the time to live, or after InvalidateDiscovery.
func TestDiscoveryIsTheSameUntilReadAgain(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 4, 20, 0, 0, 0, time.UTC))
	target, err := newTarget(ctx, "", host.RestConfig(), clk, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	read := func(what string) *Discovery {
		t.Helper()
		d, err := target.Discovery()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !serves(d, "apps/v1", "Deployment") {
			t.Fatalf("%s: the discovery lacks apps/v1 Deployment (%d lists)", what, len(d.Resources))
		}
		return d
	}
	first := read("first")
	if again := read("again at once"); again != first {
		t.Error("a second call within the time to live read the discovery again")
	}
	clk.SetTime(clk.Now().Add(59 * time.Second))
	if again := read("59 s later"); again != first {
		t.Error("a call 59 s later (time to live 1 minute) read the discovery again")
	}
	clk.SetTime(clk.Now().Add(time.Second))
	expired := read("a minute later")
	if expired == first {
		t.Error("a call a minute later returned the discovery read before")
	}
	if again := read("after the new read"); again != expired {
		t.Error("the discovery read after the time to live is not kept")
	}
	target.InvalidateDiscovery()
	if invalidated := read("after InvalidateDiscovery"); invalidated == expired {
		t.Error("InvalidateDiscovery did not make the next call read the discovery again")
	}
}
