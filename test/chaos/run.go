package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/localcluster"
)

// config is one run's size and bounds; every loop of the run is bounded by one of them.
type config struct {
	Seed       uint64
	Releases   int
	Namespaces int
	Nodes      int
	Workers    int           // concurrent driver clients
	Steps      int           // driver steps
	Duration   time.Duration // the fault phase: driver and faults stop at its end
	Faults     int           // faults planned (fewer happen when Duration ends first)
	FaultGap   time.Duration // up to this (plus 2 s) between two faults
	Kinds      []faultKind
	Require    []faultKind   // kinds every plan has among its first faults (planFaults)
	Converge   time.Duration // the bound on convergence after the faults stop
	Health     time.Duration // failurePolicy.healthTimeout of the Releases that have one
	Quiet      time.Duration // the steady window that must see no write
	ConvoyBin  string        // empty: build ./cmd/convoy
}

// result is what a run measured.
type result struct {
	cfg          config
	faults       map[string]int
	outcomes     map[string]int64
	errorSamples map[string]string // action → its first error
	syncSent     int64
	syncAck      int64
	applies      float64 // server-side applies and patches of applied objects (kube-apiserver)
	violations   []violation
	unverified   int
	// clusterWaveApplies counts the applies of a cluster wave above 0 that the
	// cluster-wave check judged.
	clusterWaveApplies int
	// clusterWaveConcurrent counts the applies (by lower Release) that raced a lower
	// wave's change: not violations (checkClusterWaves).
	clusterWaveConcurrent int
	// stageRevisions counts the revisions of later-stage Releases of the ReleaseSet that
	// the stage order check judged, stagesUnverified those a relist may have hidden.
	stageRevisions, stagesUnverified int
	// sourceRevisions counts those of them at the chart version published during the
	// run (a revision from the set's source, not its template).
	sourceRevisions int
	// pauses counts the set's pauses; pausedJudged the states of its Releases that
	// checkPaused judged while it was paused, pausedInFlight the changes written by a
	// reconcile in flight at a pause, pausedUnverified those a relist may have hidden.
	pauses, pausedJudged, pausedInFlight, pausedUnverified int
	// leaves counts the faults "cluster leaves mid-stage", leavesHeld those whose
	// removal the set held (MassRemoval) and the harness acknowledged.
	leaves, leavesHeld int
	// rollouts counts what the check of the lower waves' rollouts judged
	// (checkLowerWaveRollouts).
	rollouts rolloutCounts
	// approvals counts the manual-mode applies that the approval check judged
	// (checkApproval), approvalsBound those of them with a bound /sync pending, and
	// approvalsUnverified those whose approved render's inputs were unknown.
	approvals, approvalsBound, approvalsUnverified int
	// clusterWaveUnverified and manualUnverified count what those checks could not
	// judge: a relist may have hidden the states they compare; relists counts those.
	clusterWaveUnverified, manualUnverified, relists int
	converged                                        []time.Duration
	handovers                                        []time.Duration // leader handovers after a SIGKILL
	leaseLosses                                      int             // controller replicas started again after losing their lease
	notConverged                                     int
	quietWrites                                      map[string]float64
	start, end                                       map[string]procStat
	samples                                          []sample // during the fault phase
	wall                                             time.Duration
}

// appliedResources are the resources the chart applies; their writes are convoy's.
var appliedResources = []string{"configmaps", "deployments", "jobs"}

// convoyResources are convoy apiserver's resources.
var convoyResources = []string{"releases", "renders", "releaseinventories", "clusters", "releasesets"}

