package ship_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/testenv"
)

// installation is the chart installed on the package's control plane, with its
// processes running on the host.
type installation struct {
	namespace string
	release   *releasev1.Release
	// metrics are the /metrics URLs of the processes, by the chart's Deployment
	// name; the apiserver's needs the admin's client certificate.
	metrics map[string]string
	// charts serves examples/charts (the hello chart) for the test Releases.
	charts *httptest.Server
}

var (
	installOnce sync.Once
	installed   *installation
	installErr  error
	// tempDirs are the folders made for the installation (the binary, chart caches),
	// removed by removeTempDirs.
	tempDirs []string
)

// install installs the chart once per package, as README.md's helm command says
// (helmInstall), with the values the local control plane needs: no Pod runs here,
// so the etcd is the control plane's own (etcd.enabled=false, etcd.servers). Then it
// runs the processes of the chart's Deployments from a host binary with their
// flags, as their ServiceAccounts, points the chart's APIService at the host's
// apiserver, and waits until the API is Available.
func install(t *testing.T) *installation {
	t.Helper()
	needCluster(t)
	installOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		installed, installErr = doInstall(ctx, t)
	})
	if installErr != nil {
		t.Fatalf("installing the chart: %v (logs in %s)", installErr, env.cluster.LogDir())
	}
	return installed
}

// removeTempDirs removes the installation's temporary folders.
func removeTempDirs() {
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
}

func stopInstall() {
	if installed != nil && installed.charts != nil {
		installed.charts.Close()
	}
}

func doInstall(ctx context.Context, t *testing.T) (*installation, error) {
	root := repoRoot(t)
	cmd, err := readmeHelmInstall(root)
	if err != nil {
		return nil, err
	}
	bin, err := buildConvoy(ctx)
	if err != nil {
		return nil, err
	}
	values := cmd.values
	values["etcd"] = map[string]any{
		"enabled": false, "servers": []any{env.cluster.EtcdURL()}, "prefix": "/convoy-ship-" + testenv.RandomSuffix(),
	}
	rel, err := helmInstall(ctx, filepath.Join(root, cmd.chart), cmd.name, cmd.namespace, cmd.createNamespace, values)
	if err != nil {
		return nil, err
	}
	objs, err := chart.Objects(map[string]string{"manifest": rel.Manifest})
	if err != nil {
		return nil, err
	}
	in := &installation{namespace: cmd.namespace, release: rel, metrics: map[string]string{}}
	kube, err := kubernetes.NewForConfig(env.admin)
	if err != nil {
		return nil, err
	}
	// The apiserver first: the controller and the observer need the API.
	port, err := runProcess(ctx, in, bin, deploymentOf(objs, "convoy-apiserver"))
	if err != nil {
		return nil, err
	}
	if err := routeAPIServiceToHost(ctx, kube, in.namespace, port); err != nil {
		return nil, err
	}
	for _, name := range []string{"convoy-controller", "convoy-observer"} {
		if _, err := runProcess(ctx, in, bin, deploymentOf(objs, name)); err != nil {
			return nil, err
		}
	}
	repo, err := chartrepo.Build(filepath.Join(root, "examples", "charts"))
	if err != nil {
		return nil, err
	}
	in.charts = httptest.NewServer(repo)
	return in, nil
}

// helmInstall installs the chart folder dir as `helm install` does (Helm SDK), and
// does not wait for the Pods (they do not run here).
func helmInstall(ctx context.Context, dir, name, namespace string, createNamespace bool, values map[string]any) (*releasev1.Release, error) {
	c, err := chart.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig := env.cluster.KubeconfigPath()
	flags.KubeConfig = &kubeconfig
	flags.Namespace = &namespace
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, namespace, "secret"); err != nil {
		return nil, err
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = name, namespace, createNamespace
	in.WaitStrategy = kube.HookOnlyStrategy
	in.Timeout = 2 * time.Minute
	r, err := in.RunWithContext(ctx, c, values)
	if err != nil {
		return nil, fmt.Errorf("helm install %s %s: %w", name, dir, err)
	}
	rel, ok := r.(*releasev1.Release)
	if !ok {
		return nil, fmt.Errorf("helm install returned a %T", r)
	}
	return rel, nil
}

// buildConvoy compiles cmd/convoy into a temporary folder.
func buildConvoy(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "convoy-ship-")
	if err != nil {
		return "", err
	}
	tempDirs = append(tempDirs, dir)
	return localcluster.BuildConvoy(ctx, dir)
}

