// Package policy is convoy's decision core for one reconcile of one Release.
//
// It decides, from a plain Input that the controller gathers (the sync policy, the two
// sync annotations, what status says was handled and applied, the current render ref,
// the pin, the rollout, the observer's health data, the time and the failure count):
//
//   - whether this reconcile applies, and which render (steps 5–9 of the reconcile
//     flow in docs/architecture.md: pin, sync policy, rollout hold, hooks, dry run),
//     or stops with which reason and message (Decide);
//   - which sync waves to apply before holding with WaitingForSyncWave (PlanWaves);
//   - the next step of the lifecycle hooks of one phase: which batch runs, which of
//     its Jobs to create, WaitingForHooks or HookFailed (PlanHooks; the hook Jobs'
//     names are internal/hooks');
//   - whether a pending force was used up without acting on it (SpentForce);
//   - whether the Release holds before anything is rendered (HoldsBeforeRender), the
//     revision of a new render (NextRenderRevision), whether an apply is an install or
//     an upgrade (IsUpgrade, ApplyHookRun: a Release taken over from Helm upgrades
//     from its first apply), and whether a Release outlived the namespace it was
//     created in (OutlivedNamespace; NamespaceUIDToRecord for a Release created
//     before convoy recorded its namespace's UID);
//   - from how the attempt ended: the Applied, Healthy and Ready conditions, the status
//     fields to write (lastSuccessful, lastHandledSyncAt, lastHandledForceSyncAt, a new
//     rollout), how the in-memory failure count changes, and when to reconcile again
//     (Finish);
//   - whether a wait on the observer's assessment of the ReleaseInventory is overdue,
//     what the waiting condition then says, and when to look again (CheckAssessment).
//
// It must not do I/O of any kind: no API server or cluster client, no Helm, no clock
// reads (the time arrives as Input.Now), no goroutines, no logging and no events (it
// returns Warnings for the controller to emit). The only state it keeps is
// FailureCounter, the in-memory count of consecutive transient failures, which the
// controller owns and passes in as Input.Failures.
//
// Typical use by the controller:
//
//	in := policy.Input{Now: clock.Now(), Policy: ..., Requests: ..., CurrentRender: ref, ...}
//	in.Failures = counter.Get(key)
//	plan := policy.Decide(in)
//	attempt := policy.Result{}
//	if plan.Apply != nil {
//		attempt = r.apply(ctx, plan.Apply) // hooks, dry run (plan.Apply.DryRun), waves, prune
//	}
//	out := release.Finish(in, plan, attempt)
//	out = release.CheckAssessment(in, release.Assessment{DueSince: ..., OverdueAfter: ...}, out)
//	counter.Update(key, out.Counter)
//	// write out.Applied, out.Healthy, out.Ready and out.Status in one status patch,
//	// then return out.Requeue.
package policy
