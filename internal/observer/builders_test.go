package observer

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Small builders of test objects. Without a controller, a test plays its part: it
// creates the Release, the objects as convoy applies them (with convoy's labels) and
// the ReleaseInventory that lists them.

// testRelease is a manual-mode Release of the test chart waves.
func testRelease(ns, name string) *v1.Release {
	return &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1.ReleaseSpec{Chart: v1.ChartSource{Repository: chartsURL, Name: "waves"}},
	}
}

// testInventory lists objs (each in wave 0 unless given) for renderRef.
func testInventory(ns, name, renderRef string, objs ...v1.InventoryObject) *v1.ReleaseInventory {
	return &v1.ReleaseInventory{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RenderRef:  renderRef,
		Objects:    objs,
	}
}

// entry is the inventory entry of a Deployment or ConfigMap in wave.
func entry(kind, ns, name string, wave int32) v1.InventoryObject {
	ref := v1.ObjectReference{Version: "v1", Kind: kind, Namespace: ns, Name: name}
	if kind == "Deployment" {
		ref.Group = "apps"
	}
	return v1.InventoryObject{ObjectReference: ref, Wave: wave}
}

// convoyLabels are the labels convoy's render puts on the objects of a Release.
func convoyLabels(ns, release string) map[string]string {
	return map[string]string{v1.LabelReleaseName: release, v1.LabelReleaseNamespace: ns}
}

type deploymentOption func(*appsv1.Deployment)

// testDeployment is a one-replica Deployment of release, which kwok's nodes run.
func testDeployment(ns, release, name string, opts ...deploymentOption) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: convoyLabels(ns, release)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			},
		},
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// unschedulable keeps the Deployment's pods Pending: no node has the label.
func unschedulable() deploymentOption {
	return func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.NodeSelector = map[string]string{"convoy.kumodo.io/test": "no-such-node"}
	}
}

// progressDeadline sets progressDeadlineSeconds.
func progressDeadline(seconds int32) deploymentOption {
	return func(d *appsv1.Deployment) { d.Spec.ProgressDeadlineSeconds = ptr.To(seconds) }
}

// testConfigMap is a ConfigMap of release; kstatus finds it Current at once.
func testConfigMap(ns, release, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: convoyLabels(ns, release)},
		Data:       map[string]string{"k": "v"},
	}
}

// renderRef is a render ref made of repeated hex digits ("a", or "5e"), 64 of them.
func renderRef(digits string) string {
	return "sha256:" + strings.Repeat(digits, 64)[:64]
}

// appRelease is an automatic-mode Release of the test chart app (one Deployment named
// after the Release) with values, a JSON object.
func appRelease(ns, name, values string) *v1.Release {
	return &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.ReleaseSpec{
			Chart:      v1.ChartSource{Repository: chartsURL, Name: "app"},
			Values:     &runtime.RawExtension{Raw: []byte(values)},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(true)},
		},
	}
}
