package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
)

// deployDir is the repository's deploy/ folder.
func deployDir(t *testing.T) string {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy")
}

// kubectl is the kubectl of the local control plane's binaries; the test is skipped
// when it is not built.
func kubectl(t *testing.T) string {
	t.Helper()
	dir, err := localcluster.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("kubectl is not built (%v): run hack/kube/build.sh kubectl", err)
	}
	return bin
}

// decodeObjects splits a multi-document YAML stream into objects.
func decodeObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]interface{}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("decoding YAML: %v", err)
		}
		if m == nil {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeObjects(t, data)
}

// kustomize renders deploy/<sub> with kubectl kustomize.
func kustomize(t *testing.T, sub string) []byte {
	t.Helper()
	out, err := exec.CommandContext(ctx(t), kubectl(t), "kustomize", filepath.Join(deployDir(t), sub)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("kubectl kustomize %s: %v\n%s", sub, err, ee.Stderr)
		}
		t.Fatalf("kubectl kustomize %s: %v", sub, err)
	}
	return out
}

// find returns the object of kind and name among objs, or fails.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s in the manifests", kind, name)
	return nil
}

// typed converts u into out (a pointer to a typed object).
// binding is what the RoleBinding or ClusterRoleBinding (kind) name of objs binds:
// its role and its subjects.
func binding(t *testing.T, objs []*unstructured.Unstructured, kind, name string) (rbacv1.RoleRef, []rbacv1.Subject) {
	t.Helper()
	if kind == "RoleBinding" {
		var rb rbacv1.RoleBinding
		typed(t, find(t, objs, kind, name), &rb)
		return rb.RoleRef, rb.Subjects
	}
	var crb rbacv1.ClusterRoleBinding
	typed(t, find(t, objs, kind, name), &crb)
	return crb.RoleRef, crb.Subjects
}

