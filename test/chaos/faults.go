package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kumodo.io/convoy/api/v1alpha1"
)

// faultKind is one kind of fault the injector causes.
type faultKind string

const (
	faultKillController faultKind = "kill convoy-controller"
	faultKillLeader     faultKind = "kill the leader"
	faultKillMidDelete  faultKind = "kill the leader mid-deletion"
	faultKillMidApply   faultKind = "kill the leader mid-apply"
	faultKillMidHook    faultKind = "kill the leader mid-hook"
	faultKillMidPrune   faultKind = "kill the leader mid-prune"
	// The ReleaseSet's gates under faults (fleetgates.go): the leader killed while a
	// stage of the set rolls out; the remote Cluster leaving the set while its stage
	// rolls out, then coming back.
	faultKillMidStage   faultKind = "kill the leader mid-stage"
	faultLeaveMidStage  faultKind = "cluster leaves mid-stage"
	faultKillObserver   faultKind = "kill convoy-observer"
	faultKillAPIServer  faultKind = "kill convoy-apiserver"
	faultRestartEtcd    faultKind = "restart etcd"
	faultRestartKubeAPI faultKind = "restart kube-apiserver"
	// The start-up faults (decision 0154): a convoy process started while an API server it
	// needs is down must wait for it, since nothing restarts a process that exits.
	faultStartKubeAPIDown   faultKind = "start a process while kube-apiserver is down"
	faultStartAPIServerDown faultKind = "start a process while convoy-apiserver is down"
	faultRepo5xx            faultKind = "chart repo 5xx"
	faultRepoTruncated      faultKind = "chart repo truncated archives"
	faultProxyStall         faultKind = "proxy stall"
	faultProxyReset         faultKind = "proxy reset"
	faultProxySlow          faultKind = "proxy slow"
	faultRemoteDown         faultKind = "remote cluster down"
	faultLinkStall          faultKind = "remote link stall"
	faultLinkReset          faultKind = "remote link reset"
	faultLinkSlow           faultKind = "remote link slow"
)

// faultKinds are all kinds, in the report's order.
var faultKinds = []faultKind{
	faultKillController, faultKillLeader, faultKillMidDelete, faultKillMidApply, faultKillMidHook, faultKillMidPrune, faultKillObserver, faultKillAPIServer, faultRestartEtcd, faultRestartKubeAPI,
	faultStartKubeAPIDown, faultStartAPIServerDown,
	faultRepo5xx, faultRepoTruncated, faultProxyStall, faultProxyReset, faultProxySlow,
	faultRemoteDown, faultLinkStall, faultLinkReset, faultLinkSlow,
	faultKillMidStage, faultLeaveMidStage,
}

// processFaults are the kinds that kill a process; a soak leaves them out.
var processFaults = map[faultKind]string{
	faultKillController: procController, faultKillLeader: procController, faultKillMidDelete: procController,
	faultKillMidApply: procController, faultKillMidHook: procController, faultKillMidPrune: procController,
	faultKillMidStage: procController,
	faultKillObserver: procObserver, faultKillAPIServer: procAPIServer,
	faultRestartEtcd: procEtcd, faultRestartKubeAPI: procKubeAPI, faultRemoteDown: procRemoteKubeAPI,
	faultStartKubeAPIDown: procKubeAPI, faultStartAPIServerDown: procAPIServer,
}

// startupProcs are the processes a start-up fault draws from: the controller replicas
// and the observer (convoy apiserver has no API server of its own to wait for).
var startupProcs = []string{procController, procController2, procObserver}

// fault is one planned fault: after wait, cause kind for length (the downtime of a
// killed process, the window of a network or repository fault); proc is the process
// a start-up fault starts while the API server is down.
type fault struct {
	wait   time.Duration
	kind   faultKind
	length time.Duration
	proc   string
}

// planFaults draws n faults of kinds from rng, each after 2–2+gap and lasting 1–6 s.
// Each kind of require that is among kinds replaces one of the first 2×len(require)
// faults (at drawn places), so that a short run has it whatever the seed. A start-up
// fault draws its process from startupProcs.
func planFaults(rng *rand.Rand, n int, gap time.Duration, kinds, require []faultKind) []fault {
	out := make([]fault, n)
	for i := range out {
		out[i] = fault{
			wait:   2*time.Second + time.Duration(rng.Int64N(int64(gap))),
			kind:   kinds[rng.IntN(len(kinds))],
			length: time.Second + time.Duration(rng.Int64N(int64(5*time.Second))),
		}
	}
	var req []faultKind
	for _, k := range require {
		if slices.Contains(kinds, k) && !slices.Contains(req, k) {
			req = append(req, k)
		}
	}
	places := rng.Perm(min(n, 2*len(req)))
	for i, k := range req {
		if i < len(places) {
			out[places[i]].kind = k
		}
	}
	for i := range out {
		if out[i].kind == faultStartKubeAPIDown || out[i].kind == faultStartAPIServerDown {
			out[i].proc = startupProcs[rng.IntN(len(startupProcs))]
		}
	}
	return out
}

