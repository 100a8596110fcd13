// Package controller is convoy's release controller: the controller-runtime wiring that
// carries out the reconcile flow of docs/architecture.md for each Release.
//
// One reconcile handles the deletion and the finalizer (step 1), gathers a
// policy.Input once — the cluster-wave blocker, the target cluster and the render
// (steps 2–4, through internal/targets and internal/render), the inventory's health,
// the pin, and the time, read once from an injected clock — then lets
// internal/policy decide (steps 5–9), carries out the apply it asks for (dry run,
// sync waves, ReleaseInventory, prune: steps 9–11, through internal/apply), lets
// internal/policy judge the outcome (step 12), and writes the Release's status in one
// patch, skipped when nothing changed. It returns the requeue that internal/policy
// decided.
//
// It also decides what starts a reconcile: the watch predicates (predicates.go), the
// ReleaseInventory and cluster-wave watches (watches.go), and the informer resync.
//
// It must not decide anything internal/policy decides (modes, pending requests,
// reasons, conditions, requeue delays), call Helm, apply outside internal/apply, or
// build clients for remote clusters outside internal/targets.
package controller
