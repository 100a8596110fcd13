package cli

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// diff of a Release on a Cluster reaches it through the Cluster's kubeconfig Secret as
// internal/targets reads it for the controller: with its inline credentials it
// compares the render with the Cluster's objects, and a kubeconfig that the controller
// refuses (a token read from a file) is refused with the same message.
func TestDiffThroughAClustersKubeconfigSecret(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := testCtx(t)
	kube := kubernetes.NewForConfigOrDie(env.admin)
	kubeconfig := func(auth *clientcmdapi.AuthInfo) []byte {
		kc := clientcmdapi.NewConfig()
		kc.Clusters["target"] = &clientcmdapi.Cluster{Server: env.admin.Host, CertificateAuthorityData: env.admin.CAData}
		kc.AuthInfos["convoy"] = auth
		kc.Contexts["default"] = &clientcmdapi.Context{Cluster: "target", AuthInfo: "convoy"}
		kc.CurrentContext = "default"
		data, err := clientcmd.Write(*kc)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "target-kubeconfig"},
		Data: map[string][]byte{v1.DefaultKubeconfigKey: kubeconfig(&clientcmdapi.AuthInfo{
			ClientCertificateData: env.admin.CertData, ClientKeyData: env.admin.KeyData})}}
	secret, err := kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cluster := "diff-" + testenv.RandomSuffix()
	createCluster(t, &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec: v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: ns, Name: secret.Name}}}})
	rel := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}, Spec: v1.ReleaseSpec{
		Cluster: cluster, Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"}}}
	if err := admin(t).rest.Post().Namespace(ns).Resource("releases").Body(rel).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "podinfo"},
		Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rd := &v1.Render{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1.RenderRef(refB).RenderName("podinfo"), Labels: map[string]string{v1.LabelRelease: "podinfo"}},
		RenderRef:  refB, Release: "podinfo", Chart: v1.RenderChart{Name: "podinfo", Version: "6.7.1"}, ObjectCount: 1,
		Manifests: gz(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: podinfo, namespace: %s}\ndata: {a: c}\n", ns)),
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource("renders").Body(rd).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	writeStatus(t, ns, "podinfo", func(r *v1.Release) { r.Status.Render = &v1.RenderStatus{Ref: refB} })

	res := plugin(t, nil, "release", "diff", "podinfo", "-n", ns)
	if res.code != 0 || !strings.Contains(res.stdout, "ConfigMap "+ns+"/podinfo") || !strings.Contains(res.stdout, "+  a: c") {
		t.Fatalf("diff through the Cluster's kubeconfig: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}

	secret.Data[v1.DefaultKubeconfigKey] = kubeconfig(&clientcmdapi.AuthInfo{TokenFile: "/var/run/secrets/token"})
	if _, err := kube.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res = plugin(t, nil, "release", "diff", "podinfo", "-n", ns)
	if res.code == 0 || !strings.Contains(res.stderr, "reads its token from a file") {
		t.Errorf("diff through a kubeconfig with a token file: exit %d, stderr %q; want the refusal of internal/targets", res.code, res.stderr)
	}
}
