package receiver_test

import (
	"testing"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
)

// The integration tests run the controller process's reconcilers (wiring.Setup,
// with the receiver server on a loopback port) in this process, beside convoy's API
// server, on a real local control plane; a Git server of the test (gittest) holds the
// charts, and the tests call the receiver server over HTTP as GitHub, GitLab and a
// generic caller would. With -short only the pure tests run.

// host is the local control plane; nil with -short.
var host *localcluster.Cluster

func TestMain(m *testing.M) {
	apiservertest.Main(m, apiservertest.MainOptions{Name: "receiver", Host: &host})
}