func deploymentOf(objs []*unstructured.Unstructured, name string) *appsv1.Deployment {
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == name {
			var d appsv1.Deployment
			if runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d) == nil {
				return &d
			}
		}
	}
	return nil
}

// runProcess runs the container of d on the host: the binary with the
// container's args, as d's ServiceAccount (a token from the TokenRequest API),
// with the addresses moved to free loopback ports, and waits until it is ready. It
// returns the serving port (apiserver) or the metrics port.
func runProcess(ctx context.Context, in *installation, bin string, d *appsv1.Deployment) (int, error) {
	if d == nil {
		return 0, errors.New("the chart installed no such Deployment")
	}
	pod := d.Spec.Template.Spec
	// The process then has exactly the chart's RBAC.
	kubeconfig, err := env.cluster.ServiceAccountKubeconfig(ctx, d.Namespace, pod.ServiceAccountName)
	if err != nil {
		return 0, err
	}
	args := slices.Clone(pod.Containers[0].Args)
	set := func(flag, value string) {
		args = slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, flag+"=") })
		args = append(args, flag+"="+value)
	}
	port, err := localcluster.FreePort()
	if err != nil {
		return 0, err
	}
	var ready string
	client := http.DefaultClient
	switch args[0] {
	case "apiserver":
		set("--bind-address", "127.0.0.1")
		set("--secure-port", strconv.Itoa(port))
		for _, f := range []string{"--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig"} {
			set(f, kubeconfig)
		}
		ready = fmt.Sprintf("https://127.0.0.1:%d/readyz", port)
		client = adminClient()
		in.metrics[d.Name] = fmt.Sprintf("https://127.0.0.1:%d/metrics", port)
	default:
		probe, err := localcluster.FreePort()
		if err != nil {
			return 0, err
		}
		set("--kubeconfig", kubeconfig)
		set("--metrics-bind-address", "127.0.0.1:"+strconv.Itoa(port))
		set("--health-probe-bind-address", "127.0.0.1:"+strconv.Itoa(probe))
		if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--chart-cache-dir=") }) {
			dir, err := os.MkdirTemp("", "convoy-ship-charts-")
			if err != nil {
				return 0, err
			}
			tempDirs = append(tempDirs, dir)
			set("--chart-cache-dir", dir)
		}
		ready = fmt.Sprintf("http://127.0.0.1:%d/readyz", probe)
		in.metrics[d.Name] = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	}
	err = env.cluster.Run(ctx, localcluster.Process{Name: d.Name, Path: bin, Args: args, Ready: func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ready, nil)
		if err != nil {
			return false
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}})
	if err != nil {
		return 0, fmt.Errorf("%s (%s): %w", d.Name, strings.Join(args, " "), err)
	}
	return port, nil
}

// routeAPIServiceToHost makes the aggregator reach the apiserver process on the
// host instead of the chart's Pods, which do not run here: the chart's Service
// becomes an ExternalName to localhost on the process's port, and the chart's
// APIService names that port.
func routeAPIServiceToHost(ctx context.Context, kube kubernetes.Interface, namespace string, port int) error {
	// Read and write again on conflict: the aggregator updates the APIService's status.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc, err := kube.CoreV1().Services(namespace).Get(ctx, "convoy-apiserver", metav1.GetOptions{})
		if err != nil {
			return err
		}
		svc.Spec = corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: int32(port), TargetPort: intstr.FromInt32(int32(port))}},
		}
		_, err = kube.CoreV1().Services(namespace).Update(ctx, svc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("pointing Service %s/convoy-apiserver at the host: %w", namespace, err)
	}
	agg, err := aggregator.NewForConfig(env.admin)
	if err != nil {
		return err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		as, err := agg.ApiregistrationV1().APIServices().Get(ctx, apiserver.APIServiceName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p := int32(port)
		as.Spec.Service.Port = &p
		_, err = agg.ApiregistrationV1().APIServices().Update(ctx, as, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("pointing APIService %s at the host: %w", apiserver.APIServiceName, err)
	}
	return apiserver.WaitAvailable(ctx, env.admin, 2*time.Minute)
}

// adminClient is an HTTPS client with the cluster admin's client certificate, for
// the apiserver process's /readyz and /metrics (it authorizes through the cluster;
// its serving certificate is self-signed).
func adminClient() *http.Client {
	cert, err := tls.X509KeyPair(env.admin.CertData, env.admin.KeyData)
	if err != nil {
		panic(fmt.Sprintf("the admin's client certificate: %v", err))
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, //nolint:gosec // the apiserver's self-signed certificate
	}}}
}
