package targets

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
)

func TestResolveHost(t *testing.T) {
	e := integration(t, nil)
	target, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, ""))
	if err != nil {
		t.Fatal(err)
	}
	if target.Name != "" || target.Config.Host != host.Host() {
		t.Errorf("target %q at %s, want the host at %s", target.Name, target.Config.Host, host.Host())
	}
	applyConfigMap(t, e, target, "on-host")
	if !existsOn(t, e.ctx, e.client, e.ns, "on-host") {
		t.Error("the ConfigMap is not on the host")
	}

	again, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, ""))
	if err != nil {
		t.Fatal(err)
	}
	if again != target {
		t.Error("a second Resolve made a new connection to the host")
	}

	d, err := target.Discovery()
	if err != nil {
		t.Fatal(err)
	}
	if d.KubeVersion != target.Version.GitVersion || d.KubeVersion == "" {
		t.Errorf("KubeVersion %q, Version %q", d.KubeVersion, target.Version.GitVersion)
	}
	if !serves(d, "apps/v1", "Deployment") || !serves(d, v1alpha1.SchemeGroupVersion.String(), "Cluster") {
		t.Errorf("discovery lacks apps/v1 Deployment or convoy's Cluster: %d lists", len(d.Resources))
	}
}

func TestResolveRemoteCluster(t *testing.T) {
	e := integration(t, nil)
	cl := e.clusterFor(t, remoteKubeconfig(t), "value", nil)
	rel := releaseIn(e.ns, cl.Name)

	target, err := e.cache.Resolve(e.ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if target.Name != cl.Name || target.Config.Host != remote.Host() {
		t.Fatalf("target %q at %s, want %q at %s", target.Name, target.Config.Host, cl.Name, remote.Host())
	}

	// Objects applied through the target land on the remote cluster only.
	remoteClient, err := client.New(remote.RestConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := remoteClient.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		t.Fatal(err)
	}
	applyConfigMap(t, e, target, "on-remote")
	if !existsOn(t, e.ctx, remoteClient, e.ns, "on-remote") {
		t.Error("the ConfigMap is not on the remote cluster")
	}
	if existsOn(t, e.ctx, e.client, e.ns, "on-remote") {
		t.Error("the ConfigMap is on the host")
	}

	// The connection is kept while the Secret stays the same, and remade when it changes.
	again, err := e.cache.Resolve(e.ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if again != target {
		t.Error("a second Resolve with the same Secret made a new connection")
	}
	secret := &corev1.Secret{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Labels = map[string]string{"rotated": "yes"}
	if err := e.client.Update(e.ctx, secret); err != nil {
		t.Fatal(err)
	}
	renewed, err := e.cache.Resolve(e.ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if renewed == target {
		t.Error("a changed Secret kept the old connection")
	}
}

func TestResolveNamespaceSelector(t *testing.T) {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"convoy-targets": "remote"}}
	t.Run("selects the namespace", func(t *testing.T) {
		e := integration(t, map[string]string{"convoy-targets": "remote"})
		cl := e.clusterFor(t, remoteKubeconfig(t), "value", selector)
		if _, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, cl.Name)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("excludes the namespace", func(t *testing.T) {
		e := integration(t, map[string]string{"convoy-targets": "elsewhere"})
		cl := e.clusterFor(t, remoteKubeconfig(t), "value", selector)
		_, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, cl.Name))
		wantNotReady(t, err, NotAdmitted, `Cluster "`+cl.Name+`" does not admit Releases of namespace "`+e.ns+`"`)
	})
}

// Cluster connects to a Cluster by name, whatever its namespaceSelector (kubectl
// convoy orphans looks at every Cluster), shares the connection Resolve makes, and
// names a missing Cluster.
func TestCluster(t *testing.T) {
	e := integration(t, map[string]string{"convoy-targets": "elsewhere"})
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"convoy-targets": "remote"}}
	cl := e.clusterFor(t, remoteKubeconfig(t), "value", selector)
	target, err := e.cache.Cluster(e.ctx, cl.Name)
	if err != nil {
		t.Fatal(err)
	}
	if target.Name != cl.Name || target.Config.Host != remote.Host() {
		t.Fatalf("target %q at %s, want %q at %s", target.Name, target.Config.Host, cl.Name, remote.Host())
	}
	_, err = e.cache.Resolve(e.ctx, releaseIn(e.ns, cl.Name))
	wantNotReady(t, err, NotAdmitted, `Cluster "`+cl.Name+`" does not admit Releases of namespace "`+e.ns+`"`)
	_, err = e.cache.Cluster(e.ctx, "no-such-cluster")
	wantNotReady(t, err, ClusterMissing, `Cluster "no-such-cluster" does not exist`)
}