func typed(t *testing.T, u *unstructured.Unstructured, out interface{}) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("converting %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

func key(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// deploy/kustomization.yaml includes every object of every manifest under
// deploy/{apiserver,controller,observer,rbac}, and each object keeps the namespace its file
// gives it (a kustomize namespace: would move the apiserver's RoleBinding out of
// kube-system).
func TestKustomizationIncludesEveryManifest(t *testing.T) {
	rendered := map[string]bool{}
	for _, o := range decodeObjects(t, kustomize(t, ".")) {
		if rendered[key(o)] {
			t.Errorf("%s appears twice", key(o))
		}
		rendered[key(o)] = true
	}
	for _, sub := range []string{"apiserver", "controller", "observer", "rbac"} {
		files, err := filepath.Glob(filepath.Join(deployDir(t), sub, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if filepath.Base(f) == "kustomization.yaml" {
				continue
			}
			for _, o := range readObjects(t, f) {
				if !rendered[key(o)] {
					t.Errorf("%s of %s/%s is not in kubectl kustomize deploy/", key(o), sub, filepath.Base(f))
				}
			}
		}
	}
	if !rendered["RoleBinding kube-system/convoy-apiserver:extension-apiserver-authentication-reader"] {
		t.Errorf("the apiserver's extension-apiserver-authentication-reader RoleBinding is not in kube-system")
	}
}

// The controller runs as the README says: two replicas electing a leader, probes on
// the health port, a metrics port behind a Service, non-root with a read-only root
// file system, and its chart cache on an emptyDir.
func TestControllerDeployment(t *testing.T) {
	d, args := checkProcessDeployment(t, "controller", 8080, 8081)
	pod, c := d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0]
	cacheDir := args["--chart-cache-dir"]
	mounted := false
	for _, m := range c.VolumeMounts {
		if cacheDir == m.MountPath || strings.HasPrefix(cacheDir, m.MountPath+"/") {
			i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
			mounted = i >= 0 && pod.Volumes[i].EmptyDir != nil
		}
	}
	if !mounted {
		t.Errorf("--chart-cache-dir=%s is not on an emptyDir volume", cacheDir)
	}
}

// checkProcessDeployment checks what the Deployment convoy-<process> of
// deploy/<process>/ shares with the other processes: in convoy-system, two replicas
// electing a leader under the ServiceAccount convoy-<process>, non-root with a
// read-only root file system, the image ghcr.io/kumodo/convoy running the subcommand
// process, metrics on metricsPort behind the Service convoy-<process>-metrics, probes
// on healthPort. It returns the Deployment and its container's flags (--name: value).
func checkProcessDeployment(t *testing.T, process string, metricsPort, healthPort int32) (appsv1.Deployment, map[string]string) {
	t.Helper()
	name := "convoy-" + process
	var d appsv1.Deployment
	typed(t, find(t, readObjects(t, filepath.Join(deployDir(t), process, "deployment.yaml")), "Deployment", name), &d)
	if d.Namespace != "convoy-system" {
		t.Errorf("namespace %q, want convoy-system", d.Namespace)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != name {
		t.Errorf("serviceAccountName = %q, want %s", pod.ServiceAccountName, name)
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("the pod does not require a non-root user")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("the root file system is not read-only")
	}
	if !strings.HasPrefix(c.Image, "ghcr.io/kumodo/convoy:") {
		t.Errorf("image %q, want ghcr.io/kumodo/convoy:<version>", c.Image)
	}
	if len(c.Args) == 0 || c.Args[0] != process {
		t.Fatalf("args %v do not start with the subcommand %s", c.Args, process)
	}
	args := map[string]string{}
	for _, a := range c.Args[1:] {
		k, v, _ := strings.Cut(a, "=")
		args[k] = v
	}
	if _, ok := args["--leader-elect"]; !ok {
		t.Errorf("no --leader-elect in %v", c.Args)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if want := fmt.Sprintf(":%d", metricsPort); args["--metrics-bind-address"] != want || ports["metrics"] != metricsPort {
		t.Errorf("metrics address %q, port %d; want %s on the port metrics", args["--metrics-bind-address"], ports["metrics"], want)
	}
	if want := fmt.Sprintf(":%d", healthPort); args["--health-probe-bind-address"] != want || ports["health"] != healthPort {
		t.Errorf("health probe address %q, port %d; want %s on the port health", args["--health-probe-bind-address"], ports["health"], want)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Port.String() != "health" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz on health", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Port.String() != "health" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v, want GET /healthz on health", c.LivenessProbe)
	}
	svc := find(t, readObjects(t, filepath.Join(deployDir(t), process, "service.yaml")), "Service", name+"-metrics")
	sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	if sel["app.kubernetes.io/name"] != d.Spec.Template.Labels["app.kubernetes.io/name"] {
		t.Errorf("the metrics Service selects %v, not the pods of %s", sel, name)
	}
	svcPorts, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(svcPorts) != 1 || svcPorts[0].(map[string]any)["targetPort"] != "metrics" {
		t.Errorf("the metrics Service ports %v, want one with targetPort metrics", svcPorts)
	}
	return d, args
}

// grants reports whether rules allow verb on group/resource (cluster-wide rules; no
// resourceNames).
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	has := func(list []string, s string) bool { return slices.Contains(list, s) || slices.Contains(list, "*") }
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// each calls f for every (group, resource, verb) of rules.
func each(rules []rbacv1.PolicyRule, f func(group, resource, verb string)) {
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					f(g, res, v)
				}
			}
		}
	}
}