// run runs the harness once: start, create, drive with faults, settle, converge,
// check, stay quiet, report. An error means the harness itself could not run; the
// violations are in the result.
func run(ctx context.Context, cfg config, out io.Writer) (*result, error) {
	log := newEventLog(out)
	began := time.Now()
	log.printf("Seed %d (replay: -seed=%d): %d Releases in %d namespaces, %d steps, %d faults within %s",
		cfg.Seed, cfg.Seed, cfg.Releases, cfg.Namespaces, cfg.Steps, cfg.Faults, cfg.Duration)
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed))
	namespaces := make([]string, cfg.Namespaces)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("chaos-%d", i)
	}
	rels := newWorkload(rng, cfg.Releases, namespaces, cfg.Health)
	steps := plan(rng, cfg.Steps, cfg.Releases)
	// The canary is last: the plan never picks it (remoteDown changes it).
	canary := &release{ns: namespaces[0], name: "canary", version: versionA, health: cfg.Health}
	rels = append(rels, canary)
	faults := planFaults(rng, cfg.Faults, cfg.FaultGap, cfg.Kinds, cfg.Require)

	bin := cfg.ConvoyBin
	if bin == "" {
		dir, err := os.MkdirTemp("", "convoy-chaos-bin-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		log.printf("Building ./cmd/convoy")
		if bin, err = localcluster.BuildConvoy(ctx, dir); err != nil {
			return nil, err
		}
	}
	// The state (and every process's log) stays when the run fails.
	stateDir, err := os.MkdirTemp("", "convoy-chaos-")
	if err != nil {
		return nil, err
	}
	keep := true
	defer func() {
		if !keep {
			_ = os.RemoveAll(stateDir)
		}
	}()
	e, err := startEnv(ctx, bin, stateDir, cfg.Nodes, log)
	if err != nil {
		return nil, err
	}
	defer e.stop()
	e.canary = canary
	log.printf("Logs of every process: %s (kept when the run fails)", e.cluster.LogDir())
	trace, err := os.Create(filepath.Join(e.cluster.LogDir(), "driver.log"))
	if err != nil {
		return nil, err
	}
	defer trace.Close()
	// The namespaces exist on both clusters: a Release applies into its own
	// namespace's name on its target.
	for _, kube := range []kubernetes.Interface{e.kube, e.remoteKube} {
		for _, ns := range namespaces {
			_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, err
			}
		}
	}
	if err := e.startFleet(ctx); err != nil {
		return nil, err
	}
	// The set's namespace is the driver's neither: its Pods are kept Ready as theirs.
	podNamespaces := append(slices.Clone(namespaces), fleetNamespace)
	rec := newRecorder()
	rec.aim = e.aim
	recCtx, stopRec := context.WithCancel(ctx)
	defer stopRec()
	rec.start(recCtx, e)

	res := &result{cfg: cfg}
	d := &driver{e: e, rels: rels, rec: rec, trace: newEventLog(trace)}
	d.trace.start = log.start
	log.printf("Creating %d Releases", len(rels))
	if err := d.createAll(ctx, 16); err != nil {
		return nil, err
	}
	res.start = e.snapshotProcs(ctx)
	kubeBefore, phaseFrom := kubeMetrics(ctx, e.kube), time.Now()

	log.printf("Fault phase: %d driver steps from %d clients and %d faults, for at most %s", len(steps), cfg.Workers, len(faults), cfg.Duration)
	phase, endPhase := context.WithTimeout(ctx, cfg.Duration)
	var wg sync.WaitGroup
	var injectErr error
	wg.Go(func() { d.run(phase, steps, cfg.Workers, cfg.Duration/time.Duration(max(len(steps), 1))) })
	wg.Go(func() { injectErr = e.inject(ctx, phase, faults) })
	wg.Go(func() { res.samples = e.sampleProcs(phase, max(cfg.Duration/6, 10*time.Second)) })
	wg.Go(func() { e.keepPodsReady(phase, e.kube, podNamespaces, log) })
	wg.Go(func() { e.keepPodsReady(phase, e.remoteKube, podNamespaces, log) })
	wg.Go(func() {
		e.newFleetRevision(phase, cfg.Duration/3, "set-2")
		if cfg.Duration >= longFleetPhase { // a second template revision in a long run
			e.newFleetRevision(phase, cfg.Duration/3, "set-3")
		}
	})
	wg.Go(func() { e.publishChart(phase, cfg.Duration/6) })
	wg.Go(func() { e.pauseFleet(ctx, phase, cfg.Duration/2, min(max(cfg.Duration/6, 5*time.Second), time.Minute)) })
	wg.Wait()
	endPhase()
	if injectErr != nil {
		return nil, e.withDead(fmt.Errorf("a fault left the system down: %w", injectErr))
	}
	e.repo.setMode(repoOK)
	e.proxy.setMode(proxyPass)
	e.link.setMode(proxyPass)
	for _, name := range []string{procEtcd, procKubeAPI, procRemoteKubeAPI, procAPIServer, procController, procController2, procObserver} {
		err := e.waitReady(ctx, name)
		var dead *exitedError
		if errors.As(err, &dead) {
			e.addDead(dead, "when the faults stopped")
			continue
		}
		if err != nil {
			return nil, e.withDead(err)
		}
	}
	log.printf("Faults stopped; unpinning and sending the last /sync of manual Releases")
	if err := d.settle(ctx); err != nil {
		return nil, e.withDead(fmt.Errorf("settling: %w", err))
	}
	settled := time.Now()
	log.printf("Waiting up to %s for every Release to converge", cfg.Converge)
	res.handovers = e.handovers
	res.leaseLosses = e.leaseLosses
	converged, notConverged := e.converge(ctx, rels, podNamespaces, settled, cfg.Converge, log)
	res.converged, res.notConverged = converged, len(rels)-len(converged)
	res.violations = append(res.violations, notConverged...)
	res.violations = append(res.violations, e.waitNamespacesGone(ctx, namespaces, log)...)
	res.violations = append(res.violations, e.waitFleetReady(ctx, cfg.Converge, log)...)

	// The checks after convergence.
	res.violations = append(res.violations, e.checkOrphans(ctx, append(slices.Clone(rels), fleetReleases()...))...)
	e.catchUp(ctx, rec, log)
	h := rec.snapshot()
	waves, unverified := checkWaves(h)
	res.violations = append(res.violations, waves...)
	clusterWaves, judged, concurrent, clusterUnverified := checkClusterWaves(h)
	res.violations = append(res.violations, clusterWaves...)
	res.clusterWaveApplies, res.clusterWaveConcurrent = judged, concurrent
	rollouts, rolloutCounts := checkLowerWaveRollouts(h)
	res.violations = append(res.violations, rollouts...)
	res.rollouts = rolloutCounts
	stages, judgedStages, stagesUnverified := checkStageOrder(h, fleetStages(), fleetBakeTimes())
	res.violations = append(res.violations, stages...)
	res.stageRevisions, res.stagesUnverified = judgedStages, stagesUnverified
	res.sourceRevisions = sourceRevisions(h, fleetStages(), fleetPublished)
	e.fleet.mu.Lock()
	pauses := slices.Clone(e.fleet.pauses)
	res.leaves, res.leavesHeld = e.fleet.leaves, e.fleet.held
	e.fleet.mu.Unlock()
	paused, pausedJudged, pausedInFlight, pausedUnverified := checkPaused(h, slices.Sorted(maps.Keys(fleetStages())), pauseWindows(pauses, h.sets))
	res.violations = append(res.violations, paused...)
	res.pauses, res.pausedJudged, res.pausedInFlight, res.pausedUnverified = len(pauses), pausedJudged, pausedInFlight, pausedUnverified
	manualViolations, manualUnverified := checkManual(h)
	res.violations = append(res.violations, manualViolations...)
	approvals, judgedApprovals, boundApprovals, approvalsUnverified := checkApproval(h)
	res.violations = append(res.violations, approvals...)
	res.approvals, res.approvalsBound, res.approvalsUnverified = judgedApprovals, boundApprovals, approvalsUnverified
	res.unverified, res.clusterWaveUnverified, res.manualUnverified = unverified, clusterUnverified, manualUnverified
	for _, gs := range h.gaps {
		res.relists += len(gs)
	}

	log.printf("Quiet window of %s: counting writes", cfg.Quiet)
	quietFrom := time.Now()
	kubeA, convoyA := kubeMetrics(ctx, e.kube), e.metrics(ctx, procAPIServer)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(cfg.Quiet):
	}
	convoyB := e.metrics(ctx, procAPIServer)
	quietTo := time.Now()
	// Which Releases the window's writes changed, as far as the watch has delivered them.
	for _, c := range changedIn(rec.snapshot().states, quietFrom, quietTo) {
		log.printf("Quiet window: the watch saw %s", c)
	}
	var others []string
	res.quietWrites, others, err = e.quietKubeWrites(quietFrom, quietTo)
	if err != nil {
		return nil, err
	}
	for _, o := range others {
		log.printf("Quiet window: not convoy's: %s", o)
	}
	for k, v := range delta(writes(convoyA, convoyResources), writes(convoyB, convoyResources)) {
		res.quietWrites["convoy "+k] += v
	}
	if len(res.quietWrites) > 0 {
		res.violations = append(res.violations, violation{"quiet", "-", fmt.Sprintf("writes in the %s steady window: %v", cfg.Quiet, res.quietWrites)})
	}
	applied := delta(writes(kubeBefore, appliedResources), writes(kubeA, appliedResources))
	for k, v := range applied {
		if k[:5] == "PATCH" || k[:5] == "APPLY" {
			res.applies += v
		}
	}
	// The quiet window's count is only as good as its attribution: the audit log must
	// name convoy's applies of the run as convoy's.
	if res.applies > 0 {
		ours, _, err := e.quietKubeWrites(phaseFrom, quietFrom)
		if err != nil {
			return nil, err
		}
		if ours["patch configmaps"]+ours["patch deployments"]+ours["remote patch configmaps"]+ours["remote patch deployments"] == 0 {
			return nil, fmt.Errorf("the audit logs name none of the run's %.0f applies as convoy's (user agent %s…): the quiet window could not see convoy's writes", res.applies, convoyUserAgents[0])
		}
	}
	// A convoy process that exited is named first: Releases that did not converge
	// are often only its consequence.
	e.checkAlive("at the end of the run")
	e.mu.Lock()
	res.violations = aliveFirst(append(slices.Clone(e.violations), res.violations...))
	e.mu.Unlock()
	res.end = e.snapshotProcs(ctx)
	res.faults = log.faultCounts()
	res.outcomes = d.outcomes()
	res.errorSamples = d.errorSamples()
	res.syncSent, res.syncAck = d.syncSent.Load(), d.syncAck.Load()
	res.wall = time.Since(began)
	for _, v := range res.violations {
		log.printf("VIOLATION %s", v)
	}
	keep = len(res.violations) > 0
	return res, nil
}

