// Package source fetches the charts of Releases from their sources: HTTP(S) Helm
// repositories (index.yaml and archives, checked against the index's digest), OCI
// registries (tags are versions, archives pulled by manifest digest) and Git
// repositories (the remote's refs listed, one commit fetched shallow into a store
// on disk, the chart folder read as `helm package` takes it).
//
// It decides:
//   - which chart version a source names (an exact version, a semver constraint or
//     the latest stable), or which commit a Git ref names (a branch's tip, a tag, the
//     highest tag in a semver range, a commit) — Fetch for a render, Resolve for a
//     ReleaseSet's status.source, with the same selection and the same caches;
//   - whether what a source names can move without the source changing (Moves);
//   - whether the Git commit to render is signed by a key of spec.chart.git.verify
//     (Credentials.VerifyKeys, checked with internal/verify) before anything of it is
//     read: at Fetch, and with verify at Resolve too, so that a ReleaseSet's
//     status.source never names an unsigned commit; the outcome is cached per commit
//     and keys;
//   - how to reach a source with the credentials of spec.chart.secretRef (or
//     spec.chart.git.secretRef): basic auth, a bearer token, a CA, an ssh identity
//     checked against known_hosts (CredentialsFromSecret);
//   - what it caches and for how long: indexes, tag lists and tags' digests in
//     memory for IndexTTL, archives on disk by digest, Git ref listings for the
//     reader's interval, Git commits on disk up to GitCacheBytes (least recently used
//     evicted). What one set of credentials fetched is never served to a request
//     with other credentials; concurrent fetches of the same thing run once.
//
// It does not load or template charts (internal/render does, from the Chart that
// Fetch returns) and reads nothing on a cluster: the caller reads the credentials'
// Secret. One Fetcher per process serves the release controller and the ReleaseSet
// controller. Its errors are *Error values whose Reason is the Release condition
// reason (SourceNotReady, Unsupported, Unappliable for a .helmignore that does not
// parse, VerificationFailed for a commit no trusted key signed) the controller
// reports.
package source
