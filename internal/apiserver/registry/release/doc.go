// Package release is the storage of Releases: the main resource and the status, sync,
// pin, mutations and lifecycle subresources.
//
// It enforces the seed's write rules: only a spec change bumps the generation; the
// main resource keeps status and pin from storage; each subresource changes only its
// own field, and every subresource write but /status also writes
// convoy.kumodo.io/sync-requested-at, inside one atomic read-modify-write in storage.
package release