// catchUp waits (up to catchUpBound) until the recorder's watch of Releases has
// delivered the current state of every Release. When it has not by then (seed
// 371706423: after a SIGKILL of convoy apiserver near the end of the faults, the
// watch delivered nothing more in the 37 s to the checks, and its last states —
// the settle's /sync answers — read as lower cluster waves never ready), a list
// stands in for the relist that it missed (recorder.standIn), and the log says so.
func (e *env) catchUp(ctx context.Context, rec *recorder, log *eventLog) {
	var list v1alpha1.ReleaseList
	stale := 0
	err := retry(ctx, catchUpBound, func(ctx context.Context) error {
		got := v1alpha1.ReleaseList{}
		if err := e.convoy.Get().Resource(v1alpha1.ResourceReleases).Do(ctx).Into(&got); err != nil {
			return err
		}
		list = got
		if stale = rec.behind(list.Items); stale > 0 {
			return fmt.Errorf("it has not delivered the current state of %d Releases", stale)
		}
		return nil
	})
	if err == nil {
		return
	}
	rv, perr := strconv.ParseInt(list.ResourceVersion, 10, 64)
	if perr != nil {
		log.printf("The harness's watch of Releases may be behind, and no list of Releases could stand in: %v", err)
		return
	}
	rec.standIn(rv, list.Items)
	log.printf("The harness's watch of Releases had not delivered the current state of %d Releases %s after convergence: a list at resourceVersion %d stands in for the relist it missed (what it may hide is not judged)", stale, catchUpBound, rv)
}

