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
}

func readHeap(metrics string) heap {
	v := func(name string) float64 {
		for _, s := range benchenv.Samples(metrics, name) {
			return s.Value
		}
		return 0
	}
	return heap{live: v("go_gc_heap_live_bytes"), inuse: v("go_memstats_heap_inuse_bytes"), objects: v("go_memstats_heap_objects")}
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
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "profiles:", err)
		return
	}
	for _, p := range e.convoyProcs {
		name, base := p.name, p.pprof
		if base == "" {
			continue
		}
		b, err := benchenv.Fetch(ctx, httpClient, base+"/debug/pprof/heap?gc=1")
		if err != nil {
			fmt.Fprintf(os.Stderr, "heap profile of %s: %v\n", name, err)
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("n%d-%s-%s.heap", n, strings.TrimPrefix(name, "convoy-"), phase))
		if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "profiles:", err)
			continue
		}
		fmt.Fprintf(os.Stderr, "  heap profile: %s\n", path)
	}
}

// cpuProfiles takes a CPU profile of the controller and the observer over the next d
// (their /debug/pprof/profile) and writes it to <dir>/n<N>-<process>-<phase>.cpu when
// it ends; nothing without -profile-dir. wait blocks until every profile is written.
func (e *env) cpuProfiles(ctx context.Context, dir string, n int, phase string, d time.Duration) (wait func()) {
	var wg sync.WaitGroup
	if dir == "" {
		return wg.Wait
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "profiles:", err)
		return wg.Wait
	}
	secs := max(1, int(d.Seconds()))
	client := &http.Client{Timeout: time.Duration(secs)*time.Second + 30*time.Second}
	for _, p := range e.convoyProcs {
		name, base := p.name, p.pprof
		if base == "" {
			continue
		}
		wg.Go(func() {
			b, err := benchenv.Fetch(ctx, client, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs))
			if err != nil {
				fmt.Fprintf(os.Stderr, "CPU profile of %s: %v\n", name, err)
				return
			}
			path := filepath.Join(dir, fmt.Sprintf("n%d-%s-%s.cpu", n, strings.TrimPrefix(name, "convoy-"), phase))
			if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "profiles:", err)
				return
			}
			fmt.Fprintf(os.Stderr, "  CPU profile: %s\n", path)
		})
	}
	return wg.Wait
}