func TestResolveNotReady(t *testing.T) {
	t.Run("missing Cluster", func(t *testing.T) {
		e := integration(t, nil)
		_, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, "no-such-cluster"))
		wantNotReady(t, err, ClusterMissing, `Cluster "no-such-cluster" does not exist: create it`)
	})
	t.Run("missing Secret", func(t *testing.T) {
		e := integration(t, nil)
		cl := &v1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: e.ns},
			Spec: v1alpha1.ClusterSpec{Kubeconfig: v1alpha1.KubeconfigSource{
				SecretRef: v1alpha1.SecretKeyReference{Namespace: e.ns, Name: "nope"}}},
		}
		if err := e.client.Create(e.ctx, cl); err != nil {
			t.Fatal(err)
		}
		_, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, cl.Name))
		wantNotReady(t, err, KubeconfigNotReady, "Secret "+e.ns+`/nope of Cluster "`+cl.Name+`" does not exist: create it with the kubeconfig under key "value"`)
	})
	t.Run("missing key", func(t *testing.T) {
		e := integration(t, nil)
		cl := e.clusterFor(t, remoteKubeconfig(t), "other", nil)
		cl.Spec.Kubeconfig.SecretRef.Key = ""
		if err := e.client.Update(e.ctx, cl); err != nil {
			t.Fatal(err)
		}
		_, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, cl.Name))
		wantNotReady(t, err, KubeconfigNotReady, `has no key "value"`)
	})
	t.Run("exec plugin", func(t *testing.T) {
		e := integration(t, nil)
		kc := []byte(`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "` + remote.Host() + `"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: touch, args: [/tmp/pwned]}}}]
`)
		cl := e.clusterFor(t, kc, "value", nil)
		_, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, cl.Name))
		wantNotReady(t, err, KubeconfigNotReady, "cannot be used: fix it")
	})
	t.Run("unusable certificate authority data", func(t *testing.T) {
		e := integration(t, nil)
		kc := []byte(`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "` + remote.Host() + `", certificate-authority-data: ` + b64("not a certificate") + `}}]
users: [{name: u, user: {token: abc}}]
`)
		cl := e.clusterFor(t, kc, "value", nil)
		_, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, cl.Name))
		wantNotReady(t, err, KubeconfigNotReady, `the kubeconfig of Cluster "`+cl.Name+`" cannot be used: fix it`)
	})
	t.Run("unreachable", func(t *testing.T) {
		e := integration(t, nil)
		kc := []byte(`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: abc}}]
`)
		cl := e.clusterFor(t, kc, "value", nil)
		_, err := e.cache.Resolve(e.ctx, releaseIn(e.ns, cl.Name))
		wantNotReady(t, err, Unreachable, `cannot reach Cluster "`+cl.Name+`"`)
	})
}

func applyConfigMap(t *testing.T, e *env, target *Target, name string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(e.ns)
	u.SetName(name)
	a := apply.New(target.Client, apply.Options{})
	plan, err := a.DryRun(e.ctx, []apply.Object{{Object: u}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ApplyWave(e.ctx, plan, 0); err != nil {
		t.Fatal(err)
	}
}

func serves(d *Discovery, groupVersion, kind string) bool {
	for _, l := range d.Resources {
		if l.GroupVersion != groupVersion {
			continue
		}
		for _, r := range l.APIResources {
			if r.Kind == kind {
				return true
			}
		}
	}
	return false
}
