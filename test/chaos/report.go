package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// report writes the run's table: faults by kind, /sync sent and handled, applies,
// violations, convergence, and the processes at start and end.
func (r *result) report(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	c := r.cfg
	p("")
	p("## chaos run, seed %d (replay: -seed=%d)", c.Seed, c.Seed)
	p("")
	p("%d Releases in %d namespaces, %d kwok nodes, %d driver steps from %d clients, fault phase %s, wall %s",
		c.Releases, c.Namespaces, c.Nodes, c.Steps, c.Workers, c.Duration, r.wall.Truncate(time.Second))
	p("")
	p("| what | value |")
	p("| --- | --- |")
	for _, k := range faultKinds {
		if n := r.faults[string(k)]; n > 0 {
			p("| fault: %s | %d |", k, n)
		}
	}
	if len(r.handovers) > 0 {
		p("| leader handovers after a SIGKILL: p50 / max | %s / %s |", fmtDur(percentile(r.handovers, 50)), fmtDur(percentile(r.handovers, 100)))
	}
	if r.leaseLosses > 0 {
		p("| controller replicas that lost their lease, started again | %d |", r.leaseLosses)
	}
	p("| /sync sent (acknowledged) | %d (%d) |", r.syncSent, r.syncAck)
	p("| driver actions | %s |", fmtCounts(r.outcomes))
	for _, k := range sortedKeys(r.errorSamples) {
		first, _, _ := strings.Cut(r.errorSamples[k], "\n") // a burst joins six
		p("| first %s error | %s |", k, strings.ReplaceAll(first, "|", "/"))
	}
	p("| applies and patches of applied objects (kube-apiserver counters, reset by its restarts) | %.0f |", r.applies)
	p("| converged within %s | %d of %d |", c.Converge, len(r.converged), len(r.converged)+r.notConverged)
	p("| convergence p50 / p99 / max | %s / %s / %s |", fmtDur(percentile(r.converged, 50)), fmtDur(percentile(r.converged, 99)), fmtDur(percentile(r.converged, 100)))
	p("| writes in the %s quiet window | %.0f |", c.Quiet, sumValues(r.quietWrites))
	p("| relists of the harness's watches (states in between unseen) | %d |", r.relists)
	p("| wave checks not judged: no lower wave seen, or a relist hid when it became healthy | %d |", r.unverified)
	p("| manual-mode applies not judged: a relist may have hidden the state before | %d |", r.manualUnverified)
	p("| manual-mode applies judged against the render their /sync approved (bound to a render) | %d (%d) |", r.approvals, r.approvalsBound)
	p("| … not judged: an approved render's inputs unknown, or a relist may have hidden a state | %d |", r.approvalsUnverified)
	p("| applies of cluster wave 1 or 2 judged against the lower waves | %d |", r.clusterWaveApplies)
	p("| … of which raced a lower wave's change (not violations) | %d |", r.clusterWaveConcurrent)
	p("| … not judged against a lower Release: a relist may have hidden its state | %d |", r.clusterWaveUnverified)
	p("| applies of cluster wave 1 or 2 judged against the rollout of a lower Release reported Ready | %d |", r.rollouts.judged)
	p("| … of which came after the lower one's latest render began (not violations) | %d |", r.rollouts.concurrent)
	p("| … not judged: a relist may have hidden when its objects became healthy | %d |", r.rollouts.unverified)
	p("| revisions of the ReleaseSet's later stage judged against its earlier stage | %d |", r.stageRevisions)
	p("| … not judged: a relist may have hidden the earlier stage's state | %d |", r.stagesUnverified)
	p("| … of which at the chart version published during the run (revisions from the set's source) | %d |", r.sourceRevisions)
	p("| ReleaseSet pauses; states of its Releases judged while paused | %d; %d |", r.pauses, r.pausedJudged)
	p("| … changes written by a reconcile in flight at the pause (not violations); not judged for a relist | %d; %d |", r.pausedInFlight, r.pausedUnverified)
	p("| Cluster leaves of the set mid-stage; removals held (MassRemoval) and acknowledged | %d; %d |", r.leaves, r.leavesHeld)
	p("| **invariant violations** | **%d** |", len(r.violations))
	p("")
	p("| process | RSS start → end (MiB) | goroutines start → end |")
	p("| --- | --- | --- |")
	for _, name := range reportedProcs {
		a, b := r.start[name], r.end[name]
		g := "-"
		if a.Goroutines >= 0 && b.Goroutines >= 0 {
			g = fmt.Sprintf("%d → %d", a.Goroutines, b.Goroutines)
		}
		restarted := ""
		switch {
		case b.PID == 0:
			restarted = " (not running at the end)"
		case a.PID != b.PID:
			restarted = " (restarted)"
		}
		p("| %s%s | %.0f → %.0f | %s |", name, restarted, float64(a.RSSKiB)/1024, float64(b.RSSKiB)/1024, g)
	}
	if len(r.samples) > 0 {
		p("")
		head, sep := "| process | start |", "| --- | --- |"
		for _, s := range r.samples {
			head += fmt.Sprintf(" %s |", s.at.Round(time.Second))
			sep += " --- |"
		}
		p("RSS in MiB (goroutines) during the fault phase, then at the end:")
		p("")
		p("%s end |", head)
		p("%s --- |", sep)
		cell := func(s procStat) string {
			if s.PID == 0 {
				return "down"
			}
			if s.Goroutines >= 0 {
				return fmt.Sprintf("%.0f (%d)", float64(s.RSSKiB)/1024, s.Goroutines)
			}
			return fmt.Sprintf("%.0f", float64(s.RSSKiB)/1024)
		}
		for _, name := range reportedProcs {
			row := fmt.Sprintf("| %s | %s |", name, cell(r.start[name]))
			for _, s := range r.samples {
				row += " " + cell(s.procs[name]) + " |"
			}
			p("%s %s |", row, cell(r.end[name]))
		}
	}
	for _, v := range r.violations {
		p("- %s", v)
	}
}

func fmtDur(d time.Duration) string { return d.Truncate(100 * time.Millisecond).String() }

func fmtCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sumValues(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
