package secrets_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/cli"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/testenv"
)

// viewer is a convoy-view user of the test's namespace: it may read convoy's
// objects there, not Secrets.
const viewer = "convoy-secrets-viewer"

// marker is a value no output may contain, in plain text or base64.
type marker struct{ what, value string }

func newMarker(t *testing.T, what string) marker {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return marker{what: what, value: "convoy-marker-" + strings.ReplaceAll(what, " ", "-") + "-" + hex.EncodeToString(b)}
}

// TestSecretsNeverLeak runs every path through which convoy handles a Secret — values
// from a Secret (valuesFrom), chart repository credentials (spec.chart.secretRef), a
// remote Cluster's kubeconfig Secret, Secrets a chart renders, and values from a
// Secret that fail to parse — with the controller and the observer at -v 7, then
// looks for each Secret's data in every output a user or an operator reads.
func TestSecretsNeverLeak(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	scheme, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	admin := testenv.Client(t, host.RestConfig(), scheme)
	ns := testenv.Namespace(t, ctx, admin, "secrets", nil)

	values := newMarker(t, "values")
	broken := newMarker(t, "broken values")
	markers := []marker{values, broken, {what: "repository password", value: repoPassword}, {what: "chart literal", value: chartMarker}}

	// The Secrets a Release reads.
	create(t, ctx, admin, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "values"},
		StringData: map[string]string{"values.yaml": "password: " + values.value + "\n"}})
	create(t, ctx, admin, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broken"},
		StringData: map[string]string{"values.yaml": "password: [" + broken.value + "\n"}})
	create(t, ctx, admin, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "repository"},
		StringData: map[string]string{"username": repoUser, "password": repoPassword}})

	// A remote Cluster (the same control plane) whose kubeconfig's credentials are markers.
	const remoteUser = "convoy-secrets-remote"
	create(t, ctx, admin, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: remoteUser},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: remoteUser}}})
	kubeconfig := userKubeconfig(t, remoteUser)
	for _, auth := range kubeconfig.AuthInfos {
		markers = append(markers, keyMarkers(auth.ClientKeyData)...)
	}
	kubeconfigData, err := clientcmd.Write(*kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	create(t, ctx, admin, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote-kubeconfig"},
		Data: map[string][]byte{v1.DefaultKubeconfigKey: kubeconfigData}})
	cluster := ns + "-remote"
	create(t, ctx, admin, &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec: v1.ClusterSpec{Kubeconfig: v1.KubeconfigSource{SecretRef: v1.SecretKeyReference{Namespace: ns, Name: "remote-kubeconfig"}}}})
	t.Cleanup(func() {
		_ = admin.Delete(context.Background(), &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}})
	})

	release := func(name, valuesSecret, onCluster string) {
		create(t, ctx, admin, &v1.Release{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1.ReleaseSpec{
				Cluster:    onCluster,
				Chart:      v1.ChartSource{Repository: charts, Name: "secret", SecretRef: &v1.LocalObjectReference{Name: "repository"}},
				ValuesFrom: []v1.ValuesReference{{Kind: v1.ValuesSourceSecret, Name: valuesSecret}},
				SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(true), Interval: &metav1.Duration{Duration: 10 * time.Second}},
			},
		})
	}
	release("local", "values", "")
	release("remote", "values", cluster)
	release("broken", "broken", "")
	waitCondition(t, ctx, admin, ns, "local", v1.ConditionHealthy, metav1.ConditionTrue, "")
	waitCondition(t, ctx, admin, ns, "remote", v1.ConditionHealthy, metav1.ConditionTrue, "")
	waitCondition(t, ctx, admin, ns, "broken", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonValuesNotReady)

	// Every output.
	outputs := map[string]string{}
	for _, user := range []string{controllerUser, observerUser} {
		b, err := os.ReadFile(filepath.Join(host.LogDir(), user+".log"))
		if err != nil {
			t.Fatal(err)
		}
		// -v 7: client-go logs every request's headers.
		if !bytes.Contains(b, []byte(`] "Request" `)) {
			t.Fatalf("the log of %s shows no request headers: it does not log at -v 7:\n%s", user, b[:min(len(b), 3000)])
		}
		outputs["the log of "+user] = string(b)
	}
	// convoy apiserver's log (in this process, -v 7) logs every request it serves.
	apiLog := apiserverLog.String()
	if !strings.Contains(apiLog, `"HTTP" verb=`) {
		t.Fatalf("the log of convoy apiserver shows no request: it does not log at -v 7:\n%s", apiLog[:min(len(apiLog), 3000)])
	}
	outputs["the log of convoy apiserver"] = apiLog
	outputs["Events"] = list(t, ctx, admin, &corev1.EventList{})
	outputs["Releases (conditions)"] = list(t, ctx, admin, &v1.ReleaseList{}, client.InNamespace(ns))
	outputs["ReleaseInventories"] = list(t, ctx, admin, &v1.ReleaseInventoryList{}, client.InNamespace(ns))
	outputs["Clusters"] = list(t, ctx, admin, &v1.ClusterList{})
	for process, url := range metrics {
		body, err := get(ctx, url)
		if err != nil {
			t.Fatalf("/metrics of %s: %v", process, err)
		}
		outputs["/metrics of convoy "+process] = body
	}
	// The viewer: convoy-view in the namespace, and what `release diff` needs of the
	// ConfigMaps it applies (get, and patch for the dry run); no Secrets.
	testenv.Grant(t, ctx, admin, ns, viewer, rbacv1.PolicyRule{APIGroups: []string{v1.GroupName},
		Resources: []string{v1.ResourceReleases, v1.ResourceReleases + "/status", v1.ResourceRenders, v1.ResourceReleaseInventories},
		Verbs:     []string{"get", "list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "patch"}})
	create(t, ctx, admin, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-clusters"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1.GroupName}, Resources: []string{v1.ResourceClusters}, Verbs: []string{"get", "list"}}}})
	create(t, ctx, admin, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-clusters"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns + "-clusters"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: viewer}}})
	viewerCfg, err := host.UserConfig(viewer)
	if err != nil {
		t.Fatal(err)
	}
	renders := &v1.RenderList{}
	outputs["Renders read by convoy-view"] = list(t, ctx, testenv.Client(t, viewerCfg, scheme), renders, client.InNamespace(ns))
	var manifests strings.Builder
	for _, rd := range renders.Items {
		zr, err := gzip.NewReader(bytes.NewReader(rd.Manifests))
		if err != nil {
			t.Fatalf("Render %s: %v", rd.Name, err)
		}
		if _, err := io.Copy(&manifests, zr); err != nil {
			t.Fatalf("Render %s: %v", rd.Name, err)
		}
	}
	if !strings.Contains(manifests.String(), v1.AnnotationRedactedData) {
		t.Fatalf("the Renders read by %s have no redacted Secret:\n%s", viewer, manifests.String())
	}
	outputs["the manifests of the Renders read by convoy-view"] = manifests.String()
	viewerKubeconfig, err := host.UserKubeconfig(viewer)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"release", "render", "local"}, {"release", "diff", "local"}, {"release", "diff", "remote"}} {
		outputs["kubectl convoy "+strings.Join(args, " ")+" as convoy-view"] = plugin(ctx, viewerKubeconfig, ns, args...)
	}
	// A user who may not read Secrets still gets the diff of the rest: the Secret is
	// named as not compared (its data reached them as digests), the ConfigMap is
	// compared (and in sync).
	diffOut := outputs["kubectl convoy release diff local as convoy-view"]
	for _, want := range []string{"exit 0\n", "Secret " + ns + "/local: not compared", "No differences: the other objects on the cluster match"} {
		if !strings.Contains(diffOut, want) {
			t.Errorf("kubectl convoy release diff local as convoy-view: want %q in:\n%s", want, diffOut)
		}
	}

	for where, out := range outputs {
		if strings.HasPrefix(where, "kubectl") {
			t.Logf("%s:\n%s", where, out)
		}
	}
	for _, m := range markers {
		for _, form := range []string{m.value, base64.StdEncoding.EncodeToString([]byte(m.value))} {
			for where, out := range outputs {
				if i := strings.Index(out, form); i >= 0 {
					t.Errorf("the %s Secret's data is in %s: …%s…", m.what, where, out[max(0, i-300):min(len(out), i+len(form)+100)])
				}
			}
		}
	}
}

// keyMarkers are pieces of a private key's PEM that no output may contain.
func keyMarkers(pem []byte) []marker {
	var out []marker
	for _, line := range strings.Split(string(pem), "\n") {
		if len(line) >= 40 && !strings.HasPrefix(line, "-----") {
			out = append(out, marker{what: "kubeconfig's client key", value: line})
		}
	}
	return out
}

// userKubeconfig is a kubeconfig of user with inline credentials, as a Cluster's
// kubeconfig Secret must hold.
func userKubeconfig(t *testing.T, user string) *clientcmdapi.Config {
	t.Helper()
	path, err := host.UserKubeconfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func create(t *testing.T, ctx context.Context, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// list lists into l and returns it as JSON.
func list(t *testing.T, ctx context.Context, c client.Client, l client.ObjectList, opts ...client.ListOption) string {
	t.Helper()
	if err := c.List(ctx, l, opts...); err != nil {
		t.Fatalf("list %T: %v", l, err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitCondition waits until Release ns/name has the condition typ with status (and
// reason, when set) for its generation.
func waitCondition(t *testing.T, ctx context.Context, c client.Client, ns, name, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	testenv.Eventually(t, ctx, fmt.Sprintf("Release %s %s=%s %s", name, typ, status, reason), 3*time.Minute, func() (bool, string) {
		rel := &v1.Release{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rel); err != nil {
			return false, err.Error()
		}
		cond := apimeta.FindStatusCondition(rel.Status.Conditions, typ)
		if cond == nil || cond.Status != status || (reason != "" && cond.Reason != reason) {
			return false, fmt.Sprintf("%+v", rel.Status.Conditions)
		}
		return true, ""
	})
}

// plugin runs kubectl convoy with kubeconfig in ns and returns its output and errors.
func plugin(ctx context.Context, kubeconfig, ns string, args ...string) string {
	var out, errOut bytes.Buffer
	o := &cli.Options{
		ConfigFlags: genericclioptions.NewConfigFlags(false),
		Streams:     genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:      func(string) string { return "" },
		Now:         time.Now,
	}
	code := o.Execute(ctx, append([]string{"--kubeconfig", kubeconfig, "-n", ns}, args...))
	return fmt.Sprintf("exit %d\n%s\n%s", code, out.String(), errOut.String())
}
