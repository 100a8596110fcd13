package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// The integration tests run the plugin in process against the local control plane
// with convoy apiserver (main_test.go), as kubectl would run it: --kubeconfig, -n.

func needCluster(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("needs the local control plane (not with -short)")
	}
}

func testCtx(t *testing.T) context.Context {
	return testenv.Context(t, 2*time.Minute)
}

type result struct {
	stdout, stderr string
	code           int
}

// plugin runs kubectl-convoy with args and the admin kubeconfig unless args name one.
func plugin(t *testing.T, environ map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	o := testOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, environ)
	code := o.Execute(testCtx(t), withKubeconfig(args))
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

func testOptions(streams genericiooptions.IOStreams, environ map[string]string) *Options {
	return &Options{
		ConfigFlags:  genericclioptions.NewConfigFlags(false),
		Streams:      streams,
		Getenv:       func(k string) string { return environ[k] },
		Now:          time.Now,
		PollInterval: 50 * time.Millisecond,
	}
}

func withKubeconfig(args []string) []string {
	for _, a := range args {
		if strings.HasPrefix(a, "--kubeconfig") {
			return args
		}
	}
	return append([]string{"--kubeconfig", env.kubeconfig}, args...)
}

func admin(t *testing.T) *Client {
	t.Helper()
	c, err := NewClient(env.admin)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// namespace creates a namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(env.admin)
	name := strings.ToLower(strings.NewReplacer("_", "-", "/", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	name = strings.Trim(name, "-") + "-" + testenv.RandomSuffix()
	if _, err := kube.CoreV1().Namespaces().Create(testCtx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

func createRelease(t *testing.T, ns, name string) *v1.Release {
	t.Helper()
	r := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"}},
	}
	out := &v1.Release{}
	if err := admin(t).rest.Post().Namespace(ns).Resource("releases").Body(r).Do(testCtx(t)).Into(out); err != nil {
		t.Fatalf("creating Release %s/%s: %v", ns, name, err)
	}
	return out
}

func getRelease(t *testing.T, ns, name string) *v1.Release {
	t.Helper()
	r, err := admin(t).GetRelease(testCtx(t), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// createRenderedRelease creates a Release as the controller leaves it once rendered:
// status.render is refB, the render that `release sync` approves by default.
func createRenderedRelease(t *testing.T, ns, name string) *v1.Release {
	t.Helper()
	createRelease(t, ns, name)
	writeStatus(t, ns, name, func(r *v1.Release) { r.Status.Render = &v1.RenderStatus{Ref: refB} })
	return getRelease(t, ns, name)
}

// writeStatus sets the Release's status through /status, as the controller would.
func writeStatus(t *testing.T, ns, name string, change func(*v1.Release)) {
	t.Helper()
	r := getRelease(t, ns, name)
	change(r)
	r.Status.ObservedGeneration = r.Generation
	if err := admin(t).rest.Put().Namespace(ns).Resource("releases").Name(name).SubResource("status").Body(r).Do(testCtx(t)).Error(); err != nil {
		t.Fatalf("writing the status of %s/%s: %v", ns, name, err)
	}
}

// SP-17: kubectl convoy release sync podinfo requests a sync (POST /sync writes
// sync-requested-at) and prints the time written.
func TestSP17_ReleaseSyncWritesAnnotationAndPrintsTime(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	res := plugin(t, nil, "release", "sync", "podinfo", "-n", ns)
	if res.code != 0 {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	stored := getRelease(t, ns, "podinfo").Annotations
	value := stored[v1.AnnotationSyncRequestedAt]
	if _, err := time.Parse(v1.SyncTimeLayout, value); err != nil {
		t.Fatalf("sync-requested-at = %q: %v", value, err)
	}
	if want := "release.convoy.kumodo.io/podinfo sync of render 9a2b0c1d2e requested at " + value + "\n"; res.stdout != want {
		t.Errorf("stdout = %q, want %q", res.stdout, want)
	}
	if _, ok := stored[v1.AnnotationSyncForceRequestedAt]; ok {
		t.Errorf("a sync without --force wrote %s", v1.AnnotationSyncForceRequestedAt)
	}
}

// SP-23: kubectl convoy release sync podinfo --force writes both annotations, the
// same time.
func TestSP23_ReleaseSyncForceWritesBothAnnotations(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	res := plugin(t, nil, "release", "sync", "podinfo", "--force", "-n", ns)
	if res.code != 0 {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	a := getRelease(t, ns, "podinfo").Annotations
	req, force := a[v1.AnnotationSyncRequestedAt], a[v1.AnnotationSyncForceRequestedAt]
	if req == "" || req != force {
		t.Fatalf("sync-requested-at %q, sync-force-requested-at %q: want the same time", req, force)
	}
	if !strings.Contains(res.stdout, "forced sync of render 9a2b0c1d2e requested at "+req) {
		t.Errorf("stdout = %q", res.stdout)
	}
}

func TestOutputJSONParses(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	for _, args := range [][]string{
		{"release", "list", "-n", ns, "-o", "json"},
		{"release", "list", "-A", "-o", "json"},
		{"release", "status", "podinfo", "-n", ns, "-o", "json"},
		{"release", "history", "podinfo", "-n", ns, "-o", "json"},
		{"release", "sync", "podinfo", "-n", ns, "-o", "json"},
		{"cluster", "list", "-o", "json"},
	} {
		res := plugin(t, nil, args...)
		if res.code != 0 {
			t.Errorf("%v: exit %d, stderr %s", args, res.code, res.stderr)
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(res.stdout), &obj); err != nil {
			t.Errorf("%v: -o json does not parse: %v\n%s", args, err, res.stdout)
			continue
		}
		if obj["apiVersion"] != v1.SchemeGroupVersion.String() || obj["kind"] == "" {
			t.Errorf("%v: apiVersion %v kind %v", args, obj["apiVersion"], obj["kind"])
		}
	}
}

func TestUnknownReleaseSaysDidYouMean(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	createRelease(t, ns, "redis")
	for _, cmd := range []string{"sync", "status"} {
		res := plugin(t, nil, "release", cmd, "podinf", "-n", ns)
		if res.code != ExitFailure {
			t.Errorf("%s: exit %d, want 1", cmd, res.code)
		}
		if want := `Release "podinf" not found in namespace "` + ns + `"; did you mean "podinfo"?`; !strings.Contains(res.stderr, want) {
			t.Errorf("%s: stderr %q, want %q", cmd, res.stderr, want)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	needCluster(t)
	for _, args := range [][]string{
		{"release", "sync"},
		{"release", "syncc", "podinfo"},
		{"release", "sync", "podinfo", "--forse"},
		{"release", "render", "podinfo", "--ref", "sha256:abc"},
		{"release", "pin", "podinfo", "--render", "4f1c"},
		{"release", "list", "-o", "wide"},
	} {
		if res := plugin(t, nil, args...); res.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %s", args, res.code, res.stderr)
		}
	}
}

// A user who may read Releases but not request a sync is told which RBAC rule is
// missing.
func TestSyncWithoutPermissionNamesTheRBACRule(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	kube := kubernetes.NewForConfigOrDie(env.admin)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{v1.GroupName}, Resources: []string{"releases"}, Verbs: []string{"get", "list"}}},
	}
	if _, err := kube.RbacV1().Roles(ns).Create(testCtx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "dev"}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(testCtx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Before the binding is in force convoy apiserver would be told no, and cache it.
	admin, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitAllowed(t, testCtx(t), admin, ns, "dev", role.Rules...)
	cfg, err := env.cluster.UserConfig("dev")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "dev.kubeconfig")
	if err := writeKubeconfig(kubeconfig, cfg); err != nil {
		t.Fatal(err)
	}
	if res := plugin(t, nil, "--kubeconfig", kubeconfig, "release", "status", "podinfo", "-n", ns); res.code != 0 {
		t.Fatalf("status as dev: exit %d, stderr %s", res.code, res.stderr)
	}
	res := plugin(t, nil, "--kubeconfig", kubeconfig, "release", "sync", "podinfo", "-n", ns)
	if res.code != ExitFailure {
		t.Fatalf("sync as dev: exit %d, want 1", res.code)
	}
	for _, want := range []string{"apiGroups: [convoy.kumodo.io], resources: [releases/sync], verbs: [create]", `User "dev"`} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr %q lacks %q", res.stderr, want)
		}
	}
	res = plugin(t, nil, "--kubeconfig", kubeconfig, "release", "pin", "podinfo", "-n", ns)
	if !strings.Contains(res.stderr, "resources: [releases/pin], verbs: [patch]") {
		t.Errorf("pin as dev: stderr %q", res.stderr)
	}
}

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// history, render, pin --render, unpin and mutate -f against the API server.
func TestRenderHistoryPinMutate(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	manifests := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: podinfo\n  namespace: " + ns + "\ndata:\n  a: b\n"
	for _, ref := range []string{refA, refB} {
		rd := &v1.Render{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1.RenderRef(ref).RenderName("podinfo"), Labels: map[string]string{v1.LabelRelease: "podinfo"}},
			RenderRef:  ref, Release: "podinfo", Chart: v1.RenderChart{Name: "podinfo", Version: "6.7.1"}, ObjectCount: 1,
			Manifests: gz(t, manifests),
		}
		if err := admin(t).rest.Post().Namespace(ns).Resource("renders").Body(rd).Do(testCtx(t)).Error(); err != nil {
			t.Fatalf("creating Render: %v", err)
		}
	}
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Render = &v1.RenderStatus{Ref: refB, ChartVersion: "6.7.1"}
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: refA, ChartVersion: "6.7.1"}
	})

	res := plugin(t, nil, "release", "render", "podinfo", "-n", ns)
	if res.code != 0 || res.stdout != manifests {
		t.Errorf("render: exit %d stdout %q stderr %s", res.code, res.stdout, res.stderr)
	}
	if res := plugin(t, nil, "release", "render", "podinfo", "--ref", refA, "-n", ns, "-o", "json"); res.code != 0 || !strings.Contains(res.stdout, `"renderRef": "`+refA) {
		t.Errorf("render --ref -o json: exit %d stdout %q stderr %s", res.code, res.stdout, res.stderr)
	}
	res = plugin(t, nil, "release", "history", "podinfo", "-n", ns)
	if res.code != 0 || !strings.Contains(res.stdout, ShortRef(refB)) || !strings.Contains(res.stdout, "current") || !strings.Contains(res.stdout, "last successful") {
		t.Errorf("history: exit %d stdout %q stderr %s", res.code, res.stdout, res.stderr)
	}

	res = plugin(t, nil, "release", "pin", "podinfo", "--render", refB, "--reason", "incident 4711", "-n", ns)
	if res.code != 0 || !strings.Contains(res.stdout, "pinned to "+refB) {
		t.Fatalf("pin: exit %d stdout %q stderr %s", res.code, res.stdout, res.stderr)
	}
	if p := getRelease(t, ns, "podinfo").Pin; p == nil || p.RenderRef != refB || p.Reason != "incident 4711" {
		t.Errorf("pin = %+v", p)
	}
	res = plugin(t, nil, "release", "pin", "podinfo", "-n", ns)
	if p := getRelease(t, ns, "podinfo").Pin; res.code != 0 || p == nil || p.RenderRef != refA || p.Reason != "" {
		t.Errorf("pin without --render: exit %d, pin %+v, want the last successful render", res.code, p)
	}
	if res := plugin(t, nil, "release", "unpin", "podinfo", "-n", ns); res.code != 0 || getRelease(t, ns, "podinfo").Pin != nil {
		t.Errorf("unpin: exit %d stderr %s", res.code, res.stderr)
	}

	file := filepath.Join(t.TempDir(), "mutations.yaml")
	if err := os.WriteFile(file, []byte("- target: {kind: ConfigMap, name: podinfo}\n  patch: |\n    data: {a: c}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = plugin(t, nil, "release", "mutate", "podinfo", "-f", file, "-n", ns)
	if m := getRelease(t, ns, "podinfo").Mutations; res.code != 0 || len(m) != 1 || m[0].Target.Kind != "ConfigMap" {
		t.Errorf("mutate: exit %d stderr %s mutations %+v", res.code, res.stderr, m)
	}

	// diff: the ConfigMap does not exist yet on the host cluster.
	res = plugin(t, nil, "release", "diff", "podinfo", "-n", ns)
	if res.code != 0 || !strings.Contains(res.stdout, "+++ render/ConfigMap "+ns+"/podinfo") || !strings.Contains(res.stdout, "+  a: b") {
		t.Errorf("diff: exit %d stdout %q stderr %s", res.code, res.stdout, res.stderr)
	}
}

// syncAndWait runs release sync --wait with out as stdout, and returns its exit code
// on the channel.
func syncAndWait(t *testing.T, ns string, out *os.File, environ map[string]string, extra ...string) (<-chan int, *bytes.Buffer) {
	var errOut bytes.Buffer
	o := testOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errOut}, environ)
	done := make(chan int, 1)
	args := append([]string{"release", "sync", "podinfo", "--wait", "--timeout", "60s", "-n", ns}, extra...)
	go func() { done <- o.Execute(testCtx(t), withKubeconfig(args)) }()
	return done, &errOut
}

