package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

// result is one run of the benchmark.
type result struct {
	cfg        config
	fleetStart time.Duration
	// The controller's and the observer's cost with no Cluster, with one in use (after
	// the single run) and with every one in use (after the fleet run).
	noCluster, oneCluster, allClusters reading
	single, fleet, revision            time.Duration
	// singleReq and fleetReq are the requests of the controller ([0]) and the observer
	// ([1]) by host during each run.
	singleReq, fleetReq map[string][2]float64
	// connections are the connections each cluster's Link accepted from the start of
	// the fleet run to the end of the revision; open those open at the end.
	connections, open []int
	// setCount ReleaseSets took setsCreate to be Ready and setsRevise for a new revision.
	setCount               int
	setsCreate, setsRevise time.Duration
	load                   []string
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func (r *result) print(w io.Writer, e *env) {
	c := r.cfg
	fmt.Fprintf(w, "\n# bench/fleet: %d Releases, %d target clusters\n\n", c.releases, c.clusters)
	fmt.Fprintf(w, "machine: %d CPUs (GOMAXPROCS %d); load average %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), strings.Join(r.load, " → "))
	fmt.Fprintf(w, "fleet start: %s (%d clusters)\n\n", r.fleetStart.Round(100*time.Millisecond), c.clusters)

	ratio := r.fleet.Seconds() / r.single.Seconds()
	fmt.Fprintln(w, "| run | create → all Ready |")
	fmt.Fprintln(w, "| --- | --- |")
	fmt.Fprintf(w, "| %d Releases on one cluster | %s |\n", c.releases, r.single.Round(100*time.Millisecond))
	fmt.Fprintf(w, "| %d Releases over %d clusters | %s (%.2f× the single cluster; goal ≤ 1.5×: %s) |\n", c.releases, c.clusters, r.fleet.Round(100*time.Millisecond), ratio, verdict(ratio <= 1.5))
	fmt.Fprintf(w, "| new revision, canary cluster then the rest | %s |\n", r.revision.Round(100*time.Millisecond))
	if r.setCount > 0 {
		sets := r.setsCreate.Seconds() / r.single.Seconds()
		fmt.Fprintf(w, "| %d ReleaseSets × %d clusters (canary stage, then the rest) | %s (%.2f× the single cluster: %s) |\n", r.setCount, c.clusters, r.setsCreate.Round(100*time.Millisecond), sets, verdict(sets <= 1.5))
		fmt.Fprintf(w, "| new revision of every set | %s |\n", r.setsRevise.Round(100*time.Millisecond))
	}
	fmt.Fprintln(w)

	added := float64(c.clusters - 1)
	fmt.Fprintln(w, "| process | no Cluster | 1 cluster in use | all in use | per added cluster (RSS / anon) | goroutines per added cluster |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, p := range []struct {
		name       string
		a, b, d    benchenv.ProcStat
		ga, gb, gd float64
	}{
		{"controller", r.noCluster.ctl, r.oneCluster.ctl, r.allClusters.ctl, r.noCluster.ctlGor, r.oneCluster.ctlGor, r.allClusters.ctlGor},
		{"observer", r.noCluster.obs, r.oneCluster.obs, r.allClusters.obs, r.noCluster.obsGor, r.oneCluster.obsGor, r.allClusters.obsGor},
	} {
		perRSS := (mib(p.d.RSSKiB) - mib(p.b.RSSKiB)) / added
		perAnon := (mib(p.d.AnonKiB) - mib(p.b.AnonKiB)) / added
		fmt.Fprintf(w, "| %s | %.0f MiB, %.0f goroutines | %.0f MiB, %.0f | %.0f MiB, %.0f | %.1f / %.1f MiB (goal < 5: %s) | %.1f |\n",
			p.name, mib(p.a.RSSKiB), p.ga, mib(p.b.RSSKiB), p.gb, mib(p.d.RSSKiB), p.gd, perRSS, perAnon, verdict(perRSS < 5), (p.gd-p.gb)/added)
	}

	fmt.Fprintln(w, "\n| cluster | Releases | connections (fleet run + revision) | open at the end | requests per Release, fleet run (controller + observer) |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for i, l := range e.links {
		n := 0
		for j := range c.releases {
			if j%c.clusters == i {
				n++
			}
		}
		req := r.fleetReq[l.Addr()]
		per := "-"
		if n > 0 {
			per = fmt.Sprintf("%.1f + %.1f", req[0]/float64(n), req[1]/float64(n))
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s |\n", e.fleet.Name(i), n, r.connections[i], r.open[i], per)
	}
	req := r.singleReq[e.links[0].Addr()]
	fmt.Fprintf(w, "\nrequests per Release on the single cluster (controller + observer): %.1f + %.1f\n",
		req[0]/float64(c.releases), req[1]/float64(c.releases))
	fmt.Fprintf(w, "\nreproduce: %s\n", command())
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}
