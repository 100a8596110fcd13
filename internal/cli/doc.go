// Package cli is kubectl-convoy, the kubectl plugin of convoy: one small file per
// command over a shared Options (kubeconfig flags, IO streams, the terminal) and a
// Client of convoy.kumodo.io/v1alpha1.
//
// Output is made by pure functions (format_*.go, progress.go) that take the objects
// and the time and return text, so they are tested with golden files; the commands
// only fetch, call them and print. The package never reconciles anything: it reads
// Releases and writes only through the API's subresources (/sync, /pin, /mutations).
package cli
