package dev

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"kumodo.io/convoy/internal/apiserver"
)

// Components are convoy's processes in start order. Adding one is a few
// lines: a name and a Start that calls env.RunConvoy with its flags.
func Components() []Component {
	return []Component{
		{Name: "convoy-apiserver", Start: startAPIServer},
	}
}

// startAPIServer runs `convoy apiserver` on the cluster's etcd under the
// prefix /convoy (so Releases survive a restart of dev) with its own
// identity, and registers it with the aggregator.
func startAPIServer(ctx context.Context, env *Env) error {
	const identity = "convoy-apiserver"
	host := env.Cluster.RestConfig()
	if err := apiserver.GrantHostAccess(ctx, host, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: identity}); err != nil {
		return err
	}
	kubeconfig, err := env.Cluster.UserKubeconfig(identity)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	certDir := filepath.Join(env.StateDir, "apiserver-certs")
	// A certificate of an earlier run may name another service; make a new one.
	if err := os.RemoveAll(certDir); err != nil {
		return err
	}
	reg := apiserver.Registration{Port: port}
	err = env.RunConvoy(ctx, identity, []string{
		"apiserver",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + env.Cluster.EtcdURL(),
		"--etcd-prefix=/convoy",
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--tls-alternate-dns=" + reg.ServiceDNSName(),
		"--cert-dir=" + certDir,
	}, nil)
	if err != nil {
		return err
	}
	certFile := filepath.Join(certDir, "apiserver.crt")
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		reg.CABundle, err = os.ReadFile(certFile)
		return err == nil && len(reg.CABundle) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("convoy apiserver wrote no serving certificate to %s: %w", certFile, err)
	}
	return apiserver.Register(ctx, host, reg)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
