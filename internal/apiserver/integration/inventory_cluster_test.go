package integration_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// The controller's object list and the observer's status of a ReleaseInventory
// cannot overwrite each other.
func TestReleaseInventoryMainAndStatusAreSeparate(t *testing.T) {
	ns := testNamespace(t)
	c := admin(t)
	inv := &convoyv1alpha1.ReleaseInventory{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "ReleaseInventory"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		Cluster:    "prod-eu", RenderRef: refB,
		Objects: []convoyv1alpha1.InventoryObject{{ObjectReference: convoyv1alpha1.ObjectReference{
			Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "podinfo", Name: "podinfo"}, Wave: 1}},
	}
	created := &convoyv1alpha1.ReleaseInventory{}
	if err := c.Post().Namespace(ns).Resource("releaseinventories").Body(inv).Do(ctx(t)).Into(created); err != nil {
		t.Fatalf("creating: %v", err)
	}

	created.Status.Health = convoyv1alpha1.HealthHealthy
	created.Objects = nil
	withStatus := &convoyv1alpha1.ReleaseInventory{}
	if err := c.Put().Namespace(ns).Resource("releaseinventories").Name("podinfo").SubResource("status").Body(created).Do(ctx(t)).Into(withStatus); err != nil {
		t.Fatalf("PUT /status: %v", err)
	}
	if withStatus.Status.Health != convoyv1alpha1.HealthHealthy || len(withStatus.Objects) != 1 {
		t.Errorf("after /status: health %q, %d objects; want Healthy and 1", withStatus.Status.Health, len(withStatus.Objects))
	}

	withStatus.Status.Health = convoyv1alpha1.HealthDegraded
	withStatus.Objects = nil
	main := &convoyv1alpha1.ReleaseInventory{}
	if err := c.Put().Namespace(ns).Resource("releaseinventories").Name("podinfo").Body(withStatus).Do(ctx(t)).Into(main); err != nil {
		t.Fatalf("PUT: %v", err)
	}
	if main.Status.Health != convoyv1alpha1.HealthHealthy || len(main.Objects) != 0 {
		t.Errorf("after a main write: health %q, %d objects; want Healthy (kept) and 0", main.Status.Health, len(main.Objects))
	}

	list := &convoyv1alpha1.ReleaseInventoryList{}
	if err := c.Get().Namespace(ns).Resource("releaseinventories").Param("fieldSelector", "cluster=prod-eu").Do(ctx(t)).Into(list); err != nil || len(list.Items) != 1 {
		t.Errorf("fieldSelector cluster=prod-eu: %d items, %v; want 1", len(list.Items), err)
	}
}

// Clusters are cluster-scoped and validated.
func TestClusterCreateAndValidation(t *testing.T) {
	c := admin(t)
	name := "prod-" + testenv.RandomSuffix()
	cluster := &convoyv1alpha1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: convoyv1alpha1.ClusterSpec{Kubeconfig: convoyv1alpha1.KubeconfigSource{
			SecretRef: convoyv1alpha1.SecretKeyReference{Namespace: "convoy-system", Name: name + "-kubeconfig", Key: "value"}}},
	}
	if err := c.Post().Resource("clusters").Body(cluster).Do(ctx(t)).Error(); err != nil {
		t.Fatalf("creating a Cluster: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete().Resource("clusters").Name(name).Do(ctx(t)).Error() })

	invalid := cluster.DeepCopy()
	invalid.Name = name + "-invalid"
	invalid.Spec.Kubeconfig.SecretRef.Name = ""
	requireInvalid(t, c.Post().Resource("clusters").Body(invalid).Do(ctx(t)).Error(), "spec.kubeconfig.secretRef.name")
}