// inject causes the faults one after the other until they are done or phase ends;
// after each it waits (up to a bound, within ctx) for the system to be back. A convoy
// process that exited instead of coming back is a violation ("alive"), and the run
// goes on without it: nothing restarts it, as nothing would restart it under `convoy
// dev`'s supervision before decision 0153. Any other error means a process did not come back.
func (e *env) inject(ctx, phase context.Context, faults []fault) error {
	for _, f := range faults {
		select {
		case <-phase.Done():
			return nil
		case <-time.After(f.wait):
		}
		err := e.cause(ctx, f)
		var dead *exitedError
		if errors.As(err, &dead) {
			e.addDead(dead, fmt.Sprintf("after the fault %q", f.kind))
			continue
		}
		if err != nil {
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
		if f.kind == faultKillController {
			name = e.leaderOr(ctx, procController)
		}
		if e.skipDead(f, name) {
			return nil
		}
		e.log.fault(string(f.kind), "SIGKILL of %s, down for %s", name, f.length.Truncate(time.Millisecond))
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
		return e.waitReady(ctx, name)
	case faultRestartEtcd, faultRestartKubeAPI:
		name := processFaults[f.kind]
		e.log.fault(string(f.kind), "SIGKILL and start again")
		if err := e.cluster.Restart(name); err != nil {
			return err
		}
		return e.waitReady(ctx, name)
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
	case faultLinkStall, faultLinkReset, faultLinkSlow:
		mode := map[faultKind]proxyMode{faultLinkStall: proxyStall, faultLinkReset: proxyReset, faultLinkSlow: proxySlow}[f.kind]
		e.log.fault(string(f.kind), "for %s", f.length.Truncate(time.Millisecond))
		window(func() { e.link.setMode(mode) }, func() { e.link.setMode(proxyPass) })
	case faultStartKubeAPIDown, faultStartAPIServerDown:
		if e.skipDead(f, f.proc) {
			return nil
		}
		return e.startDuringOutage(ctx, f)
	case faultRemoteDown:
		return e.remoteDown(ctx, 3*f.length)
	case faultKillLeader:
		return e.killLeader(ctx, f, "")
	case faultKillMidDelete, faultKillMidApply, faultKillMidHook, faultKillMidPrune:
		// Aim at a moment: wait (a bounded time) for the next one the driver (a
		// deletion) or the recorder (an apply's first wave, a hook Job, a prune) sees.
		var moment string
		select {
		case moment = <-e.moments[f.kind]:
		case <-time.After(30 * time.Second):
		case <-ctx.Done():
		}
		return e.killLeader(ctx, f, moment)
	case faultKillMidStage:
		// A moment that lasts: a stage rolling out now, or the next one the recorder
		// sees start (within stageMomentBound).
		return e.killLeader(ctx, f, e.midStage(ctx, f.kind, ""))
	case faultLeaveMidStage:
		return e.leaveMidStage(ctx, f)
	default:
		return fmt.Errorf("unknown fault %q", f.kind)
	}
	return nil
}

// startDuringOutage kills the convoy process f.proc and the API server that f's kind
// names (kube-apiserver, or convoy apiserver behind the aggregator), starts the process
// again while that server is down, and starts the server again after f.length (issue
// 32: an observer started while kube-apiserver restarted exited at once, and nothing
// started it again). The process must wait for the server and become ready by itself;
// one that exits instead is an exitedError.
func (e *env) startDuringOutage(ctx context.Context, f fault) error {
	server := processFaults[f.kind]
	e.log.fault(string(f.kind), "SIGKILL of %s and of %s; %s started again at once, %s %s later",
		f.proc, server, f.proc, server, f.length.Truncate(time.Millisecond))
	if err := e.cluster.Kill(f.proc); err != nil {
		return err
	}
	if err := e.cluster.Kill(server); err != nil {
		return err
	}
	if err := e.cluster.Restart(f.proc); err != nil {
		return err
	}
	began := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(f.length):
	}
	if err := e.cluster.Restart(server); err != nil {
		return err
	}
	if err := e.waitReady(ctx, server); err != nil {
		return err
	}
	back := time.Now()
	if err := e.waitReady(ctx, f.proc); err != nil {
		return err
	}
	e.log.printf("%s, started while %s was down, is ready %s after its start (%s after %s was back)",
		f.proc, server, time.Since(began).Truncate(time.Millisecond), time.Since(back).Truncate(time.Millisecond), server)
	return nil
}

// skipDead says (and logs) that the process a fault of f aims at has exited
// earlier in the run and was not started again: the fault is skipped, the exit is
// already a violation.
func (e *env) skipDead(f fault, name string) bool {
	if e.cluster.PID(name) != 0 {
		return false
	}
	e.log.printf("Fault %q skipped: %s is not running (it exited earlier)", f.kind, name)
	return true
}

