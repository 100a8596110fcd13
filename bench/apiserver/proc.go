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
