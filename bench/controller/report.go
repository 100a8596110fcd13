package main

import (
	"fmt"
	"io"
	"runtime"
	"sort"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

func (r *result) print(w io.Writer) {
	n := float64(r.n)
	fmt.Fprintf(w, "\n## N = %d Releases\n\n", r.n)
	fmt.Fprintf(w, "load average before / after: %s / %s\n\n", r.loadBefore, r.loadAfter)
	fmt.Fprintf(w, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(w, "| creates (all N) | %s (%d failed tries) |\n", r.createElapsed.Round(time.Millisecond), r.createFailures)
	fmt.Fprintf(w, "| Applied=True | %d / %d |\n", r.applied, r.n)
	fmt.Fprintf(w, "| first create → all Applied | **%s** (%.1f Releases/s) |\n", r.toApplied.Round(time.Millisecond), n/r.toApplied.Seconds())
	fmt.Fprintf(w, "| create → Applied per Release, p50 / p90 / max | %s / %s / %s |\n", r.p50.Round(time.Millisecond), r.p90.Round(time.Millisecond), r.maxLat.Round(time.Millisecond))
	c := r.ctlRSSApplied
	fmt.Fprintf(w, "| controller RSS when all Applied (peak) | **%.0f MiB** (%.0f MiB) |\n", float64(c.RSSKiB)/1024, float64(c.HWMKiB)/1024)
	if e, ok := r.procsEnd["convoy-controller"]; ok {
		fmt.Fprintf(w, "| controller RSS after the steady window (peak) | %.0f MiB (%.0f MiB) |\n", float64(e.RSSKiB)/1024, float64(e.HWMKiB)/1024)
	}
	ctl := benchenv.Total(r.apply.ctl)
	fmt.Fprintf(w, "| controller API requests (its client) | %.0f = **%.1f per Release** |\n", ctl, ctl/n)
	fmt.Fprintf(w, "| … of which writes / 409 | %.0f (%.1f per Release) / %.0f |\n",
		benchenv.SumWhere(r.apply.ctl, benchenv.IsWrite), benchenv.SumWhere(r.apply.ctl, benchenv.IsWrite)/n, benchenv.SumWhere(r.apply.ctl, benchenv.Is409))
	kt := benchenv.Total(r.apply.kube)
	fmt.Fprintf(w, "| kube-apiserver requests, every client (%.0f per Release) / writes / 409 | %.0f / %.0f / %.0f |\n",
		kt/n, kt, benchenv.SumWhere(r.apply.kube, benchenv.IsWrite), benchenv.SumWhere(r.apply.kube, benchenv.Is409))
	ct := benchenv.Total(r.apply.convoy)
	fmt.Fprintf(w, "| convoy apiserver requests (%.1f per Release) / writes / 409 | %.0f / %.0f / %.0f |\n",
		ct/n, ct, benchenv.SumWhere(r.apply.convoy, benchenv.IsWrite), benchenv.SumWhere(r.apply.convoy, benchenv.Is409))
	fmt.Fprintf(w, "| reconciles (controller, result) | %s |\n", benchenv.FmtMap(r.apply.reconciles, 6))
	fmt.Fprintf(w, "| CPU seconds, first create → all Applied | %s |\n", benchenv.FmtCPU(r.cpuApply))
	if r.steadyDur > 0 {
		fmt.Fprintf(w, "| **steady window** (%s) watch events Releases / ReleaseInventories | **%.0f / %.0f** (%s; %s) |\n",
			r.steadyDur.Round(time.Second), benchenv.Total(r.steadyEvents["releases"]), benchenv.Total(r.steadyEvents["releaseinventories"]),
			benchenv.FmtMap(r.steadyEvents["releases"], 3), benchenv.FmtMap(r.steadyEvents["releaseinventories"], 3))
		fmt.Fprintf(w, "| steady: controller requests / writes | %.0f / %.0f (%s) |\n", benchenv.Total(r.steady.ctl), benchenv.SumWhere(r.steady.ctl, benchenv.IsWrite), benchenv.FmtMap(r.steady.ctl, 6))
		fmt.Fprintf(w, "| steady: kube-apiserver writes / convoy apiserver writes | %.0f / %.0f |\n", benchenv.SumWhere(r.steady.kube, benchenv.IsWrite), benchenv.SumWhere(r.steady.convoy, benchenv.IsWrite))
		fmt.Fprintf(w, "| steady: reconciles | %s |\n", benchenv.FmtMap(r.steady.reconciles, 6))
	}
	fmt.Fprintf(w, "\nController time, first create → all Applied (histogram: count, mean):\n\n")
	keys := make([]string, 0, len(r.apply.means))
	for k := range r.apply.means {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := r.apply.means[k]
		fmt.Fprintf(w, "    %-48s %7.0f  %8.1f ms\n", k, m.Count, 1000*m.Sum/m.Count)
	}
	fmt.Fprintf(w, "\nController requests, first create → all Applied (method code: count, per Release):\n\n")
	for _, e := range benchenv.Top(r.apply.ctl, 12) {
		fmt.Fprintf(w, "    %-28s %7.0f  %5.2f\n", e.K, e.V, e.V/n)
	}
	fmt.Fprintf(w, "\nkube-apiserver requests, first create → all Applied (verb resource [subresource] code; top 15):\n\n")
	for _, e := range benchenv.Top(r.apply.kube, 15) {
		fmt.Fprintf(w, "    %-48s %7.0f  %5.2f\n", e.K, e.V, e.V/n)
	}
	fmt.Fprintf(w, "\nconvoy apiserver requests, first create → all Applied (top 12):\n\n")
	for _, e := range benchenv.Top(r.apply.convoy, 12) {
		fmt.Fprintf(w, "    %-48s %7.0f  %5.2f\n", e.K, e.V, e.V/n)
	}
	if r.steadyDur > 0 {
		fmt.Fprintf(w, "\nkube-apiserver writes in the steady window: %s\n", benchenv.FmtMap(benchenv.Filter(r.steady.kube, benchenv.IsWrite), 10))
		fmt.Fprintf(w, "convoy apiserver writes in the steady window: %s\n", benchenv.FmtMap(benchenv.Filter(r.steady.convoy, benchenv.IsWrite), 10))
	}
	if r.watchRestarts > 0 {
		fmt.Fprintf(w, "\n(the bench's watches were reopened %d times)\n", r.watchRestarts)
	}
	if !r.kubeSeesReleases {
		fmt.Fprintf(w, "\n(kube-apiserver's apiserver_request_total does not count the requests it proxies to convoy apiserver; those are in convoy apiserver's figures)\n")
	}
}

func (cfg *config) printSummary(w io.Writer, rs []*result) {
	fmt.Fprintf(w, "\n## Summary\n\n")
	fmt.Fprintf(w, "| Releases | first create → all Applied | controller RSS (peak) | controller requests / Release | kube-apiserver requests / Release | convoy apiserver requests / Release | 409s | steady writes (Release / Inventory events) |\n")
	fmt.Fprintf(w, "|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		n := float64(r.n)
		fmt.Fprintf(w, "| %d | %s | %.0f MiB (%.0f) | %.1f | %.1f | %.1f | %.0f | %.0f / %.0f |\n", r.n,
			r.toApplied.Round(100*time.Millisecond), float64(r.ctlRSSApplied.RSSKiB)/1024, float64(r.procsEnd["convoy-controller"].HWMKiB)/1024,
			benchenv.Total(r.apply.ctl)/n, benchenv.Total(r.apply.kube)/n, benchenv.Total(r.apply.convoy)/n,
			benchenv.SumWhere(r.apply.ctl, benchenv.Is409)+benchenv.SumWhere(r.apply.kube, benchenv.Is409)+benchenv.SumWhere(r.apply.convoy, benchenv.Is409),
			benchenv.Total(r.steadyEvents["releases"]), benchenv.Total(r.steadyEvents["releaseinventories"]))
	}
	fmt.Fprintf(w, "\nController --concurrency=%d --resync=%s; steady window %s; %d simulated node(s); %d CPUs; %s\n",
		cfg.Concurrency, cfg.Resync, cfg.Steady, cfg.Nodes, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "Command: %s\n", command())
}
