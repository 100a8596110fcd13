package releaseset_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// A ReleaseSet that outlived its namespace is deleted, and writes no Release into the
// namespace of its name created again at once. The namespace controller leaves
// convoy's objects behind when it finalizes a namespace on a discovery without
// convoy's API (a kube-apiserver that has just started); the test leaves the set behind
// the same way, without the namespace controller (empty finalizers, then the delete),
// while the controller is not running, and creates the namespace again within
// seconds: only the namespace UID the set recorded tells the two namespaces apart.
func TestAReleaseSetThatOutlivedItsNamespaceIsDeleted(t *testing.T) {
	f, start := newStoppedFleet(t, map[string]map[string]string{"c1": nil})
	f.create(f.stagedSet("web", `{"replicas":1}`))
	set := f.set("web")

	kube, err := kubernetes.NewForConfig(host.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns, err := kube.CoreV1().Namespaces().Get(f.ctx, f.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Annotations[v1.AnnotationNamespaceUID]; got != string(ns.UID) {
		t.Fatalf("the ReleaseSet recorded namespace UID %q, want %q", got, ns.UID)
	}
	ns.Spec.Finalizers = nil
	if _, err := kube.CoreV1().Namespaces().Finalize(f.ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, f.ctx, "namespace "+f.ns+" gone", time.Minute, func() (bool, string) {
		err := kube.CoreV1().Namespaces().Delete(f.ctx, f.ns, metav1.DeleteOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("delete: %v", err)
	})
	if _, err := kube.CoreV1().Namespaces().Create(f.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	start()
	testenv.Eventually(t, f.ctx, "the ReleaseSet that outlived its namespace gone", 2*time.Minute, func() (bool, string) {
		got := &v1.ReleaseSet{}
		err := f.c.Get(f.ctx, client.ObjectKeyFromObject(set), got)
		switch {
		case apierrors.IsNotFound(err):
			return true, ""
		case err != nil:
			return false, fmt.Sprintf("get: %v", err)
		case got.UID != set.UID:
			return true, ""
		}
		return false, fmt.Sprintf("the ReleaseSet is there, deletionTimestamp %v, %d Releases", got.DeletionTimestamp, len(f.releases("web")))
	})
	if n := len(f.releases("web")); n != 0 {
		t.Errorf("the ReleaseSet wrote %d Releases into the namespace created again", n)
	}
	testenv.Eventually(t, f.ctx, "a Warning event "+v1.EventOutlivedNamespace+" on the ReleaseSet", time.Minute, func() (bool, string) {
		return f.warning("web", v1.EventOutlivedNamespace, "it was created in the namespace of UID "+string(ns.UID)), ""
	})
}
