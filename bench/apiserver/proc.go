package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

func newFlagSet() *pflag.FlagSet { return pflag.NewFlagSet(serveArg, pflag.ContinueOnError) }

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on
// every Linux architecture Go supports here).
const clockTicks = 100

// procStat is what the report shows of one process at one moment.
type procStat struct {
	cpuSeconds float64 // user + system, all threads, since the process started
	rssKiB     int64   // VmRSS
	hwmKiB     int64   // VmHWM, the peak RSS
}

// snapshot reads every reported process.
func (e *env) snapshot() map[string]procStat {
	out := map[string]procStat{}
	for _, p := range e.procs {
		out[p.name] = readProc(p.pid)
	}
	return out
}

func readProc(pid int) procStat {
	var s procStat
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// Fields after the command name, which is in parentheses and may hold spaces.
		str := string(b)
		if i := strings.LastIndexByte(str, ')'); i >= 0 {
			f := strings.Fields(str[i+1:])
			// f[0] is field 3 (state); utime and stime are fields 14 and 15.
			if len(f) > 13 {
				u, _ := strconv.ParseFloat(f[11], 64)
				k, _ := strconv.ParseFloat(f[12], 64)
				s.cpuSeconds = (u + k) / clockTicks
			}
		}
	}
	if f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			for key, dst := range map[string]*int64{"VmRSS:": &s.rssKiB, "VmHWM:": &s.hwmKiB} {
				if strings.HasPrefix(line, key) {
					if fs := strings.Fields(line); len(fs) >= 2 {
						*dst, _ = strconv.ParseInt(fs[1], 10, 64)
					}
				}
			}
		}
		_ = f.Close()
	}
	return s
}

// cpuDelta is the CPU seconds each process used between two snapshots.
func cpuDelta(before, after map[string]procStat) map[string]float64 {
	d := map[string]float64{}
	for k, a := range after {
		d[k] = a.cpuSeconds - before[k].cpuSeconds
	}
	return d
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], ", ")
}

// machine describes the machine in one line.
func machine() string {
	model := "?"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		_ = f.Close()
	}
	mem := "?"
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(fs[1], 64)
				mem = fmt.Sprintf("%.1f GiB", kb/1024/1024)
			}
		}
		_ = f.Close()
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("%d CPUs (%s), %s RAM, Linux %s, %s %s/%s", runtime.NumCPU(), model, mem,
		strings.TrimSpace(string(kernel)), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// metricSum sums the samples of metric name (a full sample name such as
// etcd_requests_total or apiserver_request_duration_seconds_sum) whose labels
// contain every one of labels (each like `resource="releases"`).
func metricSum(text, name string, labels ...string) float64 {
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue // a longer name with this prefix
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		fs := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(fs) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fs[0], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}
