// Package health is the decision core of convoy's observer: from what the observer saw
// on a target cluster it decides what to write to a ReleaseInventory's status and when
// to send POST …/sync for a Release.
//
// It decides:
//
//   - the health of one live object, with kstatus (ObjectStatus), and the worst of
//     several (Worst); a hook Job's state is internal/hooks' (hooks.JobState);
//   - the ReleaseInventory status from the per-object results: worst-of per sync wave
//     and per render, objects sorted, and whether it must be written at all (Assess,
//     Changed): assessedAt moves only when something else changed, so a steady
//     cluster causes no writes;
//   - which /sync occurrences are due (Triggers): a sync wave completes while the
//     Release is WaitingForSyncWave, the first complete assessment of a render, a hook
//     batch completes. Each is sent once per occurrence; Memory is the observer's
//     per-Release memory of what it already signalled, and after a restart the stored
//     status stands in for it, so a restarted observer sends at most one more;
//   - whether the first complete assessment of a render that is still progressing
//     waits a moment before it is written (SettleWait), so that a render healthy
//     within it is written, and its Release reconciled, once;
//   - drift: the drift status with its since (Drift; the field paths come from
//     internal/diff), and when the next check is due (NextDriftCheck: every
//     interval, at once for a new last successful render, none while an apply is
//     under way).
//
// It must not do I/O of any kind: no API server or cluster client, no informers, no
// clock reads (the time arrives as an argument), no goroutines, no logging. The only
// state it keeps is Memory, which the observer owns.
//
// Typical use by the observer, for one ReleaseInventory inv and its Release rel:
//
//	// informer handler, per object event:
//	results[ref] = health.ObjectStatus(obj) // obj nil when deleted: Missing
//	// per queued ReleaseInventory (on object, hook Job, inventory or Release events):
//	a := health.Assess(health.AssessInput{
//		Inventory: inv, Results: results, Hooks: hooks, Drift: inv.Status.Drift, Now: clock.Now(),
//	})
//	view := health.ReleaseViewOf(rel, inv) // and view.RenderWaves while view.Waiting()
//	mem, known := memory.Get(key)
//	sig := health.Triggers(inv.Status, a.Status, view, mem, known)
//	if the Release is in manual mode {
//		if len(sig.Send) > 0 {
//			post /sync (no force), one per render of sig.Send (Trigger.RenderRef, ?render=); a 409 drops it; on another error requeue and stop here
//		}
//		memory.Set(key, sig.Memory)
//		if a.Write {
//			write a.Status to releaseinventories/status
//		}
//	} else { // automatic mode
//		memory.Set(key, sig.Signalled)
//		if a.Write {
//			write a.Status to releaseinventories/status
//		}
//		if len(sig.Send) > 0 {
//			post /sync (no force), one per render of sig.Send (Trigger.RenderRef, ?render=); a 409 drops it; on another error requeue and stop here
//		}
//		memory.Set(key, sig.Memory)
//	}
//
// In manual mode the /sync goes before the status write: the observer's /sync counts
// as a /sync request there, so it must not be lost. If the observer dies between the
// two, the stored status does not show the occurrence yet and a restarted observer
// sends it once more; the other order could lose it.
//
// In automatic mode a /sync only starts a reconcile, and so does the status write
// (SP-29): the status goes first, so that the controller, which delays a reconcile for
// new health data a moment (internal/controller), handles both in one reconcile rather
// than one for the /sync and one for the health data written just after it (decision 0139:
// a reconcile is a dry run of every object). A /sync lost to a restart between the two
// loses nothing: the status write started the reconcile it asks for.
package health
