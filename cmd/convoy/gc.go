package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's GOGC of convoy controller and convoy
// observer when the environment sets none. Most of their heap is their informers'
// caches (the Releases, ReleaseInventories and Render metadata of their shard; the
// observer's projections of the applied objects), which live as long as the process.
// Go's default, 100, lets the heap grow by as much as is live before each collection:
// at 10,000 Releases, ~130 MiB live in each process became ~270 MiB of memory. 50
// bounds the growth to half of what is live, for collections twice as frequent, each
// as cheap (their cost is the live heap, not the garbage). Prometheus lowered its
// default for the same reason (75 since 2.53). GOGC in the environment still wins,
// and GOMEMLIMIT (the chart's, from the memory limit) still holds the heap under a
// limit. docs/notes/performance-log.md (seventh round) has the measurements.
const defaultGCPercent = 50

// setGCPercent sets defaultGCPercent unless GOGC is set in the environment, which the Go
// runtime then already applied; it reports whether it set it.
func setGCPercent(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(defaultGCPercent)
	return true
}

// setDefaultGCPercent is setGCPercent with the process's environment.
func setDefaultGCPercent() { setGCPercent(os.Getenv) }