// remoteDown takes the remote cluster away for at least length: its kube-apiserver is
// killed and the link holds every connection without a byte (what an unreachable
// cluster looks like to a client: timeouts, not refusals). Meanwhile the host's
// Releases must go on: the canary, an automatic Release on the host that the driver
// never touches, gets new values and must apply them while the remote is down. Then
// the remote comes back (same ports, same etcd) and the link passes again.
func (e *env) remoteDown(ctx context.Context, length time.Duration) error {
	e.log.fault(string(faultRemoteDown), "kube-apiserver SIGKILL and the link stalls, for %s or until the canary on the host applies", length.Truncate(time.Millisecond))
	began := time.Now()
	e.link.setMode(proxyStall)
	if err := e.remote.Kill("kube-apiserver"); err != nil {
		return err
	}
	took, err := e.canaryApplies(ctx, time.Minute)
	if err != nil {
		e.addViolation(violation{"remote-blocks-host", e.canary.key(), fmt.Sprintf("while Cluster %s was unreachable, the host Release did not apply new values: %v", remoteClusterName, err)})
	} else {
		e.log.printf("The canary on the host applied new values %s after the remote cluster went down", took.Truncate(time.Millisecond))
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(began.Add(length))):
	}
	if err := e.remote.Restart("kube-apiserver"); err != nil {
		return err
	}
	e.link.setMode(proxyPass)
	return e.waitReady(ctx, procRemoteKubeAPI)
}

// canaryApplies gives the canary new values and waits up to bound until its wave-0
// ConfigMap carries them; it returns how long that took.
func (e *env) canaryApplies(ctx context.Context, bound time.Duration) (time.Duration, error) {
	c := e.canary
	c.mu.Lock()
	defer c.mu.Unlock()
	began := time.Now()
	token := fmt.Sprintf("canary-%d", began.UnixNano())
	err := retry(ctx, bound, func(ctx context.Context) error {
		body := fmt.Appendf(nil, `{"spec":{"values":{"token":%q}}}`, token)
		return e.convoy.Patch(types.MergePatchType).Namespace(c.ns).Resource(v1alpha1.ResourceReleases).Name(c.name).Body(body).Do(ctx).Error()
	})
	if err != nil {
		return 0, fmt.Errorf("edit its values: %w", err)
	}
	c.token = token
	err = retry(ctx, bound-time.Since(began), func(ctx context.Context) error {
		cm, err := e.kube.CoreV1().ConfigMaps(c.ns).Get(ctx, c.name+"-first", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := inputsKey(cm.Annotations[annotationToken], cm.Annotations[annotationVersion]); got != c.inputs() {
			return fmt.Errorf("its wave-0 ConfigMap has inputs %s, not %s", got, c.inputs())
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("not applied within %s: %w", bound, err)
	}
	return time.Since(began), nil
}

// leaderOr is the leader among the controller replicas, or name when none is.
func (e *env) leaderOr(ctx context.Context, name string) string {
	if l := e.leader(ctx); l != "" {
		return l
	}
	return name
}

// killLeader kills the leader among the controller replicas and keeps it down until
// the other replica has taken over (its Lease expired): a handover, which must happen
// within handoverBound, then starts it again as a standby. moment says what just
// happened, when the kill aims at a moment (a deletion, an apply's first wave, a hook
// Job, a prune).
func (e *env) killLeader(ctx context.Context, f fault, moment string) error {
	name := e.leaderOr(ctx, procController)
	other := procController2
	if name == procController2 {
		other = procController
	}
	if e.skipDead(f, name) || e.skipDead(f, other) { // no handover without a standby
		return nil
	}
	if moment != "" {
		e.log.fault(string(f.kind), "SIGKILL of %s just after %s; %s must take over", name, moment, other)
	} else {
		e.log.fault(string(f.kind), "SIGKILL of %s; %s must take over", name, other)
	}
	began := time.Now()
	if err := e.cluster.Kill(name); err != nil {
		return err
	}
	err := retry(ctx, handoverBound, func(ctx context.Context) error {
		if e.leader(ctx) != other {
			return fmt.Errorf("%s is not the leader", other)
		}
		return nil
	})
	if err != nil {
		e.addViolation(violation{"leader", "-", fmt.Sprintf("%s did not take over within %s of the leader %s's SIGKILL", other, handoverBound, name)})
	} else {
		took := time.Since(began)
		e.log.printf("%s took over %s after the leader %s's SIGKILL", other, took.Truncate(time.Millisecond), name)
		e.mu.Lock()
		e.handovers = append(e.handovers, took)
		e.mu.Unlock()
	}
	if err := e.cluster.Restart(name); err != nil {
		return err
	}
	return e.waitReady(ctx, name)
}

// handoverBound bounds a leader handover after a SIGKILL: the Lease (15 s) must
// expire, and the standby retries every 2 s.
const handoverBound = time.Minute