// The controller's ClusterRole in deploy/controller/rbac.yaml grants every rule of
// dev.ControllerRules (what convoy dev grants it) and nothing more, except that the
// leader election Lease is granted by a Role in convoy-system rather than
// cluster-wide. Both are bound to the controller's ServiceAccount, and so is the
// separate convoy-controller-apply and convoy-controller-impersonate.
func TestControllerRoleMatchesControllerRules(t *testing.T) {
	objs := readObjects(t, filepath.Join(deployDir(t), "controller", "rbac.yaml"))
	objs = append(objs, readObjects(t, filepath.Join(deployDir(t), "controller", "apply-rbac.yaml"))...)
	objs = append(objs, readObjects(t, filepath.Join(deployDir(t), "controller", "impersonate-rbac.yaml"))...)
	var role, impersonate rbacv1.ClusterRole
	typed(t, find(t, objs, "ClusterRole", "convoy-controller"), &role)
	// Impersonation (the tenancy lockdown, decision 0096) is a ClusterRole of its own, always bound: the
	// controller's rules are the two together.
	typed(t, find(t, objs, "ClusterRole", "convoy-controller-impersonate"), &impersonate)
	role.Rules = append(role.Rules, impersonate.Rules...)
	var election rbacv1.Role
	typed(t, find(t, objs, "Role", "convoy-controller-leader-election"), &election)
	if election.Namespace != "convoy-system" {
		t.Errorf("the leader election Role is in %q, want convoy-system (--leader-election-namespace)", election.Namespace)
	}

	want := dev.ControllerRules()
	each(want, func(g, res, v string) {
		if g == "coordination.k8s.io" && res == "leases" {
			if !grants(election.Rules, g, res, v) {
				t.Errorf("the leader election Role does not grant %s on %s.%s", v, res, g)
			}
			return
		}
		if !grants(role.Rules, g, res, v) {
			t.Errorf("ClusterRoles convoy-controller and convoy-controller-impersonate do not grant %s on %s.%s (dev.ControllerRules does)", v, res, g)
		}
	})
	each(role.Rules, func(g, res, v string) {
		if !grants(want, g, res, v) {
			t.Errorf("ClusterRoles convoy-controller and convoy-controller-impersonate grant %s on %s.%s, which dev.ControllerRules does not", v, res, g)
		}
	})
	each(election.Rules, func(g, res, v string) {
		if !grants(want, g, res, v) {
			t.Errorf("the leader election Role grants %s on %s.%s, which dev.ControllerRules does not", v, res, g)
		}
	})

	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "convoy-controller", Namespace: "convoy-system"}
	find(t, objs, "ServiceAccount", "convoy-controller")
	for _, b := range []struct{ kind, name, roleKind, role string }{
		{"ClusterRoleBinding", "convoy-controller", "ClusterRole", "convoy-controller"},
		{"ClusterRoleBinding", "convoy-controller-apply", "ClusterRole", "convoy-controller-apply"},
		{"RoleBinding", "convoy-controller-leader-election", "Role", "convoy-controller-leader-election"},
	} {
		ref, subjects := binding(t, objs, b.kind, b.name)
		if ref.Kind != b.roleKind || ref.Name != b.role {
			t.Errorf("%s %s refers to %s %s, want %s %s", b.kind, b.name, ref.Kind, ref.Name, b.roleKind, b.role)
		}
		if !slices.Contains(subjects, sa) {
			t.Errorf("%s %s does not bind the ServiceAccount convoy-system/convoy-controller: %v", b.kind, b.name, subjects)
		}
	}
	find(t, objs, "ClusterRole", "convoy-controller-apply")
}

// convoy-sync grants create on releases/sync and reading Releases, nothing else, and
// aggregates into no built-in role; convoy-promote likewise create on
// releasesets/promote and reading ReleaseSets; convoy-view only reads (objects and
// their status).
func TestUserClusterRoles(t *testing.T) {
	dir := filepath.Join(deployDir(t), "rbac")
	var sync, promote, view rbacv1.ClusterRole
	typed(t, find(t, readObjects(t, filepath.Join(dir, "convoy-sync.yaml")), "ClusterRole", "convoy-sync"), &sync)
	typed(t, find(t, readObjects(t, filepath.Join(dir, "convoy-promote.yaml")), "ClusterRole", "convoy-promote"), &promote)
	typed(t, find(t, readObjects(t, filepath.Join(dir, "convoy-view.yaml")), "ClusterRole", "convoy-view"), &view)
	const group = "convoy.kumodo.io"
	each(sync.Rules, func(g, res, v string) {
		ok := g == group && (res == "releases/sync" && v == "create" || res == "releases" && slices.Contains([]string{"get", "list", "watch"}, v))
		if !ok {
			t.Errorf("convoy-sync grants %s on %s.%s", v, res, g)
		}
	})
	if !grants(sync.Rules, group, "releases/sync", "create") {
		t.Errorf("convoy-sync does not grant create on releases/sync")
	}
	each(promote.Rules, func(g, res, v string) {
		ok := g == group && (res == "releasesets/promote" && v == "create" ||
			(res == "releasesets" || res == "releasesets/status") && slices.Contains([]string{"get", "list", "watch"}, v))
		if !ok {
			t.Errorf("convoy-promote grants %s on %s.%s", v, res, g)
		}
	})
	if !grants(promote.Rules, group, "releasesets/promote", "create") {
		t.Errorf("convoy-promote does not grant create on releasesets/promote")
	}
	each(view.Rules, func(g, res, v string) {
		if g != group || !slices.Contains([]string{"get", "list", "watch"}, v) || strings.Contains(res, "/") && !strings.HasSuffix(res, "/status") {
			t.Errorf("convoy-view grants %s on %s.%s", v, res, g)
		}
	})
	for _, res := range []string{"releases", "releasesets", "renders", "releaseinventories", "clusters", "alerts", "receivers"} {
		if !grants(view.Rules, group, res, "list") {
			t.Errorf("convoy-view does not read %s", res)
		}
	}
	for _, r := range []rbacv1.ClusterRole{sync, promote, view} {
		for l := range r.Labels {
			if strings.HasPrefix(l, "rbac.authorization.k8s.io/aggregate-to-") {
				t.Errorf("%s has the aggregation label %s; the comment in its file says why it must not", r.Name, l)
			}
		}
	}
}