// catchUpBound bounds the wait for the recorder's watch of Releases to catch up: a
// reflector whose watch failed again and again waits up to twice its 30 s cap
// between tries (client-go's back-off with jitter 1.0).
const catchUpBound = time.Minute

// aliveFirst puts the "alive" violations (a convoy process that exited) first,
// keeping the order of each part.
func aliveFirst(vs []violation) []violation {
	out := slices.Clone(vs)
	slices.SortStableFunc(out, func(a, b violation) int {
		return cmp.Compare(b2i(a.Invariant != "alive"), b2i(b.Invariant != "alive"))
	})
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withDead adds to err the convoy processes that have exited by now: what stopped the
// run is often only their consequence.
func (e *env) withDead(err error) error {
	e.checkAlive("when the run stopped")
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range e.violations {
		if v.Invariant == "alive" {
			err = fmt.Errorf("%w\n%s", err, v)
		}
	}
	return err
}

// converge polls every Release until each has converged to what its inputs deserve
// (judge, every acknowledged /sync handled, its first object carrying its inputs), or
// timeout passes; it returns how long each took from since, and a violation for each
// that did not converge.
func (e *env) converge(ctx context.Context, rels []*release, namespaces []string, since time.Time, timeout time.Duration, log *eventLog) ([]time.Duration, []violation) {
	done := map[string]time.Duration{}
	why := map[string]string{}
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	lastProgress := time.Now()
	for len(done) < len(rels) && time.Now().Before(deadline) {
		for _, kube := range []kubernetes.Interface{e.kube, e.remoteKube} {
			if n, err := markPodsReady(ctx, kube, namespaces); n > 0 || err != nil {
				log.printf("Marked %d pods Ready again after their node's late heartbeat (kwok does not; %v)", n, err)
			}
		}
		if time.Since(lastProgress) > 30*time.Second {
			lastProgress = time.Now()
			for k, w := range why {
				if _, ok := done[k]; !ok {
					log.printf("%d of %d Releases converged; e.g. %s: %s", len(done), len(rels), k, w)
					break
				}
			}
		}
		list := &v1alpha1.ReleaseList{}
		lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := e.convoy.Get().Resource(v1alpha1.ResourceReleases).Do(lctx).Into(list)
		cancel()
		if err == nil {
			live := map[string]*v1alpha1.Release{}
			for i := range list.Items {
				live[list.Items[i].Namespace+"/"+list.Items[i].Name] = &list.Items[i]
			}
			for _, r := range rels {
				if _, ok := done[r.key()]; ok {
					continue
				}
				ok, reason := e.converged(ctx, r, live[r.key()])
				if ok {
					done[r.key()] = time.Since(since)
				} else {
					why[r.key()] = reason
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-tick.C:
		}
	}
	var out []violation
	keys := make([]string, 0, len(rels))
	for _, r := range rels {
		if _, ok := done[r.key()]; !ok {
			keys = append(keys, r.key())
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, violation{"converge", k, fmt.Sprintf("not converged %s after the faults stopped: %s", timeout, why[k])})
	}
	ds := make([]time.Duration, 0, len(done))
	for _, d := range done {
		ds = append(ds, d)
	}
	log.printf("%d of %d Releases converged (max %s)", len(done), len(rels), percentile(ds, 100).Truncate(time.Millisecond))
	return ds, out
}

// waitNamespacesGone waits, up to namespaceGoneBound, until no namespace of the run is
// being deleted. A namespace whose deletion the driver started, and stopped waiting
// for when the fault phase ended, is still emptied by kube-controller-manager's
// namespace controller after its Releases are gone: its passes (a DELETE of the
// namespace's configmaps, deployments and jobs each, retried with a growing backoff)
// are not convoy's writes and must not fall in the quiet window (seed 11, 6 December:
// chaos-2's last pass came 15 s after every Release had converged).
func (e *env) waitNamespacesGone(ctx context.Context, namespaces []string, log *eventLog) []violation {
	deadline := time.Now().Add(namespaceGoneBound)
	logged := false
	for {
		var deleting []string
		for _, ns := range namespaces {
			n, err := e.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err == nil && n.DeletionTimestamp != nil {
				deleting = append(deleting, ns)
			}
		}
		switch {
		case len(deleting) == 0:
			return nil
		case time.Now().After(deadline):
			return []violation{{"converge", "-", fmt.Sprintf("namespaces %v still being deleted %s after the Releases converged", deleting, namespaceGoneBound)}}
		case !logged:
			log.printf("Waiting up to %s for namespaces %v, being deleted, to be gone", namespaceGoneBound, deleting)
			logged = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// converged says whether r has converged; live is its Release, nil when there is none.
func (e *env) converged(ctx context.Context, r *release, live *v1alpha1.Release) (bool, string) {
	if !r.exists {
		if live != nil {
			return false, "deleted, but the Release is still there (finalizer not done)"
		}
		return true, ""
	}
	if live == nil {
		return false, "the Release is gone"
	}
	degraded := false
	if r.expectFailure() && r.policy == "" {
		inv := &v1alpha1.ReleaseInventory{}
		if err := e.convoy.Get().Namespace(r.ns).Resource(v1alpha1.ResourceReleaseInventories).Name(r.name).Do(ctx).Into(inv); err == nil {
			for _, w := range inv.Status.Waves {
				degraded = degraded || w.Health == v1alpha1.HealthDegraded
			}
		}
	}
	if ok, why := judge(live, r.expectFailure(), degraded); !ok {
		return false, why
	}
	if r.expectFailure() {
		// lastHandledSyncAt moves only when an apply succeeds (SP-10): a render whose
		// wave 1 never becomes healthy keeps its /sync pending, as designed.
		return true, ""
	}
	if why := checkSyncHandled(live, r.manual, r.ackSync, r.ackForce); why != "" {
		return false, why
	}
	cm, err := e.kubeOf(r.cluster).CoreV1().ConfigMaps(r.ns).Get(ctx, r.name+"-first", metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("its wave-0 ConfigMap: %v", err)
	}
	if got := inputsKey(cm.Annotations[annotationToken], cm.Annotations[annotationVersion]); got != r.inputs() {
		return false, fmt.Sprintf("Ready, but its wave-0 ConfigMap has inputs %s, not %s", got, r.inputs())
	}
	return true, ""
}

// checkOrphans lists every object on either cluster that carries a Release's labels:
// each must be in the inventory of a live Release that targets that cluster; a deleted
// Release leaves nothing.
func (e *env) checkOrphans(ctx context.Context, rels []*release) []violation {
	model := map[string]*release{}
	for _, r := range rels {
		model[r.key()] = r
	}
	type obj struct{ cluster, kind, ns, name, release string }
	var objs []obj
	opts := metav1.ListOptions{LabelSelector: v1alpha1.LabelReleaseName}
	for _, cluster := range []string{"", remoteClusterName} {
		kube := e.kubeOf(cluster)
		cms, err1 := kube.CoreV1().ConfigMaps("").List(ctx, opts)
		deps, err2 := kube.AppsV1().Deployments("").List(ctx, opts)
		if err := errors.Join(err1, err2); err != nil {
			return []violation{{"orphans", "-", fmt.Sprintf("listing applied objects on %s: %v", clusterName(cluster), err)}}
		}
		for _, o := range cms.Items {
			objs = append(objs, obj{cluster, "ConfigMap", o.Namespace, o.Name, o.Labels[v1alpha1.LabelReleaseNamespace] + "/" + o.Labels[v1alpha1.LabelReleaseName]})
		}
		for _, o := range deps.Items {
			objs = append(objs, obj{cluster, "Deployment", o.Namespace, o.Name, o.Labels[v1alpha1.LabelReleaseNamespace] + "/" + o.Labels[v1alpha1.LabelReleaseName]})
		}
	}
	invs := map[string]map[string]bool{}
	var out []violation
	for _, o := range objs {
		r := model[o.release]
		where := fmt.Sprintf("%s %s/%s on %s", o.kind, o.ns, o.name, clusterName(o.cluster))
		switch {
		case r == nil || !r.exists:
			out = append(out, violation{"orphans", o.release, where + " is left behind by a deleted Release"})
			continue
		case r.cluster != o.cluster:
			out = append(out, violation{"orphans", o.release, fmt.Sprintf("%s carries its labels, but the Release targets %s", where, clusterName(r.cluster))})
			continue
		}
		inv, ok := invs[o.release]
		if !ok {
			inv = map[string]bool{}
			got := &v1alpha1.ReleaseInventory{}
			if err := e.convoy.Get().Namespace(r.ns).Resource(v1alpha1.ResourceReleaseInventories).Name(r.name).Do(ctx).Into(got); err == nil {
				for _, io := range got.Objects {
					inv[io.Kind+" "+io.Namespace+"/"+io.Name] = true
				}
			}
			invs[o.release] = inv
		}
		if !inv[o.kind+" "+o.ns+"/"+o.name] {
			out = append(out, violation{"orphans", o.release, where + " carries its labels but is not in its inventory"})
		}
	}
	return out
}

// clusterName names a cluster in messages.
func clusterName(cluster string) string {
	if cluster == "" {
		return "the host cluster"
	}
	return "Cluster " + cluster
}
