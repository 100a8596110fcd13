// Package observer is the process behind `convoy observer`: the health loop of convoy.
// For each ReleaseInventory it watches the applied objects on the target cluster
// through shared informers, one per (cluster, group-version-kind) and filtered by
// convoy's labels; assesses them and the hook Jobs of the running batch; checks drift
// every spec.syncPolicy.interval of the Release through a DriftChecker; sends POST
// …/sync when a sync wave completes, when assessment first covers a new render, or
// when a hook batch completes; and writes the ReleaseInventory status only when the
// result changed, so a steady cluster causes no writes.
//
// The decisions (health per object, worst-of per wave and render, whether to write,
// which /sync occurrences are due, the drift status and schedule) are in the pure
// package health; this package gathers their inputs and carries them out.
//
// It must not apply, patch or delete anything on a target cluster, nor write anything
// on the host but ReleaseInventory status and /sync requests.
package observer
