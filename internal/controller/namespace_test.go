package controller

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// A Release that outlived its namespace is deleted, with what it applied, however
// soon the namespace is created again. The namespace controller leaves convoy's
// Releases behind when it finalizes a namespace on a discovery without convoy's API,
// which a kube-apiserver that has just started serves for a moment (the chaos run's
// seed 1251186771: the namespace deleted, then created again 22 s later, and the old
// Releases applied their objects into the new one). The test leaves the Release behind
// the same way, without the namespace controller: it empties the namespace's
// finalizers before the deletion, so that the namespace goes with its content left in
// storage, and creates it again at once, well within policy.ClockSkewMargin of the
// Release's creation, while the controller is stopped: the namespace UID the Release recorded tells the two namespaces
// apart. A Release created in the new namespace stays.
func TestAReleaseThatOutlivedItsNamespaceIsDeleted(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("web", automatic())
	old := e.waitApplied("web", "True", v1.ReasonApplied)
	if e.configMap("web-config") == nil {
		t.Fatal("web-config was not applied")
	}
	kube, err := kubernetes.NewForConfig(hostConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns, err := kube.CoreV1().Namespaces().Get(e.ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := old.Annotations[v1.AnnotationNamespaceUID]; got != string(ns.UID) {
		t.Fatalf("the Release recorded namespace UID %q, want %q", got, ns.UID)
	}
	// The controller does not run while the namespace is away, as when it cannot reach
	// a restarting kube-apiserver: it finds the namespace of the Release's name there
	// again when it comes back. (Running, it would find the namespace gone and delete
	// the Release.)
	e.stopController()
	<-e.stopped
	again := e.recreateNamespace(kube, ns)
	if d := again.CreationTimestamp.Sub(old.CreationTimestamp.Time); d >= policy.ClockSkewMargin {
		t.Fatalf("the namespace was created again %s after the Release, not within the clock skew margin %s", d, policy.ClockSkewMargin)
	}
	e.startController()

	e.eventually("the Release that outlived its namespace gone, with web-config", func() (bool, string) {
		if gone, why := e.outlivedGone(old); !gone {
			return false, why
		}
		if cm := e.configMap("web-config"); cm != nil {
			return false, "web-config is left"
		}
		return true, ""
	})

	e.createRelease("api", automatic())
	e.waitApplied("api", "True", v1.ReasonApplied)
	e.consistently("the Release of the new namespace stays", 3*time.Second, func() (bool, string) {
		rel := e.release("api")
		return rel.DeletionTimestamp == nil, fmt.Sprintf("deletionTimestamp %v", rel.DeletionTimestamp)
	})
}
