// Package chaos is convoy's chaos and soak harness (issue 16). It starts a local
// control plane with kwok nodes, convoy apiserver, controller and observer as separate
// processes of the built binary, and a chart repository behind a fault-injecting TCP
// proxy; drives a seeded workload of Releases (automatic and manual, sync waves, hooks,
// failurePolicies, pins, deletions) while it kills and restarts processes and breaks
// the chart repository; and checks convoy's invariants during and after the faults:
// no acknowledged /sync lost and no manual apply without one, nothing orphaned, no
// sync wave applied out of order, convergence within a bound followed by a quiet
// window, and flat memory and goroutines over a soak.
//
// TestChaos is the entry point: a short seeded run in `make test`, longer ones through
// `make chaos` and `make soak` (flags in flags_test.go). The decisions the checks make
// (what a Release converges to, whether waves came in order, whether an apply had a
// sync) are pure functions with table tests; everything else talks to real processes.
// See docs/reliability.md.
package chaos
