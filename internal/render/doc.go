// Package render turns a Release into a render: the exact list of Kubernetes objects
// (and the lifecycle hooks taken from the chart) that convoy would apply, with a
// content digest, the render ref, that is the same on every machine for the same chart,
// values and mutations.
//
// It decides:
//   - which chart version a Release gets (exact version, semver constraint or latest
//     stable) from an HTTP(S) Helm repository or an OCI registry, and checks the
//     archive's digest;
//   - the values (valuesFrom in order, then spec.values, merged as Helm merges);
//   - what the chart's templates produce for the target's Capabilities, with CRDs
//     first, Helm hooks mapped to convoy lifecycle hooks or to the first wave, the
//     convoy labels and the target namespace set, the Release's mutations applied;
//   - the sync wave of each object, the canonical order and serialisation, and the
//     render ref (sha256 of the canonical stream);
//   - the digest of a render's inputs (Inputs), and what its templates read of the
//     target (lookups, CapabilityReads), so that the caller can reuse an earlier
//     render of the same inputs instead of templating again while the target answers
//     the same; the templates see the API versions of the chart's crds/ as served;
//   - what a Render object holds, and which Render objects the history keeps.
//
// It is the only package of convoy that renders with Helm: it alone fetches, loads and
// templates charts with Helm's packages (hack/layout's TestImportRules checks it); elsewhere
// Helm is used for its hook names and types (internal/hooks, internal/apply), its values
// merge (internal/releaseset) and its release records (internal/fromhelm). It keeps a cache of chart
// archives on disk and of repository indexes in memory, so that many Releases of one
// chart fetch it once.
//
// It must not apply, delete or read anything on a cluster: it writes nothing to any
// API server, reads ConfigMaps and Secrets only through the ValuesReader that the
// caller passes, and answers the templates' lookup only through the caller's Lookup,
// for the Release's target namespace and cluster-scoped objects. Its errors are *Error values whose Reason is the Release condition
// reason (SourceNotReady, ValuesNotReady, Unsupported, Unappliable) the controller
// reports.
package render
