package targets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// host is the cluster convoy would run in; remote is a second cluster that a
// Cluster object points at. Both nil with -short.
var host, remote *localcluster.Cluster

func TestMain(m *testing.M) {
	testenv.Main(m, func(s *testenv.Setup) (err error) {
		if host, err = s.Cluster("the host control plane", localcluster.Options{AuditWrites: true}); err != nil {
			return err
		}
		if remote, err = s.Cluster("the remote control plane", localcluster.Options{}); err != nil {
			return err
		}
		if err := installClusterCRD(s.Context()); err != nil {
			return fmt.Errorf("install the Cluster CRD: %w", err)
		}
		return nil
	})
}

// hostClient reads and writes convoy's API and the core API on the host.
func hostClient() (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(host.RestConfig(), client.Options{Scheme: scheme})
}

// installClusterCRD serves convoy's Cluster kind on the host from a CRD, so
// that this package is tested without convoy's API server.
func installClusterCRD(ctx context.Context) error {
	c, err := client.New(host.RestConfig(), client.Options{})
	if err != nil {
		return err
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": v1alpha1.ResourceClusters + "." + v1alpha1.GroupName},
		"spec": map[string]any{
			"group": v1alpha1.GroupName,
			"scope": "Cluster",
			"names": map[string]any{"kind": "Cluster", "listKind": "ClusterList", "plural": v1alpha1.ResourceClusters, "singular": "cluster"},
			"versions": []any{map[string]any{
				"name": v1alpha1.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if err := c.Create(ctx, crd); err != nil {
		return err
	}
	hc, err := hostClient()
	if err != nil {
		return err
	}
	// Wait until the kind is served.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return hc.List(ctx, &v1alpha1.ClusterList{}) == nil, nil
	})
}

type env struct {
	ctx    context.Context
	ns     string
	client client.Client
	cache  *Cache
}

func integration(t *testing.T, nsLabels map[string]string) *env {
	t.Helper()
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	c, err := hostClient()
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, ctx, c, "clusters", nsLabels)
	cache, err := New(Options{Host: host.RestConfig(), Reader: c})
	if err != nil {
		t.Fatal(err)
	}
	return &env{ctx: ctx, ns: ns, client: c, cache: cache}
}

// clusterFor creates a Cluster named after the test whose kubeconfig Secret
// (in the test's namespace) holds kubeconfig under key.
func (e *env) clusterFor(t *testing.T, kubeconfig []byte, key string, selector *metav1.LabelSelector) *v1alpha1.Cluster {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig", Namespace: e.ns},
		Data:       map[string][]byte{key: kubeconfig},
	}
	if err := e.client.Create(e.ctx, secret); err != nil {
		t.Fatal(err)
	}
	cl := &v1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns},
		Spec: v1alpha1.ClusterSpec{
			Kubeconfig:        v1alpha1.KubeconfigSource{SecretRef: v1alpha1.SecretKeyReference{Namespace: e.ns, Name: "kubeconfig", Key: key}},
			NamespaceSelector: selector,
		},
	}
	if err := e.client.Create(e.ctx, cl); err != nil {
		t.Fatal(err)
	}
	return cl
}

func releaseIn(ns, cluster string) *v1alpha1.Release {
	return &v1alpha1.Release{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       v1alpha1.ReleaseSpec{Cluster: cluster},
	}
}

func remoteKubeconfig(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(remote.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantNotReady checks that err is a *NotReadyError of kind whose message contains want.
func wantNotReady(t *testing.T, err error, kind NotReadyKind, want string) {
	t.Helper()
	ne, ok := errors.AsType[*NotReadyError](err)
	if !ok || !IsNotReady(err) {
		t.Fatalf("error %v is not a NotReadyError", err)
	}
	if ne.Kind != kind {
		t.Errorf("Kind = %q, want %q (error %v)", ne.Kind, kind, err)
	}
	if ne.Reason() != v1alpha1.ReasonClusterNotReady {
		t.Errorf("Reason = %q", ne.Reason())
	}
	if !strings.Contains(ne.Message, want) {
		t.Errorf("message %q does not contain %q", ne.Message, want)
	}
}

func existsOn(t *testing.T, ctx context.Context, c client.Client, ns, name string) bool {
	t.Helper()
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}
