// Package registry holds what the storage of every convoy resource shares: semantic
// equality for generation bumps and table output. The per-resource strategies live in
// the sub-packages; they decide how a write changes a stored object, never anything
// about reconciling.
package registry
