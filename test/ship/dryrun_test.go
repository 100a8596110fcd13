package ship_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
)

// monitoringGroup is the Prometheus Operator's API group, whose CRDs the local
// control plane does not have.
const monitoringGroup = "monitoring.coreos.com"

// Every object of the chart's default and non-default renders passes a
// server-side apply dry run on the local control plane (the API server's
// validation, defaulting and admission, with the objects already there, as an
// upgrade would meet them), except the ServiceMonitors and the PrometheusRule: the
// local control plane has no Prometheus Operator CRDs, so for those only their
// rendering is checked (TestChartRendersNonDefaults).
func TestChartServerSideDryRun(t *testing.T) {
	needCluster(t)
	c := ctx(t, 3*time.Minute)
	kube := kubernetes.NewForConfigOrDie(env.admin)
	dyn := dynamic.NewForConfigOrDie(env.admin)
	dc := discovery.NewDiscoveryClientForConfigOrDie(env.admin)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	for name, values := range map[string]map[string]any{"default": nil, "non-default": nonDefaultValues()} {
		t.Run(name, func(t *testing.T) {
			ns := "convoy-dryrun-" + name
			_, err := kube.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			checked := 0
			for _, o := range render(t, values, ns) {
				gvk := o.GroupVersionKind()
				if gvk.Group == monitoringGroup {
					continue
				}
				m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Errorf("%s %s: %v", gvk, o.GetName(), err)
					continue
				}
				ri := dyn.Resource(m.Resource)
				var r dynamic.ResourceInterface = ri
				if m.Scope.Name() == meta.RESTScopeNameNamespace {
					r = ri.Namespace(o.GetNamespace())
				}
				data, err := o.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				force := true
				_, err = r.Patch(context.WithoutCancel(c), o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
					DryRun: []string{metav1.DryRunAll}, FieldManager: "ship-test", Force: &force})
				if err != nil {
					t.Errorf("server-side dry run of %s: %v", describe(o.GetKind(), o.GetNamespace(), o.GetName()), err)
				}
				checked++
			}
			if checked < 30 {
				t.Errorf("only %d objects dry-run", checked)
			}
		})
	}
}

func describe(kind, namespace, name string) string {
	if namespace == "" {
		return fmt.Sprintf("%s %s", kind, name)
	}
	return fmt.Sprintf("%s %s/%s", kind, namespace, name)
}
