package main

import (
	"context"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// identityNamespace holds the ServiceAccounts that convoy controller and observer run
// as: the namespace of the chart's installation in README.md.
const identityNamespace = "convoy-system"

// serviceAccountKubeconfig creates the ServiceAccount name in identityNamespace and
// writes a kubeconfig with a token of it (TokenRequest) to the cluster's folder: the
// identity a convoy process has in an installation (the chart's and deploy/'s Pods run
// as ServiceAccounts), where kube-apiserver authenticates each request by a bearer
// token whose review it caches, not by a client certificate that it verifies at each
// request. It returns the kubeconfig's path and the ServiceAccount's user name.
func (e *env) serviceAccountKubeconfig(ctx context.Context, name string) (path, user string, err error) {
	if err := e.EnsureNamespace(ctx, identityNamespace); err != nil {
		return "", "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identityNamespace, Name: name}}
	if _, err := e.Kube.CoreV1().ServiceAccounts(identityNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", "", fmt.Errorf("creating ServiceAccount %s/%s: %w", identityNamespace, name, err)
	}
	expiry := int64(24 * 3600) // longer than any run of the bench
	tr, err := e.Kube.CoreV1().ServiceAccounts(identityNamespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", "", fmt.Errorf("a token of ServiceAccount %s/%s: %w", identityNamespace, name, err)
	}
	host := e.Cluster.RestConfig()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: host.Host, CertificateAuthorityData: host.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	cfg.CurrentContext = "default"
	path = filepath.Join(e.Cluster.Dir(), "kubeconfig-sa-"+name)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", "", err
	}
	return path, serviceaccount.MakeUsername(identityNamespace, name), nil
}
