package integration_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
)

// env is the package's control plane and convoy apiserver.
var env struct {
	cluster *localcluster.Cluster
	admin   *rest.Config
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{Progress: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the local control plane:", err)
		return 1
	}
	defer func() { _ = c.Stop() }()
	env.cluster, env.admin = c, c.RestConfig()

	// Not convoy-system/convoy-apiserver: deploy/apiserver's manifests are dry-run
	// against this cluster and must not collide with the local registration.
	stop, err := apiservertest.Start(ctx, c, apiservertest.Options{
		Namespace: "convoy-local", ServiceName: "convoy-apiserver-local", EtcdPrefix: "/convoy"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting convoy apiserver:", err)
		return 1
	}
	defer stop()
	return m.Run()
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
