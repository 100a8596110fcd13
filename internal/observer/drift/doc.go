// Package drift checks whether the live objects of a render are still what
// convoy applied: for each object it reads the live object and asks the
// target for a server-side apply dry run of the rendered object (field manager
// convoy, forced conflicts, dryRun=All) — what convoy's next apply would make
// of it — and reports the field paths where that differs from the live object
// (internal/diff, the comparison the pre-apply dry run and release diff use too).
//
// It decides what counts as drift: a field convoy's apply would change, and a
// render object that is not on the target (reported with the field path
// Missing). status, the metadata the API server maintains, fields that only
// other field managers set and the defaults the API server fills in are not
// drift: the dry run keeps them, so both sides agree. Only paths are reported,
// never values, so no Secret data reaches a status.
//
// It must not write: every request it sends is a GET or a dryRun=All apply. It
// does not decide when to check (the observer's interval), which objects to
// check (the caller passes the objects of status.lastSuccessful's render,
// without the lifecycle hook Jobs), or what to do about drift (the controller's
// sync policy). It knows nothing of how the target client was made.
package drift
