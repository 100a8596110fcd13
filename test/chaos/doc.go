// Package chaos is convoy's chaos and soak harness. It starts a local
// control plane with kwok nodes, convoy apiserver, two controller replicas that elect
// a leader, and the observer as separate processes of the built binary; a second local
// control plane as a remote Cluster, reached through a fault-injecting TCP proxy (the
// link); and a chart repository behind another such proxy. It drives a seeded workload
// of Releases on both clusters (automatic and manual, sync waves, cluster waves, hooks,
// failurePolicies, pins, deletions) while it kills and restarts processes (the leader
// too, also just after a deletion), takes the remote cluster down, and breaks the link
// and the chart repository; and it checks convoy's invariants during and after the
// faults: no acknowledged /sync lost, no manual apply without one, nor of a render
// that a /sync bound to another render approved, nothing orphaned on either cluster,
// no sync wave or cluster wave applied out of order, an unreachable Cluster blocking
// nothing on the host, a leader handover after a kill, convergence within a bound
// followed by a quiet window, and flat memory and goroutines over a soak. A ReleaseSet
// over both clusters meets its gates under the faults (fleetgates.go): a new template
// revision and a chart version published in its range roll out stage by stage, a
// pause holds every Release write, the remote Cluster leaves the set mid-stage (a
// removal within maxRemovals, or a held mass removal acknowledged) and comes back, and
// the leader is killed mid-stage.
//
// TestChaos is the entry point: a short seeded run in `make test`, longer ones through
// `make chaos` and `make soak` (flags in chaos_test.go). The decisions the checks make
// (what a Release converges to, whether waves came in order, whether an apply had a
// sync, and one that approved its render, whether stages came in order, a pause held,
// a leave was held as it should) are pure functions with table tests; everything else
// talks to real processes.
// See docs/reliability.md.
package chaos
