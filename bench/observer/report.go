package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

func mib(kib int64) float64 { return float64(kib) / 1024 }

// pct is the p-th percentile (0–100) of ds, nearest rank; 0 when empty.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func spread(ds []time.Duration) string {
	return fmt.Sprintf("%s / %s / %s (%d Releases)", pct(ds, 50).Round(time.Millisecond), pct(ds, 99).Round(time.Millisecond), pct(ds, 100).Round(time.Millisecond), len(ds))
}

// perMinute is a count over d as a rate.
func perMinute(v float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return v / d.Minutes()
}

func (r *result) print(w io.Writer) {
	l := r.lat
	fmt.Fprintf(w, "\n## N = %d Releases\n\n", r.n)
	fmt.Fprintf(w, "load average before / after: %s / %s\n\n", r.loadBefore, r.loadAfter)
	fmt.Fprintf(w, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(w, "| creates and the person's /sync (all N) | %s (%d failed tries) |\n", r.createElapsed.Round(time.Millisecond), r.failedTries)
	fmt.Fprintf(w, "| Ready (Applied and Healthy) | %d / %d |\n", r.ready, r.n)
	if !l.lastReady.IsZero() {
		fmt.Fprintf(w, "| first person's /sync → all Ready | **%s** |\n", l.lastReady.Sub(l.firstSync).Round(time.Millisecond))
	}
	fmt.Fprintf(w, "| person's /sync → Ready, per Release, p50 / p99 / max | %s |\n", spread(l.syncToReady))
	fmt.Fprintf(w, "| … person's /sync → wave 0 Healthy (Deployment applied, Pod scheduled and Ready on kwok) | %s |\n", spread(l.syncToHealthy))
	fmt.Fprintf(w, "| … observer's wave /sync → Ready (wave 1 applied and assessed) | %s |\n", spread(l.waveSyncReady))
	fmt.Fprintf(w, "| **wave 0 Healthy → observer's /sync**, p50 / p99 / max | **%s** |\n", spread(l.healthyToSync))
	fmt.Fprintf(w, "| later of (wave 0 Healthy, Release WaitingForSyncWave) → observer's /sync, p50 / p99 / max | %s |\n", spread(l.triggerToSync))
	if l.noWaveSync > 0 || l.notHealthySeen > 0 {
		fmt.Fprintf(w, "| Releases without an observer /sync seen after Healthy (of which one seen before: watch skew) / Deployment never seen Current | %d (%d) / %d |\n", l.noWaveSync, l.early, l.notHealthySeen)
	}
	fmt.Fprintf(w, "| observer /syncs seen per Release (count: Releases) | %s |\n", fmtInts(l.observerSyncs))
	fmt.Fprintf(w, "| observer, first create → all Ready: /sync requests / triggers / status writes / assessments | %.0f / %s / %.0f / %.0f |\n",
		r.assess.syncRequests, benchenv.FmtMap(r.assess.triggers, 3), r.assess.statusWrites, r.assess.assessments)
	fmt.Fprintf(w, "| observer client requests, first create → all Ready | %.0f (%s) |\n", benchenv.Total(r.assess.requests), benchenv.FmtMap(r.assess.requests, 6))
	fmt.Fprintf(w, "| controller, first create → all Ready: reconciles (result) / mean reconcile / mean queue wait | %s / %s / %s |\n",
		benchenv.FmtMap(r.ctlAssess.reconciles, 4), meanOf(r.ctlAssess.reconcile), meanOf(r.ctlAssess.queueWait))
	fmt.Fprintf(w, "| **observer RSS** when all Ready / largest sampled / peak (VmHWM) | **%.0f MiB** / %.0f MiB / %.0f MiB |\n", mib(r.obsReady.RSSKiB), mib(r.obsRSSMax), mib(r.obsReady.HWMKiB))
	fmt.Fprintf(w, "| **observer CPU**, first create → all Ready | **%.1f s** |\n", r.cpuAssess["convoy-observer"])
	fmt.Fprintf(w, "| CPU seconds, first create → all Ready, every process | %s |\n", benchenv.FmtCPU(r.cpuAssess))
	if r.steadyDur > 0 {
		d := r.steadyDur
		cw := benchenv.SumWhere(r.convoySteady, benchenv.IsWrite)
		fmt.Fprintf(w, "| all Ready → observer quiet for %s | %s |\n", quiet, r.quietAfter.Round(time.Second))
		fmt.Fprintf(w, "| **steady window** | %s |\n", d.Round(time.Second))
		fmt.Fprintf(w, "| steady: observer status writes / /sync requests (its metrics) | **%.0f / %.0f** (%.1f / %.1f per minute) |\n",
			r.steady.statusWrites, r.steady.syncRequests, perMinute(r.steady.statusWrites, d), perMinute(r.steady.syncRequests, d))
		fmt.Fprintf(w, "| steady: convoy apiserver writes (every client) | **%.0f** (%.1f per minute; %s) |\n", cw, perMinute(cw, d), benchenv.FmtMap(benchenv.Filter(r.convoySteady, benchenv.IsWrite), 6))
		fmt.Fprintf(w, "| steady: watch events Releases / ReleaseInventories | %d / %d |\n", r.steadyEvents["releases"], r.steadyEvents["releaseinventories"])
		fmt.Fprintf(w, "| steady: observer assessments (reconciles by result) | %.0f = %.2f per Release (%s) |\n", r.steady.assessments, r.steady.assessments/float64(r.n), benchenv.FmtMap(r.steady.reconciles, 4))
		fmt.Fprintf(w, "| steady: observer client requests | %.0f (%s) |\n", benchenv.Total(r.steady.requests), benchenv.FmtMap(r.steady.requests, 6))
		fmt.Fprintf(w, "| **observer RSS** after the steady window (peak) | **%.0f MiB** (%.0f MiB) |\n", mib(r.obsEnd.RSSKiB), mib(r.obsEnd.HWMKiB))
		rss := make([]string, len(r.steadyRSS))
		for i, k := range r.steadyRSS {
			rss[i] = fmt.Sprintf("%.0f", mib(k))
		}
		fmt.Fprintf(w, "| steady: observer RSS every 10 s (MiB) | %s |\n", strings.Join(rss, ", "))
		fmt.Fprintf(w, "| **observer CPU** in the steady window | **%.2f s** (%.2f s per minute) |\n", r.cpuSteady["convoy-observer"], perMinute(r.cpuSteady["convoy-observer"], d))
		fmt.Fprintf(w, "| steady: controller reconciles (result) / mean reconcile | %s / %s |\n", benchenv.FmtMap(r.ctlSteady.reconciles, 4), meanOf(r.ctlSteady.reconcile))
		fmt.Fprintf(w, "| CPU seconds in the steady window, every process | %s |\n", benchenv.FmtCPU(r.cpuSteady))
	}
	fmt.Fprintf(w, "\nconvoy apiserver requests, first create → all Ready (verb resource subresource code; top 12):\n\n")
	for _, e := range benchenv.Top(r.convoyAssess, 12) {
		fmt.Fprintf(w, "    %-48s %7.0f  %5.2f per Release\n", e.K, e.V, e.V/float64(r.n))
	}
	if r.watchRestarts > 0 {
		fmt.Fprintf(w, "\n(the bench's watches were reopened %d times)\n", r.watchRestarts)
	}
}

func meanOf(m benchenv.Mean) string {
	if m.Count == 0 {
		return "-"
	}
	return (time.Duration(m.Sum / m.Count * float64(time.Second))).Round(time.Millisecond).String()
}

func fmtInts(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func (cfg *config) printSummary(w io.Writer, rs []*result) {
	fmt.Fprintf(w, "\n## Summary\n\n")
	fmt.Fprintf(w, "| Releases | /sync → all Ready | observer RSS all Ready / steady (peak) | observer CPU s: assessing / steady per min | wave Healthy → /sync p50 / p99 | steady writes/min: inventory status / observer /sync / convoy apiserver |\n")
	fmt.Fprintf(w, "|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		d := r.steadyDur
		fmt.Fprintf(w, "| %d | %s | %.0f / %.0f MiB (%.0f) | %.1f / %.2f | %s / %s | %.1f / %.1f / %.1f |\n", r.n,
			r.lat.lastReady.Sub(r.lat.firstSync).Round(100*time.Millisecond),
			mib(r.obsReady.RSSKiB), mib(r.obsEnd.RSSKiB), mib(max(r.obsEnd.HWMKiB, r.obsReady.HWMKiB)),
			r.cpuAssess["convoy-observer"], perMinute(r.cpuSteady["convoy-observer"], d),
			pct(r.lat.healthyToSync, 50).Round(time.Millisecond), pct(r.lat.healthyToSync, 99).Round(time.Millisecond),
			perMinute(r.steady.statusWrites, d), perMinute(r.steady.syncRequests, d), perMinute(benchenv.SumWhere(r.convoySteady, benchenv.IsWrite), d))
	}
	fmt.Fprintf(w, "\nobserver and controller --concurrency=%d --resync=%s; steady window %s; %d simulated node(s); wave-0 replicas %d; %d CPUs; %s\n",
		cfg.Concurrency, cfg.Resync, cfg.Steady, cfg.Nodes, cfg.replicas, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "Command: %s\n", command())
}
