package benchenv

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
const clockTicks = 100

// ProcStat is one process at one moment.
type ProcStat struct {
	CPUSeconds float64 // user + system since the process started
	RSSKiB     int64   // VmRSS
	HWMKiB     int64   // VmHWM, the peak RSS
	// AnonKiB is RssAnon, the part of VmRSS that is the process's own memory (heap,
	// stacks): VmRSS also counts the pages of the executable that were read
	// (RssFile), which every process of the same binary shares.
	AnonKiB int64
}

// Snapshot reads every process of the environment, by name.
func (e *Env) Snapshot() map[string]ProcStat {
	out := map[string]ProcStat{}
	for _, p := range e.procs {
		out[p.Name] = ReadProc(p.PID)
	}
	return out
}

// CPUDelta is the CPU seconds each process of after used since before.
func CPUDelta(before, after map[string]ProcStat) map[string]float64 {
	d := map[string]float64{}
	for k, a := range after {
		d[k] = a.CPUSeconds - before[k].CPUSeconds
	}
	return d
}

// PID is the pid of the process named name; 0 when there is none.
func (e *Env) PID(name string) int {
	for _, p := range e.procs {
		if p.Name == name {
			return p.PID
		}
	}
	return 0
}

// ReadProc reads /proc/<pid>/stat and status; zeros when the process is gone.
func ReadProc(pid int) ProcStat {
	var s ProcStat
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		str := string(b)
		if i := strings.LastIndexByte(str, ')'); i >= 0 {
			f := strings.Fields(str[i+1:])
			if len(f) > 13 {
				u, _ := strconv.ParseFloat(f[11], 64)
				k, _ := strconv.ParseFloat(f[12], 64)
				s.CPUSeconds = (u + k) / clockTicks
			}
		}
	}
	if f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			for key, dst := range map[string]*int64{"VmRSS:": &s.RSSKiB, "VmHWM:": &s.HWMKiB, "RssAnon:": &s.AnonKiB} {
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

// ProcName is the command name of pid (/proc/<pid>/comm), or the pid.
func ProcName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return strconv.Itoa(pid)
	}
	return strings.TrimSpace(string(b))
}

// LoadAvg is the 1, 5 and 15 minute load average.
func LoadAvg() string {
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
