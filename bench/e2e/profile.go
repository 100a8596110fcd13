package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

// heap is the Go heap of one process at one moment, from its /metrics.
type heap struct {
	// live is what the last garbage collection found reachable (go_gc_heap_live_bytes):
	// what the process holds, not the garbage it has not collected yet.
	live float64
	// inuse and objects are the heap's spans in use and its objects, garbage included
	// (go_memstats_heap_inuse_bytes, go_memstats_heap_objects).
	inuse, objects float64
	// gogc is the collector's GOGC in force (go_gc_gogc_percent).
	gogc float64
}

func readHeap(metrics string) heap {
	v := func(name string) float64 {
		for _, s := range benchenv.Samples(metrics, name) {
			return s.Value
		}
		return 0
	}
	return heap{live: v("go_gc_heap_live_bytes"), inuse: v("go_memstats_heap_inuse_bytes"), objects: v("go_memstats_heap_objects"),
		gogc: v("go_gc_gogc_percent")}
}

// heaps are the Go heaps of every controller and observer in s, by process name.
func heaps(s snap) map[string]heap {
	out := make(map[string]heap, len(s.procs))
	for name, text := range s.procs {
		out[name] = readHeap(text)
	}
	return out
}

// saveProfiles writes the heap profile (after a garbage collection) of the controller
// and the observer to <dir>/n<N>-<process>-<phase>.heap, for `go tool pprof`; nothing
// without -profile-dir.
func (e *env) saveProfiles(ctx context.Context, dir string, n int, phase string) {
	for _, p := range e.profiled(dir, 30*time.Second) {
		if p.Name == "kube-apiserver" || p.Name == "convoy-apiserver" {
			continue // their heaps are not what the bench looks for
		}
		saveProfile(ctx, p.Client, p.Base+"/debug/pprof/heap?gc=1", "heap", profilePath(dir, n, p.Name, phase, "heap"))
	}
}

// cpuProfiles takes a CPU profile of the controller, the observer, kube-apiserver and
// convoy apiserver over the next d (their /debug/pprof/profile) and writes it to
// <dir>/n<N>-<process>-<phase>.cpu when it ends; nothing without -profile-dir. wait
// blocks until every profile is written.
func (e *env) cpuProfiles(ctx context.Context, dir string, n int, phase string, d time.Duration) (wait func()) {
	var wg sync.WaitGroup
	secs := max(1, int(d.Seconds()))
	for _, p := range e.profiled(dir, time.Duration(secs)*time.Second+30*time.Second) {
		wg.Go(func() {
			saveProfile(ctx, p.Client, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.Base, secs), "CPU", profilePath(dir, n, p.Name, phase, "cpu"))
		})
	}
	return wg.Wait
}

// profiled are the processes that serve /debug/pprof/ (to clients that time out after
// timeout), once dir exists; none without -profile-dir.
func (e *env) profiled(dir string, timeout time.Duration) []benchenv.Profiled {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "profiles:", err)
		return nil
	}
	plain := &http.Client{Timeout: timeout}
	var out []benchenv.Profiled
	for _, p := range e.convoyProcs {
		if p.pprof != "" {
			out = append(out, benchenv.Profiled{Name: p.name, Base: p.pprof, Client: plain})
		}
	}
	servers, err := e.APIServerProfiles(timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profiles:", err)
	}
	return append(out, servers...)
}

func profilePath(dir string, n int, process, phase, ext string) string {
	return filepath.Join(dir, fmt.Sprintf("n%d-%s-%s.%s", n, strings.TrimPrefix(process, "convoy-"), phase, ext))
}

// saveProfile writes the profile at url to path; a failure is reported, not fatal.
func saveProfile(ctx context.Context, c *http.Client, url, what, path string) {
	b, err := benchenv.Fetch(ctx, c, url)
	if err == nil {
		err = os.WriteFile(path, []byte(b), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s profile %s: %v\n", what, path, err)
		return
	}
	fmt.Fprintf(os.Stderr, "  %s profile: %s\n", what, path)
}
