// Package rbac_test proves the RBAC matrix of docs/security.md: every verb on every
// resource and subresource of the convoy API, for a user with no role, with
// convoy-view, convoy-sync, convoy-promote, and the built-in edit and admin roles (which convoy-edit
// aggregates into), through kube-apiserver's aggregator to a convoy apiserver running
// in this process. The roles are the ClusterRoles of deploy/rbac, created as they are
// shipped; a kube-controller-manager running only the ClusterRole aggregation
// controller builds edit and admin.
//
// With -short nothing runs.
package rbac_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// env is the package's control plane; nil with -short.
var env *localcluster.Cluster

func TestMain(m *testing.M) {
	testenv.QuietLogs()
	testenv.Main(m, func(s *testenv.Setup) error {
		c, err := s.Cluster("the local control plane", localcluster.Options{})
		if err != nil {
			return err
		}
		if err := startRoleAggregation(s.Context(), c); err != nil {
			return err
		}
		if err := apiservertest.StartWith(s, c, apiservertest.Options{
			Namespace: "convoy-rbac-test", ServiceName: "convoy-apiserver-rbac-test", EtcdPrefix: "/convoy-rbac"}); err != nil {
			return err
		}
		env = c
		return nil
	})
}

// startRoleAggregation runs kube-controller-manager with only the controller that
// fills aggregated ClusterRoles (edit, admin, view) from the labelled ones, as every
// real cluster does.
func startRoleAggregation(ctx context.Context, c *localcluster.Cluster) error {
	kc := c.KubeconfigPath()
	return c.Run(ctx, localcluster.Process{
		Name: "kube-controller-manager",
		Path: filepath.Join(c.BinDir(), "kube-controller-manager"),
		Args: []string{
			"--kubeconfig=" + kc,
			"--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc,
			"--leader-elect=false",
			"--secure-port=0",
			"--use-service-account-credentials=false",
			"--controllers=clusterrole-aggregation",
		},
	})
}

func needCluster(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("needs the local control plane (not with -short)")
	}
}

func ctx(t *testing.T) context.Context {
	return testenv.Context(t, 3*time.Minute)
}
