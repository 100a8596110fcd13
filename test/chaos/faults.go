package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// faultKind is one kind of fault the injector causes.
type faultKind string

const (
	faultKillController faultKind = "kill convoy-controller"
	faultKillObserver   faultKind = "kill convoy-observer"
	faultKillAPIServer  faultKind = "kill convoy-apiserver"
	faultRestartEtcd    faultKind = "restart etcd"
	faultRestartKubeAPI faultKind = "restart kube-apiserver"
	faultRepo5xx        faultKind = "chart repo 5xx"
	faultRepoTruncated  faultKind = "chart repo truncated archives"
	faultProxyStall     faultKind = "proxy stall"
	faultProxyReset     faultKind = "proxy reset"
	faultProxySlow      faultKind = "proxy slow"
)

// faultKinds are all kinds, in the report's order.
var faultKinds = []faultKind{
	faultKillController, faultKillObserver, faultKillAPIServer, faultRestartEtcd, faultRestartKubeAPI,
	faultRepo5xx, faultRepoTruncated, faultProxyStall, faultProxyReset, faultProxySlow,
}

// processFaults are the kinds that kill a process; a soak leaves them out.
var processFaults = map[faultKind]string{
	faultKillController: procController, faultKillObserver: procObserver, faultKillAPIServer: procAPIServer,
	faultRestartEtcd: procEtcd, faultRestartKubeAPI: procKubeAPI,
}

// fault is one planned fault: after wait, cause kind for length (the downtime of a
// killed process, the window of a network or repository fault).
type fault struct {
	wait   time.Duration
	kind   faultKind
	length time.Duration
}

// planFaults draws n faults of kinds from rng, each after 2–2+gap and lasting 1–6 s.
func planFaults(rng *rand.Rand, n int, gap time.Duration, kinds []faultKind) []fault {
	out := make([]fault, n)
	for i := range out {
		out[i] = fault{
			wait:   2*time.Second + time.Duration(rng.Int64N(int64(gap))),
			kind:   kinds[rng.IntN(len(kinds))],
			length: time.Second + time.Duration(rng.Int64N(int64(5*time.Second))),
		}
	}
	return out
}

// inject causes the faults one after the other until they are done or phase ends;
// after each it waits (up to a bound, within ctx) for the system to be back. An error
// means a process did not come back.
func (e *env) inject(ctx, phase context.Context, faults []fault) error {
	for _, f := range faults {
		select {
		case <-phase.Done():
			return nil
		case <-time.After(f.wait):
		}
		if err := e.cause(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// cause causes one fault and returns once it is over and its process is ready again.
func (e *env) cause(ctx context.Context, f fault) error {
	window := func(set, reset func()) {
		set()
		select {
		case <-ctx.Done():
		case <-time.After(f.length):
		}
		reset()
	}
	switch f.kind {
	case faultKillController, faultKillObserver, faultKillAPIServer:
		name := processFaults[f.kind]
		e.log.fault(string(f.kind), "SIGKILL, down for %s", f.length.Truncate(time.Millisecond))
		if err := e.cluster.Kill(name); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(f.length):
		}
		if err := e.cluster.Restart(name); err != nil {
			return err
		}
		return e.waitReady(ctx, name, 2*time.Minute)
	case faultRestartEtcd, faultRestartKubeAPI:
		name := processFaults[f.kind]
		e.log.fault(string(f.kind), "SIGKILL and start again")
		if err := e.cluster.Restart(name); err != nil {
			return err
		}
		return e.waitReady(ctx, name, 2*time.Minute)
	case faultRepo5xx, faultRepoTruncated:
		mode := repo5xx
		if f.kind == faultRepoTruncated {
			mode = repoTruncated
		}
		e.log.fault(string(f.kind), "for %s", f.length.Truncate(time.Millisecond))
		window(func() { e.repo.setMode(mode) }, func() { e.repo.setMode(repoOK) })
	case faultProxyStall, faultProxyReset, faultProxySlow:
		mode := map[faultKind]proxyMode{faultProxyStall: proxyStall, faultProxyReset: proxyReset, faultProxySlow: proxySlow}[f.kind]
		e.log.fault(string(f.kind), "for %s", f.length.Truncate(time.Millisecond))
		window(func() { e.proxy.setMode(mode) }, func() { e.proxy.setMode(proxyPass) })
	default:
		return fmt.Errorf("unknown fault %q", f.kind)
	}
	return nil
}
