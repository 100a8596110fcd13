package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

type report struct {
	cfg                   config
	started               time.Time
	loadBefore, loadAfter string
	sync                  []*syncLevel
	lw                    *listWatch
	final                 map[string]benchenv.ProcStat
}

// cpuOrder is the order of the processes in CPU columns.
var cpuOrder = []string{"convoy-apiserver", "kube-apiserver", "etcd", "bench client"}

func (r *report) print(w io.Writer, e *env) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("\n## convoy apiserver benchmark (%s)\n\n", r.started.UTC().Format(time.RFC3339))
	p("- Machine: %s\n", machine())
	p("- Load average (1, 5, 15 min): %s at the start, %s at the end\n", r.loadBefore, r.loadAfter)
	p("- Command: `%s`\n", command())
	p("- Path: client (HTTP/2, one connection, QPS %.0f/burst %d) → kube-apiserver (aggregator) → convoy apiserver (separate process, pid %d) → etcd; loopback only\n\n",
		r.cfg.qps, r.cfg.burst, e.PID("convoy-apiserver"))

	if len(r.sync) > 0 {
		p("### POST releases/<name>/sync\n\n")
		p("Each level: up to %d requests or %s, whichever ends first; %d unmeasured warm-up requests before the first level. Latency is the client's, of successful requests.\n\n",
			r.cfg.requests, r.cfg.duration, r.cfg.warmup)
		p("| Releases | clients | ok / sent | time | req/s | p50 | p99 | max | failures | in convoy (mean) | etcd txn (mean) | etcd txns / req | CPU ms / req: convoy, kube-apiserver, etcd, client |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n")
		for _, l := range r.sync {
			targets := fmt.Sprintf("%d (spread)", l.targets)
			if l.mode == "one" {
				targets = "1 (contention)"
			}
			inConvoy := "?"
			if l.serverRequests > 0 {
				inConvoy = ms(time.Duration(l.serverSeconds / l.serverRequests * float64(time.Second)))
			}
			txns, txnMean := "?", "?"
			if l.etcdUpdates > 0 {
				txnMean = ms(time.Duration(l.etcdUpdateSeconds / l.etcdUpdates * float64(time.Second)))
			}
			if l.ok > 0 {
				txns = fmt.Sprintf("%.2f", l.etcdUpdates/float64(l.ok))
			}
			var cpu []string
			for _, k := range cpuOrder {
				cpu = append(cpu, fmt.Sprintf("%.2f", l.cpu[k]*1000/float64(max(l.sent, 1))))
			}
			p("| %s | %d | %d / %d | %.1f s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				targets, l.concurrency, l.ok, l.sent, l.elapsed.Seconds(), l.rps(),
				ms(l.percentile(0.5)), ms(l.percentile(0.99)), ms(l.percentile(1)), codes(l.codes),
				inConvoy, txnMean, txns, strings.Join(cpu, ", "))
		}
		p("\n")
		p("- \"in convoy\": convoy apiserver's own apiserver_request_duration_seconds of /sync (mean); \"etcd txn\": the mean time of one of its etcd update transactions; \"etcd txns / req\": its etcd update transactions per successful /sync (above 1: conflicts retried inside the server).\n")
		var problems []string
		for _, l := range r.sync {
			for c, e := range l.firstErr {
				problems = append(problems, fmt.Sprintf("%s, %s: HTTP %d, first: %s", l.mode, clients(l.concurrency), c, e))
			}
			for _, pr := range l.problems {
				problems = append(problems, fmt.Sprintf("%s, %s: %s", l.mode, clients(l.concurrency), pr))
			}
			if l.serverNon200 > 0 {
				problems = append(problems, fmt.Sprintf("%s, %s: convoy apiserver answered %.0f /sync with another code than 200", l.mode, clients(l.concurrency), l.serverNon200))
			}
		}
		if len(problems) == 0 {
			p("- Lost writes: none (per Release, every successful /sync returned its own resourceVersion, sync-requested-at strictly increases in write order, and the stored Release holds the last write); no failed request.\n")
		} else {
			p("- PROBLEMS:\n")
			for _, pr := range problems {
				p("  - %s\n", pr)
			}
		}
		for _, l := range r.sync {
			if l.mode == "one" {
				p("- One Release, %s: after %d /syncs in %.1f s, sync-requested-at is %s ahead of the clock (each /sync in the same second writes the previous value + 1 s: \"No lost request\").\n",
					clients(l.concurrency), l.ok, l.elapsed.Seconds(), l.aheadOfClock)
			}
		}
		p("\n")
	}

	if lw := r.lw; lw != nil {
		p("### %d Releases: create, LIST, WATCH\n\n", lw.n)
		p("| measurement | median | range (%d runs) | response | note | CPU s (all runs): convoy, kube-apiserver, etcd, client |\n", r.cfg.repeats)
		p("|---|---:|---:|---:|---|---|\n")
		p("| create %d Releases, %d clients | %.1f s | 1 run | | %.0f creates/s; failures: %s | %s |\n",
			lw.n, r.cfg.createConcurrency, lw.createElapsed.Seconds(), float64(lw.n)/lw.createElapsed.Seconds(), codes(lw.createFailures), cpuCols(lw.createCPU))
		for _, t := range lw.timings {
			lo, hi := t.runs[0], t.runs[0]
			for _, d := range t.runs {
				lo, hi = min(lo, d), max(hi, d)
			}
			size := ""
			if t.bytes > 0 {
				size = fmt.Sprintf("%.1f MB", float64(t.bytes)/1e6)
			}
			p("| %s | %s | %s – %s | %s | %s | %s |\n", t.what, ms(t.median()), ms(lo), ms(hi), size, t.note, cpuCols(t.cpu))
		}
		p("\n")
		for c, e := range lw.createFirstErr {
			p("- PROBLEM: create failed with HTTP %d, first: %s\n", c, e)
		}
		p("Memory (VmRSS; peak is VmHWM at the end of the run):\n\n")
		p("| process | before creating | after creating %d | after the listings and watches | peak |\n", lw.n)
		p("|---|---:|---:|---:|---:|\n")
		for _, k := range cpuOrder {
			p("| %s | %s | %s | %s | %s |\n", k, mib(lw.rssBefore[k].RSSKiB), mib(lw.rssAfterCreate[k].RSSKiB),
				mib(lw.rssAfterListings[k].RSSKiB), mib(r.final[k].HWMKiB))
		}
		p("\n")
	}
}

func cpuCols(m map[string]float64) string {
	var s []string
	for _, k := range cpuOrder {
		s = append(s, fmt.Sprintf("%.1f", m[k]))
	}
	return strings.Join(s, ", ")
}

func codes(m map[int]int) string {
	if len(m) == 0 {
		return "none"
	}
	var keys []int
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var s []string
	for _, k := range keys {
		name := fmt.Sprintf("HTTP %d", k)
		if k == -1 {
			name = "no response"
		}
		s = append(s, fmt.Sprintf("%d × %s", m[k], name))
	}
	return strings.Join(s, ", ")
}

func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

func clients(n int) string {
	if n == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", n)
}
