package ship_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/internal/testenv"
)

// reconciledRelease creates, once, an automatic Release of the hello chart (served
// from examples/charts in this process) on the installation and waits until it is
// Ready: the chart's apiserver stores it, the chart's controller renders and
// applies it, the chart's observer reports it Healthy.
func reconciledRelease(t *testing.T, in *installation) (namespace, name string) {
	t.Helper()
	namespace, name = "ship-e2e", "hello"
	kube := kubernetes.NewForConfigOrDie(env.admin)
	dyn := dynamic.NewForConfigOrDie(env.admin)
	c := ctx(t, 4*time.Minute)
	if _, err := dyn.Resource(releasesGVR).Namespace(namespace).Get(c, name, metav1.GetOptions{}); err == nil {
		return namespace, name
	}
	if _, err := kube.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rel := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(fmt.Appendf(nil, `
apiVersion: convoy.kumodo.io/v1alpha1
kind: Release
metadata: {name: %s, namespace: %s}
spec:
  chart: {repository: %q, name: hello, version: ">=0.1.0"}
  values: {replicaCount: 1}
  syncPolicy: {automatic: true, interval: 1m}
`, name, namespace, in.charts.URL), &rel.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(releasesGVR).Namespace(namespace).Create(c, rel, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Release %s/%s through the chart's apiserver: %v", namespace, name, err)
	}
	testenv.Eventually(t, c, "Release "+namespace+"/"+name+" Ready", 3*time.Minute, func() (bool, string) {
		r, err := dyn.Resource(releasesGVR).Namespace(namespace).Get(c, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return conditionStatus(r, "Ready") == "True", toYAML(t, r.Object["status"])
	})
	return namespace, name
}

// The chart installed on the local control plane runs convoy: its apiserver
// (behind the chart's APIService) stores a Release, its controller (as the
// chart's ServiceAccount, with the chart's RBAC and flags) applies the hello
// chart, and its observer reports the Release Ready; the chart's Deployments are
// Available on the simulated nodes.
func TestChartInstallReconcilesRelease(t *testing.T) {
	in := install(t)
	ns, name := reconciledRelease(t, in)
	kube := kubernetes.NewForConfigOrDie(env.admin)
	c := ctx(t, time.Minute)
	d, err := kube.AppsV1().Deployments(ns).Get(c, "hello", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Release %s/%s applied no Deployment hello: %v", ns, name, err)
	}
	var managers []string
	for _, f := range d.ManagedFields {
		managers = append(managers, f.Manager)
	}
	if !slices.Contains(managers, v1alpha1.FieldManager) {
		t.Errorf("Deployment hello was not applied by convoy's controller: field managers %v", managers)
	}
	for _, dep := range []string{"convoy-apiserver", "convoy-controller", "convoy-observer"} {
		testenv.Eventually(t, c, "Deployment "+dep+" Available", time.Minute, func() (bool, string) {
			d, err := kube.AppsV1().Deployments(in.namespace).Get(c, dep, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, cond := range d.Status.Conditions {
				if cond.Type == appsv1.DeploymentAvailable && cond.Status == "True" {
					return true, ""
				}
			}
			return false, fmt.Sprint(d.Status.Conditions)
		})
	}
	// The processes act as the chart's ServiceAccounts: the controller's Lease names it.
	lease, err := kube.CoordinationV1().Leases(in.namespace).Get(c, "convoy-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no leader election Lease of the controller in %s (the chart's Role): %v", in.namespace, err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("the controller's Lease has no holder")
	}
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }

func readObjectsFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := chart.Objects(map[string]string{path: string(data)})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}
