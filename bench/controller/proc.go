package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
const clockTicks = 100

// procStat is one process at one moment (copied from bench/apiserver).
type procStat struct {
	cpuSeconds float64 // user + system since the process started
	rssKiB     int64   // VmRSS
	hwmKiB     int64   // VmHWM, the peak RSS
}

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
		str := string(b)
		if i := strings.LastIndexByte(str, ')'); i >= 0 {
			f := strings.Fields(str[i+1:])
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

func procName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return strconv.Itoa(pid)
	}
	return strings.TrimSpace(string(b))
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

// sample is one line of a Prometheus text exposition.
type sample struct {
	labels map[string]string
	value  float64
}

// samples returns the samples of metric name.
func samples(text, name string) []sample {
	var out []sample
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		s := sample{labels: map[string]string{}}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			parseLabels(rest[1:end], s.labels)
			rest = rest[end+1:]
		}
		fs := strings.Fields(rest)
		if len(fs) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fs[0], 64)
		if err != nil {
			continue
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

func parseLabels(s string, into map[string]string) {
	for len(s) > 0 {
		eq := strings.Index(s, `="`)
		if eq < 0 {
			return
		}
		key := strings.TrimLeft(s[:eq], ", ")
		s = s[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				val.WriteByte(s[i])
				continue
			}
			if s[i] == '"' {
				break
			}
			val.WriteByte(s[i])
		}
		into[key] = val.String()
		if i >= len(s) {
			return
		}
		s = s[i+1:]
	}
}

// counts groups the samples of name by the values of keys ("verb resource ...").
func counts(text, name string, keys ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples(text, name) {
		var parts []string
		for _, k := range keys {
			if v := s.labels[k]; v != "" {
				parts = append(parts, v)
			}
		}
		out[strings.Join(parts, " ")] += s.value
	}
	return out
}

// delta is after − before, without the zero entries.
func delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, a := range after {
		if v := a - before[k]; v != 0 {
			d[k] = v
		}
	}
	return d
}

func total(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

// sumWhere totals the entries whose key has one of the words.
func sumWhere(m map[string]float64, pred func(key string) bool) float64 {
	var t float64
	for k, v := range m {
		if pred(k) {
			t += v
		}
	}
	return t
}

type kv struct {
	k string
	v float64
}

// top is the n largest entries of m.
func top(m map[string]float64, n int) []kv {
	var s []kv
	for k, v := range m {
		s = append(s, kv{k, v})
	}
	sort.Slice(s, func(i, j int) bool {
		if s[i].v != s[j].v {
			return s[i].v > s[j].v
		}
		return s[i].k < s[j].k
	})
	if len(s) > n {
		s = s[:n]
	}
	return s
}
