package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

var httpClient = &http.Client{Timeout: 30 * time.Second}

// heartbeat says whether a kube-apiserver request key is the control plane's own
// periodic work (leader election Leases, kwok's node heartbeats) or a review that
// stores nothing (SubjectAccessReview, TokenReview: convoy apiserver authorizing the
// bench's own reads of its /metrics), not a write of convoy's.
func heartbeat(key string) bool {
	f := strings.Fields(key)
	return slices.ContainsFunc(f, func(w string) bool {
		return w == "leases" || w == "nodes" || w == "subjectaccessreviews" || w == "tokenreviews"
	})
}

// dryRun says whether a key carries the dry_run label (a server-side dry run, which
// kube-apiserver counts as a write but stores nothing).
func dryRun(key string) bool { return slices.Contains(strings.Fields(key), "All") }

// steadyWrites are the writes of the steady window that store something: every write
// on convoy apiserver, and kube-apiserver's writes that are not dry runs nor the
// control plane's heartbeats.
func (r *result) steadyWrites() (convoy, kube float64) {
	convoy = benchenv.SumWhere(r.steady.convoy, benchenv.IsWrite)
	kube = benchenv.SumWhere(r.steady.kube, func(k string) bool { return benchenv.IsWrite(k) && !dryRun(k) && !heartbeat(k) })
	return convoy, kube
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func (r *result) print(w io.Writer) {
	n := float64(r.n)
	fmt.Fprintf(w, "\n## N = %d Releases\n\n", r.n)
	if r.shards > 0 {
		fmt.Fprintf(w, "%d shards: convoy-controller-<i> and convoy-observer-<i> with --shard=<i>, the Releases labelled round robin\n\n", r.shards)
	}
	fmt.Fprintf(w, "load average (1, 5, 15 min): start %s; all Ready %s; end %s\n\n", r.loadStart, r.loadReady, r.loadEnd)
	fmt.Fprintf(w, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(w, "| namespaces of the Releases (-per-namespace) | %d |\n", r.namespaces)
	fmt.Fprintf(w, "| creates of the %d Releases (author, %s) | %s (%.0f /s; %d failed tries) |\n", r.n, fmt.Sprintf("%d clients", r.clients),
		r.createElapsed.Round(time.Millisecond), n/r.createElapsed.Seconds(), r.createFailures)
	fmt.Fprintf(w, "| Ready=True | %d / %d |\n", r.ready, r.n)
	what := "first create → all Ready"
	if r.ready < r.n {
		what = "first create → the last Ready seen (not all Ready)"
	}
	fmt.Fprintf(w, "| %s | **%s** (%.1f Releases/s) |\n", what, r.toReady.Round(100*time.Millisecond), float64(r.ready)/r.toReady.Seconds())
	fmt.Fprintf(w, "| create → Ready per Release, p50 / p99 / max | %s / %s / %s |\n",
		r.p50.Round(100*time.Millisecond), r.p99.Round(100*time.Millisecond), r.max.Round(100*time.Millisecond))
	kt, ct := benchenv.Total(r.toReadyReq.kube), benchenv.Total(r.toReadyReq.convoy)
	fmt.Fprintf(w, "| requests per Release: kube-apiserver / convoy apiserver | **%.1f / %.1f** |\n", kt/n, ct/n)
	fmt.Fprintf(w, "| … convoy controller's client / observer's client | %.1f / %.1f |\n", benchenv.Total(r.toReadyReq.ctl)/n, benchenv.Total(r.toReadyReq.obs)/n)
	fmt.Fprintf(w, "| … SubjectAccessReviews on kube-apiserver | %.2f |\n",
		benchenv.SumWhere(r.toReadyReq.kube, func(k string) bool { return strings.Contains(k, "subjectaccessreviews") })/n)
	fmt.Fprintf(w, "| 409s: kube-apiserver / convoy apiserver | %.0f / %.0f |\n",
		benchenv.SumWhere(r.toReadyReq.kube, benchenv.Is409), benchenv.SumWhere(r.toReadyReq.convoy, benchenv.Is409))
	fmt.Fprintf(w, "| reconciles (controller result) | %s |\n", benchenv.FmtMap(r.toReadyReq.reconciles, 8))
	if s := r.sync; s != nil {
		fmt.Fprintf(w, "| /sync → Applied, manual %d-object Release, idle (%d /syncs; load %s), p50 / p99 / max | **%s / %s** / %s |\n",
			s.objects, s.syncs, s.load, s.p50.Round(time.Millisecond), s.p99.Round(time.Millisecond), s.max.Round(time.Millisecond))
	}
	if s := r.loadSync; s != nil {
		fmt.Fprintf(w, "| /sync → Applied, the same Release, under the load of the %d Releases (%d /syncs; load %s), p50 / p99 / max | **%s / %s** / %s |\n",
			r.n, s.syncs, s.load, s.p50.Round(time.Millisecond), s.p99.Round(time.Millisecond), s.max.Round(time.Millisecond))
	}
	if r.steadyDur > 0 {
		cw, kw := r.steadyWrites()
		fmt.Fprintf(w, "| **steady window** (%s): writes on convoy apiserver / on kube-apiserver (not dry runs, Leases, Nodes or reviews) | **%.0f / %.0f** |\n",
			r.steadyDur.Round(time.Second), cw, kw)
		fmt.Fprintf(w, "| steady: watch events Releases / ReleaseInventories | %d / %d |\n", r.steadyEvents["releases"], r.steadyEvents["releaseinventories"])
		fmt.Fprintf(w, "| steady: requests of the controller / observer clients | %s / %s |\n", benchenv.FmtMap(r.steady.ctl, 6), benchenv.FmtMap(r.steady.obs, 6))
		fmt.Fprintf(w, "| steady: kube-apiserver dry runs | %.0f |\n", benchenv.SumWhere(r.steady.kube, dryRun))
		fmt.Fprintf(w, "| steady: reconciles | %s |\n", benchenv.FmtMap(r.steady.reconciles, 6))
	}

	fmt.Fprintf(w, "\nProcesses (CPU seconds first create → all Ready; in the steady window; RSS at the end, of which anonymous (not the executable's pages); peak RSS):\n\n")
	fmt.Fprintf(w, "| process | CPU s to Ready | CPU s steady | RSS | anonymous | peak RSS |\n|---|---:|---:|---:|---:|---:|\n")
	for _, e := range benchenv.Top(r.cpu, 20) {
		p := r.procs[e.K]
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.0f MiB | %.0f MiB | %.0f MiB |\n", e.K, e.V, r.steadyCPU[e.K], mib(p.RSSKiB), mib(p.AnonKiB), mib(p.HWMKiB))
	}
	fmt.Fprintf(w, "| all | %.1f | %.1f | | | |\n", benchenv.Total(r.cpu), benchenv.Total(r.steadyCPU))
	for _, p := range slices.Sorted(maps.Keys(r.heapStart)) {
		for _, h := range []struct {
			when string
			h    heap
		}{{"the start", r.heapStart[p]}, {"all Ready", r.heapReady[p]}, {"the end of the steady window", r.heapEnd[p]}} {
			if h.h.inuse > 0 {
				fmt.Fprintf(w, "\n%s Go heap at %s: live %.1f MiB (%.1f KiB per Release more than at the start); in use %.0f MiB, %.0f objects, garbage included; GOGC %.0f",
					p, h.when, h.h.live/(1<<20), (h.h.live-r.heapStart[p].live)/1024/n, h.h.inuse/(1<<20), h.h.objects, h.h.gogc)
			}
		}
	}
	fmt.Fprintln(w)

	for _, s := range []struct {
		title string
		m     map[string]float64
	}{
		{"kube-apiserver", r.toReadyReq.kube},
		{"convoy apiserver", r.toReadyReq.convoy},
		{"convoy controller's client", r.toReadyReq.ctl},
		{"convoy observer's client", r.toReadyReq.obs},
	} {
		fmt.Fprintf(w, "\n%s requests, first create → all Ready (verb [dry run] [group] resource [subresource] code: count, per Release; ≥ 0.05 per Release):\n\n", s.title)
		for _, e := range benchenv.Top(s.m, len(s.m)) {
			if e.V/n >= 0.05 {
				fmt.Fprintf(w, "    %-64s %8.0f  %6.2f\n", e.K, e.V, e.V/n)
			}
		}
	}
	fmt.Fprintf(w, "\nMean durations, first create → all Ready (count, mean):\n\n")
	keys := make([]string, 0, len(r.toReadyReq.means))
	for k := range r.toReadyReq.means {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m := r.toReadyReq.means[k]
		fmt.Fprintf(w, "    %-56s %8.0f  %9.1f ms\n", k, m.Count, 1000*m.Sum/m.Count)
	}
	if r.steadyDur > 0 {
		fmt.Fprintf(w, "\nSteady window writes: convoy apiserver: %s\n", benchenv.FmtMap(benchenv.Filter(r.steady.convoy, benchenv.IsWrite), 10))
		fmt.Fprintf(w, "kube-apiserver (every client, with dry runs and heartbeats): %s\n", benchenv.FmtMap(benchenv.Filter(r.steady.kube, benchenv.IsWrite), 12))
	}
	if r.alerts != nil {
		r.alerts.print(w, r.n)
	}
	if r.reopened > 0 {
		fmt.Fprintf(w, "\n(the bench's watches were reopened %d times)\n", r.reopened)
	}
}

func printSummary(w io.Writer, rs []*result) {
	if len(rs) == 0 {
		return // -floor, or no N finished
	}
	fmt.Fprintf(w, "\n## Summary\n\n")
	fmt.Fprintf(w, "(with -shards: CPU summed over the shards, peak RSS of the largest shard)\n\n")
	fmt.Fprintf(w, "| Releases | creates | first create → all Ready | per Release p50 / p99 | CPU s to Ready (controller, observer, convoy apiserver, kube-apiserver, etcd, all) | peak RSS controller / observer / convoy apiserver | requests / Release kube-apiserver / convoy apiserver (SAR) | steady writes convoy / kube |\n")
	fmt.Fprintf(w, "|---:|---:|---:|---:|---|---|---|---:|\n")
	for _, r := range rs {
		n := float64(r.n)
		cw, kw := r.steadyWrites()
		fmt.Fprintf(w, "| %d | %s | %s | %s / %s | %.1f, %.1f, %.1f, %.1f, %.1f, %.1f | %.0f / %.0f / %.0f MiB | %.1f / %.1f (%.2f) | %.0f / %.0f |\n",
			r.n, r.createElapsed.Round(100*time.Millisecond), r.toReady.Round(100*time.Millisecond),
			r.p50.Round(100*time.Millisecond), r.p99.Round(100*time.Millisecond),
			sumOf(r.cpu, "convoy-controller"), sumOf(r.cpu, "convoy-observer"), r.cpu["convoy-apiserver"], r.cpu["kube-apiserver"], r.cpu["etcd"], benchenv.Total(r.cpu),
			mib(peakOf(r.procs, "convoy-controller")), mib(peakOf(r.procs, "convoy-observer")), mib(r.procs["convoy-apiserver"].HWMKiB),
			benchenv.Total(r.toReadyReq.kube)/n, benchenv.Total(r.toReadyReq.convoy)/n,
			benchenv.SumWhere(r.toReadyReq.kube, func(k string) bool { return strings.Contains(k, "subjectaccessreviews") })/n,
			cw, kw)
	}
	limit := "no memory limit"
	if f := flag.Lookup("memory-limit"); f != nil && f.Value.String() != "0" {
		limit = "GOMEMLIMIT=" + f.Value.String() + "MiB on the controller and the observer"
	}
	fmt.Fprintf(w, "\n%d CPUs; %s; default flags of every convoy process; %s\n", runtime.NumCPU(), runtime.Version(), limit)
	args := []string{"go run ./bench/e2e"}
	flag.Visit(func(f *flag.Flag) { args = append(args, fmt.Sprintf("-%s=%s", f.Name, f.Value)) })
	fmt.Fprintf(w, "Command: %s\n", strings.Join(args, " "))
}

// sumOf is the sum of m's entries for process, or for its shards (process-<i>).
func sumOf(m map[string]float64, process string) float64 {
	var t float64
	for k, v := range m {
		if k == process || strings.HasPrefix(k, process+"-") {
			t += v
		}
	}
	return t
}

// peakOf is the largest peak RSS of process, or of its shards (process-<i>), in KiB.
func peakOf(procs map[string]benchenv.ProcStat, process string) int64 {
	var p int64
	for k, v := range procs {
		if k == process || strings.HasPrefix(k, process+"-") {
			p = max(p, v.HWMKiB)
		}
	}
	return p
}
