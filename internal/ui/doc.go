// Package ui is `kubectl convoy ui`: a web UI served on loopback that talks to the
// cluster with the user's own kubeconfig, so what it shows and what it may do are
// the user's RBAC. It has no server-side component.
//
// It watches (client-go informers) the Releases, ReleaseInventories, Renders
// (without their manifests), ReleaseSets, Clusters and the Events of Releases
// that the user may list, and streams every change to the browser as
// Server-Sent Events (/api/stream: a snapshot, then each change); the page never
// polls. Actions go through the same subresources as the CLI (releases/sync,
// releases/pin, releasesets/promote), and the page offers one only when a
// SelfSubjectAccessReview says the user may (/api/access); the server checks
// again before it sends the request. Diffs are internal/diff's, the same as
// `kubectl convoy release diff` and the drift check.
//
// The front-end is in web/ (Lit, bundled by esbuild from the npm registry); its
// build output dist/ is committed and embedded, so kubectl-convoy stays one file
// and `go build` needs no Node.js (`make ui` rebuilds it). It must not decide
// anything convoy's controller decides; it shows the API's state.
package ui
