package localcluster_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/testenv"
)

// TestSimulatedNodes runs one control plane with three simulated nodes and checks that
// they look to the scheduler like a cloud cluster's: what they advertise, and that the
// workloads of widely used charts (ephemeral-storage requests, zone spread, volume
// claim templates, DaemonSets) become ready on them.
func TestSimulatedNodes(t *testing.T) {
	c := start(t, localcluster.Options{Workloads: true, Nodes: 3})
	cs := clientset(t, c)

	t.Run("nodes advertise a cloud node's resources and labels, zones round-robin", func(t *testing.T) {
		nodes, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 3 {
			t.Fatalf("want 3 nodes, got %d", len(nodes.Items))
		}
		wantResources := corev1.ResourceList{
			"cpu": resource.MustParse("32"), "memory": resource.MustParse("256Gi"),
			"ephemeral-storage": resource.MustParse("1Ti"), "pods": resource.MustParse("1000"),
			"hugepages-1Gi": resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
		}
		for i, zone := range []string{"local-a", "local-b", "local-c"} {
			name := fmt.Sprintf("kwok-node-%d", i)
			n, err := cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for what, got := range map[string]corev1.ResourceList{"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable} {
				if !sameResources(got, wantResources) {
					t.Errorf("node %s %s = %s, want %s", name, what, resourcesString(got), resourcesString(wantResources))
				}
			}
			wantLabels := map[string]string{
				"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
				"node.kubernetes.io/instance-type": "kwok-standard-32",
				"topology.kubernetes.io/region":    "local", "topology.kubernetes.io/zone": zone,
			}
			for k, v := range wantLabels {
				if n.Labels[k] != v {
					t.Errorf("node %s label %s = %q, want %q", name, k, n.Labels[k], v)
				}
			}
		}
		classes, err := cs.StorageV1().StorageClasses().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var defaults []string
		for _, sc := range classes.Items {
			if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
				defaults = append(defaults, sc.Name)
			}
		}
		if len(defaults) != 1 {
			t.Errorf("want one default StorageClass, got %v", defaults)
		}
	})

	t.Run("a Deployment requesting ephemeral-storage and spread over zones becomes Available", func(t *testing.T) {
		t.Parallel()
		ctx, ns := t.Context(), namespace(t, cs, "spread")
		labels := map[string]string{"app": "cache"}
		pod := podSpec(labels)
		pod.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
		}}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
			},
		}
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, ctx, "the Deployment Available with 3 replicas", 2*time.Minute, func() (bool, string) {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, "cache", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return d.Status.AvailableReplicas == 3, fmt.Sprintf("%d available; %s", d.Status.AvailableReplicas, pendingReasons(t, cs, ns))
		})
		if zones := podZones(t, cs, ns, "app=cache"); len(zones) != 3 {
			t.Errorf("3 replicas spread over zones should be in 3 zones, are in %v", zones)
		}
	})

	t.Run("a StatefulSet with volumeClaimTemplates of the default class becomes Ready with its claims Bound", func(t *testing.T) {
		t.Parallel()
		ctx, ns := t.Context(), namespace(t, cs, "volumes")
		labels := map[string]string{"app": "db"}
		pod := podSpec(labels)
		pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr.To[int32](2),
				ServiceName: "db",
				Selector:    &metav1.LabelSelector{MatchLabels: labels},
				Template:    corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("8Gi")},
						},
					},
				}},
			},
		}
		if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, ctx, "the StatefulSet Ready with 2 replicas", 2*time.Minute, func() (bool, string) {
			s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return s.Status.ReadyReplicas == 2 && s.Status.AvailableReplicas == 2,
				fmt.Sprintf("%d ready; %s", s.Status.ReadyReplicas, pendingReasons(t, cs, ns))
		})
		for _, name := range []string{"data-db-0", "data-db-1"} {
			pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "kwok-volume" {
				t.Errorf("claim %s: phase %s, class %v; want Bound, of the default class kwok-volume", name, pvc.Status.Phase, ptr.Deref(pvc.Spec.StorageClassName, "<none>"))
				continue
			}
			pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if pv.Status.Phase != corev1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
				t.Errorf("volume %s of claim %s: phase %s, claimRef %v; want Bound to the claim", pv.Name, name, pv.Status.Phase, pv.Spec.ClaimRef)
			}
		}
	})

	t.Run("a claim of the default class is Bound, and its volume goes with it", func(t *testing.T) {
		t.Parallel()
		ctx, ns := t.Context(), namespace(t, cs, "claim")
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				},
			},
		}
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var volume string
		testenv.Eventually(t, ctx, "the claim Bound", time.Minute, func() (bool, string) {
			got, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			volume = got.Spec.VolumeName
			return got.Status.Phase == corev1.ClaimBound, "phase " + string(got.Status.Phase)
		})
		if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, ctx, "the claim's volume "+volume+" deleted", time.Minute, func() (bool, string) {
			pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, volume, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			if err != nil {
				return false, err.Error()
			}
			return false, "phase " + string(pv.Status.Phase)
		})
	})

	t.Run("a DaemonSet becomes Ready on every node", func(t *testing.T) {
		t.Parallel()
		ctx, ns := t.Context(), namespace(t, cs, "daemons")
		labels := map[string]string{"app": "agent"}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(labels)},
			},
		}
		if _, err := cs.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, ctx, "the DaemonSet Ready on 3 nodes", 2*time.Minute, func() (bool, string) {
			d, err := cs.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			s := d.Status
			return s.DesiredNumberScheduled == 3 && s.NumberReady == 3 && s.NumberAvailable == 3,
				fmt.Sprintf("desired %d, ready %d; %s", s.DesiredNumberScheduled, s.NumberReady, pendingReasons(t, cs, ns))
		})
	})
}