// requestedAt polls until the plugin's /sync wrote sync-requested-at.
func requestedAt(t *testing.T, ns string, before string) time.Time {
	t.Helper()
	var at time.Time
	err := wait.PollUntilContextTimeout(testCtx(t), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		v := getRelease(t, ns, "podinfo").Annotations[v1.AnnotationSyncRequestedAt]
		if v == "" || v == before {
			return false, nil
		}
		var err error
		at, err = v1.ParseSyncTime(v)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("the plugin wrote no sync-requested-at: %v", err)
	}
	return at
}

func appliedCondition(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: v1.ConditionApplied, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

func TestSyncWaitEndsWhenHandled(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	done, errOut := syncAndWait(t, ns, out, nil)
	at := requestedAt(t, ns, "")
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionFalse, v1.ReasonWaitingForSyncWave, "Wave 1 waits.")}
		r.Status.SyncWave = &v1.SyncWaveStatus{Current: 1, Total: 2}
	})
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		handled := metav1.NewTime(at)
		r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionTrue, v1.ReasonApplied, "Applied.")}
		r.Status.SyncWave = nil
		r.Status.LastHandledSyncAt = &handled
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: refB}
	})
	if code := <-done; code != 0 {
		t.Errorf("exit %d, want 0; stderr %s", code, errOut)
	}
	b, _ := os.ReadFile(out.Name())
	if !strings.Contains(string(b), "sync "+v1.FormatSyncTime(at)+" handled: render 9a2b0c1d2e applied") {
		t.Errorf("stdout %q", b)
	}
	if strings.ContainsAny(string(b), "\r\x1b") {
		t.Errorf("stdout to a file has control characters: %q", b)
	}
}

