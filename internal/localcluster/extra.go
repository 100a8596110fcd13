package localcluster

import (
	"context"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Process describes a program to run beside the control plane, such as one of
// convoy's own processes in `convoy dev`.
type Process struct {
	// Name names the process and its log file, <LogDir>/<Name>.log.
	Name string
	// Path is the program; Args its arguments; Env is added to this process's environment.
	Path string
	Args []string
	Env  []string
	// Ready, when set, is polled until it returns true; Run fails if the
	// process exits first or ctx ends.
	Ready func(context.Context) bool
}

// Run starts p in the cluster's process set: it dies with the cluster's owner
// and Stop stops it with the control plane's other clients, before kube-apiserver
// and etcd (StopClusters). Under supervision
// (Supervise) it is started again when it exits.
func (c *Cluster) Run(ctx context.Context, p Process) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return fmt.Errorf("start %s: cluster is stopped", p.Name)
	}
	proc, err := startProcess(p.Name, p.Path, p.Args, c.logDir, p.Env...)
	if err == nil {
		proc.ready = p.Ready
		c.add(proc)
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.step("Started %s (log: %s/%s.log)", p.Name, c.logDir, p.Name)
	if p.Ready == nil {
		return nil
	}
	return waitFor(ctx, p.Name, []*process{proc}, p.Ready)
}

// UserKubeconfig writes a kubeconfig for user in groups (see UserConfig) to
// <Dir>/kubeconfig-<user> and returns its path: the identity of a process
// that runs beside the cluster.
func (c *Cluster) UserKubeconfig(user string, groups ...string) (string, error) {
	cfg, err := c.UserConfig(user, groups...)
	if err != nil {
		return "", err
	}
	kp := &keyPair{certPEM: cfg.CertData, keyPEM: cfg.KeyData}
	path := filepath.Join(c.dir, "kubeconfig-"+user)
	return path, writeKubeconfigFile(path, c.restConfig.Host, c.pki.ca.certPEM, kp)
}

// ServiceAccountKubeconfig writes a kubeconfig with a token of the ServiceAccount
// namespace/name (which must exist; TokenRequest, valid 24 hours: longer than any test
// or benchmark) to <Dir>/kubeconfig-sa-<namespace>-<name> and returns its path: the
// identity of a process that runs beside the cluster as an installation's Pod would,
// authenticated by a bearer token rather than a client certificate.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	kube, err := kubernetes.NewForConfig(c.restConfig)
	if err != nil {
		return "", err
	}
	expiry := int64(24 * 3600)
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	path := filepath.Join(c.dir, "kubeconfig-sa-"+namespace+"-"+name)
	return path, writeKubeconfig(path, c.restConfig.Host, c.pki.ca.certPEM, &clientcmdapi.AuthInfo{Token: tr.Status.Token})
}