// TestEnsureNodeUpdatesAnOlderNodeThenWritesNothing: a node that a reused state folder
// kept from an older convoy (no ephemeral-storage, no zone) gets the simulated node's
// labels and resources, and a node already as wanted is not written again.
func TestEnsureNodeUpdatesAnOlderNodeThenWritesNothing(t *testing.T) {
	c := start(t, localcluster.Options{}) // no kwok: nothing else writes the node
	cs := clientset(t, c)
	ctx := t.Context()

	old := localcluster.SimulatedNode(1)
	delete(old.Labels, "topology.kubernetes.io/zone")
	old.Labels["team"] = "kept"
	for _, rl := range []corev1.ResourceList{old.Status.Capacity, old.Status.Allocatable} {
		delete(rl, corev1.ResourceEphemeralStorage)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := localcluster.EnsureNode(ctx, cs, 1); err != nil {
		t.Fatal(err)
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, "kwok-node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Labels["topology.kubernetes.io/zone"]; got != "local-b" {
		t.Errorf("zone label = %q, want local-b", got)
	}
	if n.Labels["team"] != "kept" {
		t.Errorf("a label the node had was dropped: %v", n.Labels)
	}
	for what, rl := range map[string]corev1.ResourceList{"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable} {
		if q, ok := rl[corev1.ResourceEphemeralStorage]; !ok || q.Cmp(resource.MustParse("1Ti")) != 0 {
			t.Errorf("%s ephemeral-storage = %v, want 1Ti", what, rl[corev1.ResourceEphemeralStorage])
		}
	}
	if err := localcluster.EnsureNode(ctx, cs, 1); err != nil {
		t.Fatal(err)
	}
	again, err := cs.CoreV1().Nodes().Get(ctx, "kwok-node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != n.ResourceVersion {
		t.Errorf("a node already as wanted was written (resourceVersion %s -> %s)", n.ResourceVersion, again.ResourceVersion)
	}
}

// podSpec is a Pod of a bitnami chart's "nano" resourcesPreset: requests and limits
// of cpu, memory and ephemeral-storage.
func podSpec(labels map[string]string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: labels["app"], Image: "registry.example/" + labels["app"] + ":1",
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("50Mi"),
			},
			Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("150m"), corev1.ResourceMemory: resource.MustParse("192Mi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("2Gi"),
			},
		},
	}}}
}

func namespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// pendingReasons says why the namespace's Pods are not scheduled, for a failure message.
func pendingReasons(t *testing.T, cs kubernetes.Interface, ns string) string {
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var reasons []string
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
				reasons = append(reasons, p.Name+": "+c.Message)
			}
		}
	}
	return fmt.Sprintf("%d pods, unscheduled: %v", len(pods.Items), reasons)
}

// podZones are the zones of the nodes that the Pods matching selector run on.
func podZones(t *testing.T, cs kubernetes.Interface, ns, selector string) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var zones []string
	for _, p := range pods.Items {
		n, err := cs.CoreV1().Nodes().Get(t.Context(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if z := n.Labels["topology.kubernetes.io/zone"]; !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
	}
	return zones
}

// sameResources compares resource lists by quantity value.
func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if w, ok := b[k]; !ok || q.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// resourcesString is a resource list as name=quantity pairs, sorted.
func resourcesString(rl corev1.ResourceList) string {
	pairs := make([]string, 0, len(rl))
	for name, q := range rl {
		pairs = append(pairs, string(name)+"="+q.String())
	}
	slices.Sort(pairs)
	return strings.Join(pairs, " ")
}
