// Package store is the one home of convoy's own objects that are not Releases: it
// reads and writes Renders and ReleaseInventories for the controller, the observer
// and kubectl-convoy.
//
// Renders: get one by its render ref (GetRender; FindRender for kubectl-convoy, which
// also finds one by field selector), list a Release's, their metadata in the
// controller's cache (RenderMetadata, IndexRenders), create, label and delete them,
// and decode their manifests (Objects, through internal/manifest).
//
// ReleaseInventories: read one, write its object list (WriteInventory: the spec, with
// its owner, finalizer and shard label), relabel it, let go of its finalizer, delete
// it, and write the observer's status (PatchInventoryStatus).
//
// Every function takes the client it reads or writes with: the controller's cache or
// its API reader, the observer's, or kubectl-convoy's REST client through a
// client.Reader. It decides nothing: what to render, keep or prune is the callers'.
package store
