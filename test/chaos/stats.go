package chaos

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// procStat is one process at one moment.
type procStat struct {
	PID        int
	RSSKiB     int64
	Goroutines int // -1 when the process exports no go_goroutines
}

// snapshotProcs reads the RSS of every process of the system and the goroutines of
// convoy's three.
func (e *env) snapshotProcs(ctx context.Context) map[string]procStat {
	out := map[string]procStat{}
	for _, name := range reportedProcs {
		pid := e.pid(name)
		s := procStat{PID: pid, RSSKiB: rssKiB(pid), Goroutines: -1}
		if _, ok := e.metricsURL[name]; ok {
			if g, ok := gauge(e.metrics(ctx, name), "go_goroutines"); ok {
				s.Goroutines = int(g)
			}
		}
		out[name] = s
	}
	return out
}

// reportedProcs are the processes whose RSS the report shows, in its order.
var reportedProcs = []string{procAPIServer, procController, procController2, procObserver, procKubeAPI, procEtcd, procRemoteKubeAPI, procRemoteEtcd}

// pid is the process id of the newest running process name; 0 when none runs.
func (e *env) pid(name string) int {
	switch name {
	case procRemoteKubeAPI:
		return e.remote.PID("kube-apiserver")
	case procRemoteEtcd:
		return e.remote.PID("etcd")
	}
	return e.cluster.PID(name)
}

// rssKiB is VmRSS of pid; 0 when it is gone.
func rssKiB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fs := strings.Fields(rest)
			if len(fs) > 0 {
				n, _ := strconv.ParseInt(fs[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

func parseMetrics(text string) map[string]*dto.MetricFamily {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil
	}
	return fams
}

// gauge is the value of an unlabelled gauge.
func gauge(text, name string) (float64, bool) {
	f := parseMetrics(text)[name]
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, false
	}
	return f.GetMetric()[0].GetGauge().GetValue(), true
}

// writeVerbs are the verbs of apiserver_request_total that change something.
var writeVerbs = []string{"POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY", "CREATE", "UPDATE"}

// writes counts apiserver_request_total of write verbs by "<verb> <resource>[/<subresource>]"
// for the resources in only (all when only is empty).
func writes(text string, only []string) map[string]float64 {
	out := map[string]float64{}
	f := parseMetrics(text)["apiserver_request_total"]
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if !slices.Contains(writeVerbs, l["verb"]) || l["dry_run"] != "" {
			continue
		}
		if len(only) > 0 && !slices.Contains(only, l["resource"]) {
			continue
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out
}

// delta is after − before without the zero entries.
func delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, a := range after {
		if v := a - before[k]; v != 0 {
			d[k] = v
		}
	}
	return d
}

// sample is every process's state at one moment of the fault phase.
type sample struct {
	at    time.Duration // since the fault phase began
	procs map[string]procStat
}

// sampleProcs snapshots the processes every every until ctx ends (the fault phase),
// so that the report shows whether RSS and goroutines level off or keep growing.
func (e *env) sampleProcs(ctx context.Context, every time.Duration) []sample {
	began := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var out []sample
	for {
		select {
		case <-ctx.Done():
			return out
		case <-tick.C:
		}
		out = append(out, sample{at: time.Since(began), procs: e.snapshotProcs(ctx)})
	}
}
