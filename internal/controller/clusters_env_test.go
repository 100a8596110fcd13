package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// createSecret stores a kubeconfig in a Secret of the test's namespace, default key.
func (e *env) createSecret(name string, kubeconfig []byte) {
	e.t.Helper()
	testenv.Create(e.t, e.ctx, e.client, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Data:       map[string][]byte{v1.DefaultKubeconfigKey: kubeconfig},
	})
}

// createCluster creates a Cluster whose kubeconfig is the Secret secret of the test's
// namespace, and deletes it at the end of the test.
func (e *env) createCluster(name, secret string) string {
	e.t.Helper()
	return testenv.RegisterCluster(e.t, e.ctx, e.client, name, nil, e.ns, secret, nil).Name
}
