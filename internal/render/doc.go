// Package render turns a Release into a render: the exact list of Kubernetes objects
// (and the lifecycle hooks taken from the chart) that convoy would apply, with a
// content digest, the render ref, that is the same on every machine for the same chart,
// values and mutations.
//
// It takes the Release's chart as internal/source fetched it (a Chart: an archive
// or the files of a Git commit's folder, with its digest and commit) and fetches
// nothing itself.
//
// It decides:
//   - the values (valuesFrom in order, then spec.values, merged as Helm merges);
//   - what the chart's templates produce for the target's Capabilities, with CRDs
//     first, Helm hooks mapped to convoy lifecycle hooks or to the first wave, the
//     convoy labels and the target namespace set, the Release's mutations applied;
//   - the sync wave of each object, the canonical order and serialisation, and the
//     render ref (sha256 of the canonical stream);
//   - the digest of a render's inputs (Prepare, ReuseKey), known before anything is
//     templated, and what its templates read of the target (lookups,
//     CapabilityReads), so that the caller finds an earlier render of the same inputs
//     and reuses it (Prepared.Reuse) instead of templating again while the target
//     answers the same; the templates see the API versions of the chart's crds/ as
//     served;
//   - what a Render object holds, and which Render objects the history keeps.
//
// It is the only package of convoy that renders with Helm: it alone loads and templates
// charts with Helm's engine (hack/layout's TestImportRules checks it); internal/source
// alone reaches chart sources with Helm's repository and registry packages and go-git,
// which render does not depend on; elsewhere Helm is used for its hook names and types
// (internal/hooks, internal/apply), its values merge (internal/releaseset) and its
// release records (internal/fromhelm). It keeps no cache and no state.
//
// It must not apply, delete or read anything on a cluster: it writes nothing to any
// API server, reads ConfigMaps and Secrets only through the ValuesReader that the
// caller passes, and answers the templates' lookup only through the caller's Lookup,
// for the Release's target namespace and cluster-scoped objects. It never calls back
// into its caller to decide anything: the caller reads the inputs' key, looks an
// earlier render up and calls Render only when there is none to reuse. Its errors
// are *Error values whose Reason is the Release condition reason (SourceNotReady for
// an archive or Git folder that cannot be read, ValuesNotReady, Unsupported,
// Unappliable) the controller reports.
package render
