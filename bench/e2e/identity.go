package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// identityNamespace holds the ServiceAccounts that convoy controller and observer run
// as: the namespace of the chart's installation in README.md.
const identityNamespace = "convoy-system"

// serviceAccountKubeconfig creates the ServiceAccount name in identityNamespace and
// writes a kubeconfig with a token of it (localcluster's ServiceAccountKubeconfig): the
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
	if path, err = e.Cluster.ServiceAccountKubeconfig(ctx, identityNamespace, name); err != nil {
		return "", "", err
	}
	return path, serviceaccount.MakeUsername(identityNamespace, name), nil
}
