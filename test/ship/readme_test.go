package ship_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v4/pkg/strvals"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"kumodo.io/convoy/internal/testenv"
)

// readmeInstall is the install section of README.md: the lines of the sh block
// between <!-- install:begin --> and <!-- install:end -->.
func readmeInstall(root string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	_, rest, ok := strings.Cut(string(data), "<!-- install:begin -->")
	section, _, ok2 := strings.Cut(rest, "<!-- install:end -->")
	if !ok || !ok2 {
		return nil, fmt.Errorf("README.md has no <!-- install:begin --> … <!-- install:end --> section")
	}
	var lines []string
	for _, l := range strings.Split(section, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "```") || strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) != 3 {
		return nil, fmt.Errorf("README.md's install section has %d commands, want 3 (image, chart, first Release): %q", len(lines), lines)
	}
	return lines, nil
}

// helmCommand is README.md's `helm install` command.
type helmCommand struct {
	name, chart, namespace string
	createNamespace        bool
	values                 map[string]any
}

// readmeHelmInstall parses the second command of README.md's install section.
func readmeHelmInstall(root string) (helmCommand, error) {
	lines, err := readmeInstall(root)
	if err != nil {
		return helmCommand{}, err
	}
	f := strings.Fields(lines[1])
	if len(f) < 4 || f[0] != "helm" || f[1] != "install" {
		return helmCommand{}, fmt.Errorf("README.md's second install command %q is not `helm install NAME CHART ...`", lines[1])
	}
	cmd := helmCommand{name: f[2], chart: f[3], namespace: "default", values: map[string]any{}}
	for i := 4; i < len(f); i++ {
		switch f[i] {
		case "--namespace", "-n":
			i++
			cmd.namespace = f[i]
		case "--create-namespace":
			cmd.createNamespace = true
		case "--set":
			i++
			if err := strvals.ParseInto(f[i], cmd.values); err != nil {
				return helmCommand{}, fmt.Errorf("README.md: --set %s: %w", f[i], err)
			}
		default:
			return helmCommand{}, fmt.Errorf("README.md's helm command has %q, which test/ship does not know: teach readmeHelmInstall", f[i])
		}
	}
	return cmd, nil
}

// README.md's install path, run as far as the local control plane allows:
//  1. `IMAGE=… make image-push` runs for real, with IMAGE naming a registry in
//     this process and linux/amd64 only (IMAGE_PLATFORMS), and the image pulls back
//     by the tag it names;
//  2. `helm install …` is what install() runs through the Helm SDK with the
//     command's release name, chart, namespace and --set values (plus an external
//     etcd, as no Pod runs here), and the Helm release is deployed;
//  3. `kubectl apply -f <Release>` runs with the local kubectl: the convoy API that
//     the chart installed accepts the Release and the chart's controller takes it
//     up (Applied condition set; the chart repository it names is on the internet,
//     which the test does not require, so Applied may be SourceNotReady).
func TestREADMEInstallPath(t *testing.T) {
	needCluster(t)
	root := repoRoot(t)
	lines, err := readmeInstall(root)
	if err != nil {
		t.Fatal(err)
	}

	// 1. The image.
	assign, makeCmd, _ := strings.Cut(lines[0], " ")
	image, ok := strings.CutPrefix(assign, "IMAGE=")
	if !ok || makeCmd != "make image-push" {
		t.Fatalf("README.md's first command %q is not `IMAGE=<ref> make image-push`", lines[0])
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		t.Fatalf("README.md's IMAGE %q: %v", image, err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(discardLogger())))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	local := u.Host + "/" + ref.Context().RepositoryStr() + ":" + ref.Identifier()
	mk := exec.CommandContext(ctx(t, 10*time.Minute), "make", "image-push", "IMAGE="+local, "IMAGE_PLATFORMS=linux/amd64")
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make image-push IMAGE=%s: %v\n%s", local, err, out)
	}
	localRef, err := name.ParseReference(local)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Index(localRef); err != nil {
		t.Errorf("pulling %s after make image-push: %v", local, err)
	}

	// 2. The chart.
	in := install(t)
	if in.release.Info == nil || in.release.Info.Status != "deployed" {
		t.Errorf("Helm release %s is %v, want deployed", in.release.Name, in.release.Info)
	}
	wantImage := fmt.Sprint(in.release.Config["image"])
	if !strings.Contains(wantImage, ref.Context().RepositoryStr()) {
		t.Errorf("the installed image values %s do not name README.md's image %s", wantImage, image)
	}

	// 3. The first Release.
	release := strings.Fields(lines[2])
	if len(release) != 4 || release[0] != "kubectl" || release[1] != "apply" || release[2] != "-f" {
		t.Fatalf("README.md's third command %q is not `kubectl apply -f <file>`", lines[2])
	}
	kubectl := filepath.Join(env.cluster.BinDir(), "kubectl")
	apply := exec.CommandContext(ctx(t, time.Minute), kubectl, "--kubeconfig", env.cluster.KubeconfigPath(), "apply", "-f", release[3])
	apply.Dir = root
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", lines[2], err, out)
	}
	var relNS, relName string
	for _, o := range readObjectsFile(t, filepath.Join(root, release[3])) {
		if o.GetKind() == "Release" {
			relNS, relName = o.GetNamespace(), o.GetName()
		}
	}
	if relName == "" {
		t.Fatalf("%s holds no Release", release[3])
	}
	dyn := dynamic.NewForConfigOrDie(env.admin)
	var reason string
	testenv.Eventually(t, ctx(t, 2*time.Minute), "an Applied condition on README's Release from the chart's controller", 2*time.Minute, func() (bool, string) {
		r, err := dyn.Resource(releasesGVR).Namespace(relNS).Get(context.Background(), relName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		reason = conditionReason(r, "Applied")
		return reason != "", toYAML(t, r.Object["status"])
	})
	t.Logf("README's Release %s/%s: Applied reason %s", relNS, relName, reason)
	t.Cleanup(func() {
		err := dyn.Resource(releasesGVR).Namespace(relNS).Delete(context.Background(), relName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting Release %s/%s: %v", relNS, relName, err)
		}
	})
}

var releasesGVR = schema.GroupVersionResource{Group: "convoy.kumodo.io", Version: "v1alpha1", Resource: "releases"}

func conditionReason(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			r, _ := m["reason"].(string)
			return r
		}
	}
	return ""
}

func conditionStatus(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
