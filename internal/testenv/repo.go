package testenv

import (
	"testing"

	"kumodo.io/convoy/internal/localcluster"
)

// RepoRoot is the root of the repository (localcluster.RepoRoot), or fails t.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// FreePort is a free loopback port (localcluster.FreePort), or fails t.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
