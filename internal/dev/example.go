package dev

import (
	"context"
	"fmt"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/chartrepo"
)

// ExampleFile is the Release that dev applies, relative to Options.ExamplesDir.
const ExampleFile = "release-manual.yaml"

// FieldManager is the server-side apply field manager of what dev applies.
const FieldManager = "convoy-dev"

// ExampleRelease is the example Release dev applied (or found).
type ExampleRelease struct {
	Namespace, Name string
	// Created is true when this run applied it; false when it was already there.
	Created bool
	// Repository is the chart repository the Release names.
	Repository string
}

// ApplyExample creates the namespace of the Release in path and, when no Release
// of that name exists there, applies it with server-side apply (field manager
// convoy-dev). When chartsURL is set and differs from the default address the
// examples name, the Release's spec.chart.repository is set to chartsURL.
func ApplyExample(ctx context.Context, host *rest.Config, path, chartsURL string) (*ExampleRelease, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the example: %w", err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &obj.Object); err != nil {
		return nil, fmt.Errorf("read the example %s: %w", path, err)
	}
	gvk := obj.GroupVersionKind()
	if gvk.Group != v1alpha1.GroupName || gvk.Kind != "Release" || obj.GetNamespace() == "" || obj.GetName() == "" {
		return nil, fmt.Errorf("the example %s is not a Release with a namespace and a name", path)
	}
	if chartsURL != "" && chartsURL != "http://"+chartrepo.DefaultAddr {
		if err := unstructured.SetNestedField(obj.Object, chartsURL, "spec", "chart", "repository"); err != nil {
			return nil, err
		}
	}
	ex := &ExampleRelease{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	ex.Repository, _, _ = unstructured.NestedString(obj.Object, "spec", "chart", "repository")

	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	apply := metav1.ApplyOptions{FieldManager: FieldManager}
	if _, err := kube.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(ex.Namespace), apply); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", ex.Namespace, err)
	}
	dyn, err := dynamic.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	releases := dyn.Resource(schema.GroupVersionResource{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Resource: v1alpha1.ResourceReleases}).
		Namespace(ex.Namespace)
	// A Release left by an earlier run (perhaps synced or edited) stays as it is.
	if _, err := releases.Get(ctx, ex.Name, metav1.GetOptions{}); err == nil {
		return ex, nil
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read Release %s/%s: %w", ex.Namespace, ex.Name, err)
	}
	if _, err := releases.Apply(ctx, ex.Name, obj, apply); err != nil {
		return nil, fmt.Errorf("apply the example %s: %w", path, err)
	}
	ex.Created = true
	return ex, nil
}

// SyncPath is the API path of a POST that requests a sync of the Release.
func (e *ExampleRelease) SyncPath() string {
	return fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s/%s/%s", v1alpha1.GroupName, v1alpha1.Version,
		e.Namespace, v1alpha1.ResourceReleases, e.Name, v1alpha1.SubresourceSync)
}

// usage is the walkthrough of the example in dev's usage notes.
func (e *ExampleRelease) usage() string {
	if e == nil {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, `The example Release %[1]s/%[2]s (manual mode, chart from %[3]s) waits for a sync:

  kubectl get releases -n %[1]s                 # %[2]s: Applied=False, WaitingForSync
  kubectl create --raw %[4]s -f /dev/null
                                             # (with the kubectl-convoy plugin: kubectl convoy release sync %[2]s -n %[1]s)
  kubectl get releases,deployments -n %[1]s     # %[2]s: Applied=True, Deployment %[2]s Available
  kubectl apply -f examples/release-automatic.yaml   # automatic mode: applied without a sync
`, e.Namespace, e.Name, e.Repository, e.SyncPath())
	if e.Repository != "http://"+chartrepo.DefaultAddr {
		fmt.Fprintf(&s, "  (the examples name http://%s; set spec.chart.repository to %s first)\n", chartrepo.DefaultAddr, e.Repository)
	}
	s.WriteString("\n")
	return s.String()
}
