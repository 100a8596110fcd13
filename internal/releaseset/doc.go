// Package releaseset decides how a ReleaseSet's template reaches its Clusters: which
// Clusters it selects and in which stage each one is, which Releases to create, update
// and delete, and what the ReleaseSet's status says (plan.go, pure, no I/O), and runs
// that decision as the ReleaseSet controller (reconciler.go, setup.go).
//
// It only ever writes Releases and the ReleaseSet's status: what a Release does on its
// Cluster is the release controller's business. It never writes a Release field the set
// does not own (pin, mutations, lifecycle, the sync annotations), and in steady state it
// makes no API write.
package releaseset
