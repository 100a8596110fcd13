package deploy_test

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/test/convoychart"
)

// TestReceiverValue: receiver.enabled serves the receiver server on every controller
// Deployment (of each shard) at receiver.port, named receiver, behind the Service
// convoy-receiver; off (the default, deploy/) there is neither flag nor Service.
func TestReceiverValue(t *testing.T) {
	c := convoychart.Load(t)
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   bool
	}{
		{"default", map[string]any{}, false},
		{"enabled", map[string]any{"receiver": map[string]any{"enabled": true, "port": 9443}}, true},
		{"enabled with shards", map[string]any{"receiver": map[string]any{"enabled": true, "port": 9443}, "shards": []any{"a", "b"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := chart.Render(c, tc.values, "convoy-system")
			if err != nil {
				t.Fatal(err)
			}
			objs, err := chart.Objects(files)
			if err != nil {
				t.Fatal(err)
			}
			deployments := 0
			for _, o := range objs {
				switch {
				case o.GetKind() == "Deployment" && o.GetLabels()["app.kubernetes.io/name"] == "convoy-controller":
					deployments++
					var d appsv1.Deployment
					typed(t, o, &d)
					ctr := d.Spec.Template.Spec.Containers[0]
					hasFlag := slices.Contains(ctr.Args, "--receiver-bind-address=:9443")
					hasPort := slices.ContainsFunc(ctr.Ports, func(p corev1.ContainerPort) bool { return p.Name == "receiver" && p.ContainerPort == 9443 })
					if hasFlag != tc.want || hasPort != tc.want {
						t.Errorf("%s: flag %v, port %v; want %v", d.Name, hasFlag, hasPort, tc.want)
					}
				case o.GetKind() == "Service" && o.GetName() == "convoy-receiver":
					if !tc.want {
						t.Errorf("the Service convoy-receiver is rendered with receiver.enabled false")
						continue
					}
					var s corev1.Service
					typed(t, o, &s)
					want := corev1.ServicePort{Name: "receiver", Port: 9443, TargetPort: intstr.FromString("receiver")}
					if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Name != want.Name || s.Spec.Ports[0].Port != want.Port || s.Spec.Ports[0].TargetPort != want.TargetPort ||
						s.Spec.Selector["app.kubernetes.io/name"] != "convoy-controller" || len(s.Spec.Selector) != 1 || s.Spec.Type != corev1.ServiceTypeClusterIP {
						t.Errorf("Service convoy-receiver: %+v", s.Spec)
					}
				}
			}
			if deployments == 0 {
				t.Fatal("no controller Deployment rendered")
			}
			services := 0
			for _, o := range objs {
				if o.GetKind() == "Service" && o.GetName() == "convoy-receiver" {
					services++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.want]; services != want {
				t.Errorf("%d Services convoy-receiver, want %d", services, want)
			}
		})
	}
}
