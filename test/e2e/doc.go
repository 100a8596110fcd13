// Package e2e holds end-to-end tests that run convoy's binaries against the
// local control plane, as a user would.
package e2e
