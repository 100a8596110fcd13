package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// createSecret stores a kubeconfig in a Secret of the test's namespace, default key.
func (e *env) createSecret(name string, kubeconfig []byte) {
	e.t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Data:       map[string][]byte{v1.DefaultKubeconfigKey: kubeconfig},
	}
	if err := e.client.Create(e.ctx, s); err != nil {
		e.t.Fatalf("create Secret %s: %v", name, err)
	}
}

// createCluster creates a Cluster whose kubeconfig is the Secret secret of the test's
// namespace, and deletes it at the end of the test.
func (e *env) createCluster(name, secret string) string {
	e.t.Helper()
	c := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{
			Namespace: e.ns, Name: secret,
		}}},
	}
	if err := e.client.Create(e.ctx, c); err != nil {
		e.t.Fatalf("create Cluster %s: %v", name, err)
	}
	e.t.Cleanup(func() { _ = e.client.Delete(e.ctx, c) })
	return name
}
