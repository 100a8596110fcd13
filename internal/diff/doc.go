// Package diff is convoy's one answer to "what would an apply change?". It
// compares a rendered object with its live counterpart on a target cluster the
// way convoy's apply sees it: the live object against a server-side apply dry
// run of the rendered object (field manager convoy, forced conflicts,
// dryRun=All), both normalised the same way (Comparable), and reports the
// field paths that differ (Fields).
//
// Its users must agree, so they all call it: the pre-apply dry run of
// internal/apply (an object the dry run finds unchanged is not applied), the
// observer's drift check (internal/observer/drift: the drifted field paths),
// `kubectl convoy release diff` and `kubectl convoy ui` (the unified diff of
// the same two normalised objects, Unified). Applied lists the objects an
// apply of a render puts on the cluster, chart hooks that are not Jobs
// included, so that the CLI and the UI show those too.
//
// It decides what counts as a change: any field of the dry-run result that
// differs from the live object, except status and the metadata the API server
// maintains (IgnoredMetadata). Fields convoy does not manage need no rule:
// server-side apply keeps other managers' fields, so both sides agree on them.
// It does not decide when to compare, what to do about a change, or how the
// target client was made; it never writes (every request is a GET or a
// dryRun=All apply).
package diff
