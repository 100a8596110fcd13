package deploy_test

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/test/convoychart"
)

func parseCert(t *testing.T, what string, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s: no PEM", what)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return c
}

// The certificates the chart makes: the members' serves and authenticates as a
// peer for every member's name, localhost and 127.0.0.1; convoy's client
// certificate authenticates to them; both of one CA that each Secret carries.
func TestChartEtcdCertificates(t *testing.T) {
	r := renderEtcd(t, nil)
	ca := x509.NewCertPool()
	if !ca.AppendCertsFromPEM(r.serverTLS.Data["ca.crt"]) {
		t.Fatal("the server Secret's ca.crt is not a certificate")
	}
	if string(r.clientTLS.Data["ca.crt"]) != string(r.serverTLS.Data["ca.crt"]) {
		t.Error("the client and server Secrets carry different CAs")
	}
	srv := parseCert(t, "server tls.crt", r.serverTLS.Data["tls.crt"])
	names := []string{"localhost", "127.0.0.1"}
	for i := range int(*r.sts.Spec.Replicas) {
		names = append(names, fmt.Sprintf("convoy-etcd-%d.convoy-etcd.%s.svc", i, etcdNamespace))
	}
	for _, n := range names {
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := srv.Verify(x509.VerifyOptions{DNSName: n, Roots: ca, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("the members' certificate for %s (usage %v): %v", n, usage, err)
			}
		}
	}
	cli := parseCert(t, "client tls.crt", r.clientTLS.Data["tls.crt"])
	if _, err := cli.Verify(x509.VerifyOptions{Roots: ca, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("convoy's client certificate: %v", err)
	}
}

// An upgrade keeps the certificates: when both Secrets exist in the cluster, the
// chart renders them as they are (Helm's lookup), not new ones.
func TestChartEtcdCertificatesKeptAcrossUpgrades(t *testing.T) {
	needCluster(t)
	c := convoychart.Load(t)
	kube := kubernetes.NewForConfigOrDie(env.admin)
	ns := "convoy-etcd-upgrade-" + testenv.RandomSuffix()
	if _, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	render := func(install bool) map[string][]byte {
		t.Helper()
		vals, err := chartutil.ToRenderValues(c, map[string]any{},
			chartcommon.ReleaseOptions{Name: chart.ReleaseName, Namespace: ns, Revision: 1, IsInstall: install, IsUpgrade: !install}, nil)
		if err != nil {
			t.Fatal(err)
		}
		files, err := engine.RenderWithClient(c, vals, env.admin)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string][]byte
		for name, content := range files {
			if !strings.HasSuffix(name, "/etcd-certificates.yaml") {
				continue
			}
			objs, err := chart.Objects(map[string]string{"f": content})
			if err != nil {
				t.Fatal(err)
			}
			out = map[string][]byte{}
			for _, o := range objs {
				var s corev1.Secret
				typed(t, o, &s)
				if install {
					s.Namespace = ns
					if _, err := kube.CoreV1().Secrets(ns).Create(ctx(t), &s, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				for k, v := range s.Data {
					out[s.Name+"/"+k] = v
				}
			}
		}
		return out
	}
	installed := render(true)
	if len(installed) != 6 {
		t.Fatalf("the install rendered %v, want ca.crt, tls.crt and tls.key of two Secrets", slices.Sorted(maps.Keys(installed)))
	}
	upgraded := render(false)
	for k, v := range installed {
		if string(upgraded[k]) != string(v) {
			t.Errorf("the upgrade renders a new %s", k)
		}
	}
}

// Other values: one member (no PodDisruptionBudget), the user's own Secrets (none
// rendered), cert-manager's Certificates, a quorum budget with five members.
func TestChartEtcdValues(t *testing.T) {
	c := convoychart.Load(t)
	cases := map[string]struct {
		values    map[string]any
		want      []string
		wantNot   []string
		minAvail  int
		initialOf int
	}{
		"one member": {
			values:  map[string]any{"etcd": map[string]any{"replicas": 1}},
			want:    []string{"StatefulSet convoy-etcd", "Secret convoy-etcd-server-tls", "CronJob convoy-etcd-defrag"},
			wantNot: []string{"PodDisruptionBudget convoy-etcd"}, initialOf: 1,
		},
		"five members": {
			values: map[string]any{"etcd": map[string]any{"replicas": 5}},
			want:   []string{"PodDisruptionBudget convoy-etcd"}, minAvail: 3, initialOf: 5,
		},
		"own Secrets, no defrag": {
			values: map[string]any{"etcd": map[string]any{"tls": map[string]any{"certificates": "secrets", "serverSecretName": "mine"},
				"defrag": map[string]any{"schedule": ""}}},
			want:    []string{"StatefulSet convoy-etcd"},
			wantNot: []string{"Secret convoy-etcd-server-tls", "Secret convoy-etcd-client-tls", "CronJob convoy-etcd-defrag"}, initialOf: 3,
		},
		"cert-manager": {
			values: map[string]any{"etcd": map[string]any{"tls": map[string]any{"certificates": "cert-manager"}}},
			want: []string{"Certificate convoy-etcd-server", "Certificate convoy-etcd-client", "Certificate convoy-etcd-ca",
				"Issuer convoy-etcd-ca", "Issuer convoy-etcd-selfsigned"},
			wantNot: []string{"Secret convoy-etcd-server-tls"}, initialOf: 3,
		},
		"cert-manager with the user's issuer": {
			values: map[string]any{"etcd": map[string]any{"tls": map[string]any{"certificates": "cert-manager",
				"certManager": map[string]any{"issuerRef": map[string]any{"kind": "ClusterIssuer", "name": "corp-ca"}}}}},
			want:    []string{"Certificate convoy-etcd-server", "Certificate convoy-etcd-client"},
			wantNot: []string{"Issuer convoy-etcd-ca", "Certificate convoy-etcd-ca"}, initialOf: 3,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files, err := chart.Render(c, tc.values, etcdNamespace)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := chart.Objects(files)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+" "+o.GetName())
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("no %s in %v", w, got)
				}
			}
			for _, w := range tc.wantNot {
				if slices.Contains(got, w) {
					t.Errorf("%s is rendered", w)
				}
			}
			if tc.minAvail > 0 {
				var pdb policyv1.PodDisruptionBudget
				typed(t, find(t, objs, "PodDisruptionBudget", "convoy-etcd"), &pdb)
				if v := pdb.Spec.MinAvailable; v == nil || v.IntValue() != tc.minAvail {
					t.Errorf("the PodDisruptionBudget's minAvailable is %v, want %d", v, tc.minAvail)
				}
			}
			var sts appsv1.StatefulSet
			typed(t, find(t, objs, "StatefulSet", "convoy-etcd"), &sts)
			var initial string
			for _, a := range sts.Spec.Template.Spec.Containers[0].Command {
				if v, ok := strings.CutPrefix(a, "--initial-cluster="); ok {
					initial = v
				}
			}
			if n := len(strings.Split(initial, ",")); n != tc.initialOf {
				t.Errorf("--initial-cluster=%s names %d members, want %d", initial, n, tc.initialOf)
			}
			api := sts.Spec.Template.Spec.Volumes
			if i := slices.IndexFunc(api, func(v corev1.Volume) bool { return v.Name == "tls" }); i < 0 || api[i].Secret == nil {
				t.Errorf("the members mount no TLS Secret: %v", api)
			}
		})
	}
}