func TestSyncWaitFailsOnUnappliable(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	done, errOut := syncAndWait(t, ns, out, nil)
	requestedAt(t, ns, "")
	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionFalse, v1.ReasonUnappliable, "Template error in deployment.yaml.")}
	})
	if code := <-done; code != ExitFailure {
		t.Errorf("exit %d, want 1; stderr %s", code, errOut)
	}
	if b, _ := os.ReadFile(out.Name()); !strings.Contains(string(b), "sync failed: Unappliable: Template error in deployment.yaml.") {
		t.Errorf("stdout %q", b)
	}
}

func TestSyncWaitTimesOut(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	res := plugin(t, nil, "release", "sync", "podinfo", "--wait", "--timeout", "1s", "-n", ns)
	if res.code != ExitFailure || !strings.Contains(res.stdout, "timed out after 1s") {
		t.Errorf("exit %d stdout %q stderr %q, want 1 and a timeout", res.code, res.stdout, res.stderr)
	}
}

// Shell completion offers the namespace's Release names.
func TestCompletionListsReleaseNames(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	createRelease(t, ns, "redis")
	res := plugin(t, nil, "__complete", "release", "status", "-n", ns, "")
	if res.code != 0 || !strings.HasPrefix(res.stdout, "podinfo\nredis\n:4\n") {
		t.Errorf("completion: exit %d stdout %q stderr %s", res.code, res.stdout, res.stderr)
	}
	res = plugin(t, nil, "__complete", "release", "sync", "-n", ns, "re")
	if !strings.HasPrefix(res.stdout, "redis\n:4\n") {
		t.Errorf("completion of re: stdout %q", res.stdout)
	}
	res = plugin(t, nil, "__complete", "release", "s")
	if !strings.Contains(res.stdout, "status\t") || !strings.Contains(res.stdout, "sync\t") {
		t.Errorf("completion of commands: stdout %q", res.stdout)
	}
}
