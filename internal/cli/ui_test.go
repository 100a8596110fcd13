package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
	"kumodo.io/convoy/internal/ui"
)

// lockedBuffer is an io.Writer that a test may read while the UI writes.
type lockedBuffer = testenv.SyncBuffer

var uiURL = regexp.MustCompile(`convoy UI on (http://127\.0\.0\.1:\d+/)`)

// startUI runs `kubectl convoy ui` in process with args (the admin kubeconfig
// unless args name one) until the test ends, and returns its URL.
func startUI(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	o := testOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, nil)
	done := make(chan int, 1)
	go func() { done <- o.Execute(ctx, withKubeconfig(append([]string{"ui"}, args...))) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("kubectl convoy ui ended with exit %d: %s", code, errOut.String())
		}
	})
	var url string
	testenv.Eventually(t, testCtx(t), "kubectl convoy ui prints its URL", time.Minute, func() (bool, string) {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("kubectl convoy ui exited with %d before serving: %s", code, errOut.String())
		default:
		}
		m := uiURL.FindStringSubmatch(out.String())
		if m == nil {
			return false, "stdout: " + out.String()
		}
		url = m[1]
		return true, ""
	})
	return url
}

// stream reads the UI's Server-Sent Events.
type stream struct {
	msgs chan ui.Message
}

func openStream(t *testing.T, base string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"api/stream", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		cancel()
		t.Fatalf("/api/stream: Content-Type %q", ct)
	}
	s := &stream{msgs: make(chan ui.Message, 4096)}
	go func() {
		defer close(s.msgs)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m ui.Message
			if err := json.Unmarshal([]byte(line), &m); err == nil {
				s.msgs <- m
			}
		}
	}()
	t.Cleanup(func() { cancel(); _ = res.Body.Close() })
	return s
}

// next waits for a message that match accepts.
func (s *stream) next(t *testing.T, what string, match func(ui.Message) bool) ui.Message {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				t.Fatalf("the stream ended while waiting for %s", what)
			}
			if match(m) {
				return m
			}
		case <-timeout:
			t.Fatalf("no %s on the stream within 30s", what)
		}
	}
}

func release(m ui.Message) *v1.Release {
	r := &v1.Release{}
	_ = json.Unmarshal(m.Object, r)
	return r
}

// The stream sends a snapshot with the Release, then each change as it happens
// (a status write, then the deletion), without the page asking again.
func TestUIStreamsReleaseChanges(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	base := startUI(t, "-n", ns)
	s := openStream(t, base)
	key := ns + "/podinfo"
	s.next(t, "the Release in the snapshot", func(m ui.Message) bool { return m.Op == "put" && m.Kind == ui.KindRelease && m.Key == key })
	s.next(t, "the end of the snapshot", func(m ui.Message) bool { return m.Op == "synced" })

	writeStatus(t, ns, "podinfo", func(r *v1.Release) {
		r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionFalse, v1.ReasonWaitingForSync, "waiting for /sync")}
	})
	s.next(t, "the Release with Applied WaitingForSync", func(m ui.Message) bool {
		if m.Op != "put" || m.Key != key {
			return false
		}
		cs := release(m).Status.Conditions
		return len(cs) == 1 && cs[0].Reason == v1.ReasonWaitingForSync
	})
	// No controller runs here to remove convoy's finalizer: the test does.
	c := admin(t)
	if err := c.rest.Delete().Namespace(ns).Resource(v1.ResourceReleases).Name("podinfo").Do(testCtx(t)).Error(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MergePatch(testCtx(t), ns, "podinfo", "", []byte(`{"metadata":{"finalizers":null}}`)); err != nil && !apierrors.IsNotFound(errors.Unwrap(err)) {
		t.Fatal(err)
	}
	s.next(t, "the deletion of the Release", func(m ui.Message) bool { return m.Op == "delete" && m.Key == key })
}

func call(t *testing.T, method, url string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), method, url, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, out
}

var write = map[string]string{"X-Convoy-UI": "1", "Content-Type": "application/json"}

// A user who may only read Releases is offered no action (/api/access) and the
// server refuses the write before it reaches the API (nothing is written); once
// allowed releases/sync and releases/pin, the same user's Sync, Pin and Unpin go
// through the subresources.
func TestUIActionsFollowRBAC(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	read := rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releases"}, Verbs: []string{"get", "list", "watch"}}
	admin, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "viewer-" + testenv.RandomSuffix()
	testenv.Grant(t, testCtx(t), admin, ns, user, read)
	kubeconfig := userKubeconfig(t, user)

	base := startUI(t, "--kubeconfig", kubeconfig, "-n", ns)
	code, access := call(t, http.MethodGet, base+"api/access?namespace="+ns, nil, "")
	if code != 200 || access["sync"] != false || access["pin"] != false {
		t.Fatalf("access of a reader: %d %v, want sync and pin false", code, access)
	}
	code, body := call(t, http.MethodPost, base+"api/releases/"+ns+"/podinfo/sync", write, "")
	if code != http.StatusForbidden || !strings.Contains(fmt.Sprint(body["error"]), "may not create releases/sync") {
		t.Errorf("sync by a reader: %d %v, want 403 from the UI", code, body)
	}
	if a := getRelease(t, ns, "podinfo").Annotations[v1.AnnotationSyncRequestedAt]; a != "" {
		t.Errorf("a refused sync wrote %s", a)
	}

	act := rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releases/sync", "releases/pin"}, Verbs: []string{"create", "patch"}}
	role := &rbacv1.Role{}
	if err := admin.Get(testCtx(t), client.ObjectKey{Namespace: ns, Name: user}, role); err != nil {
		t.Fatal(err)
	}
	role.Rules = append(role.Rules, act)
	if err := admin.Update(testCtx(t), role); err != nil {
		t.Fatal(err)
	}
	testenv.WaitAllowed(t, testCtx(t), admin, ns, user, act)
	base = startUI(t, "--kubeconfig", kubeconfig, "-n", ns)
	if code, access = call(t, http.MethodGet, base+"api/access?namespace="+ns, nil, ""); access["sync"] != true || access["pin"] != true {
		t.Fatalf("access after the grant: %d %v", code, access)
	}
	if code, body = call(t, http.MethodPost, base+"api/releases/"+ns+"/podinfo/sync", map[string]string{}, ""); code != http.StatusForbidden {
		t.Errorf("a write without X-Convoy-UI: %d %v, want 403", code, body)
	}
	code, body = call(t, http.MethodPost, base+"api/releases/"+ns+"/podinfo/sync", write, "")
	if code != 200 || body["requestedAt"] == "" {
		t.Fatalf("sync: %d %v", code, body)
	}
	if a := getRelease(t, ns, "podinfo").Annotations[v1.AnnotationSyncRequestedAt]; a != body["requestedAt"] {
		t.Errorf("sync-requested-at %q, the UI answered %v", a, body["requestedAt"])
	}
	code, body = call(t, http.MethodPost, base+"api/releases/"+ns+"/podinfo/pin", write, `{"renderRef": "`+refA+`", "reason": "incident"}`)
	if code != 200 {
		t.Fatalf("pin: %d %v", code, body)
	}
	if p := getRelease(t, ns, "podinfo").Pin; p == nil || p.RenderRef != refA || p.Reason != "incident" {
		t.Errorf("pin after the UI's pin: %+v", p)
	}
	if code, body = call(t, http.MethodPost, base+"api/releases/"+ns+"/podinfo/unpin", write, ""); code != 200 {
		t.Fatalf("unpin: %d %v", code, body)
	}
	if p := getRelease(t, ns, "podinfo").Pin; p != nil {
		t.Errorf("pin after the UI's unpin: %+v", p)
	}
}

func userKubeconfig(t *testing.T, user string) string {
	t.Helper()
	cfg, err := env.cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := writeKubeconfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	return path
}

// The UI's cluster diff is `kubectl convoy release diff`: the same objects and
// the same unified diff text.
func TestUIDiffIsReleaseDiff(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	kube := kubernetes.NewForConfigOrDie(env.admin)
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(testCtx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "podinfo"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	manifests := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: podinfo, namespace: %s}\ndata: {a: c}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: %s}\ndata: {a: b}\n", ns, ns)
	rd := &v1.Render{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1.RenderRef(refB).RenderName("podinfo"), Labels: map[string]string{v1.LabelRelease: "podinfo"}},
		RenderRef:  refB, Release: "podinfo", Chart: v1.RenderChart{Name: "podinfo", Version: "6.7.1"}, ObjectCount: 2, Manifests: gz(t, manifests),
	}
	if err := admin(t).rest.Post().Namespace(ns).Resource("renders").Body(rd).Do(testCtx(t)).Error(); err != nil {
		t.Fatal(err)
	}
	writeStatus(t, ns, "podinfo", func(r *v1.Release) { r.Status.Render = &v1.RenderStatus{Ref: refB} })

	res := plugin(t, nil, "release", "diff", "podinfo", "-n", ns)
	if res.code != 0 {
		t.Fatalf("release diff: %d %s", res.code, res.stderr)
	}
	base := startUI(t, "-n", ns)
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, base+"api/releases/"+ns+"/podinfo/diff", nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var d ui.DiffResponse
	if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var actions []string
	for _, o := range d.Objects {
		text.WriteString(o.Unified)
		actions = append(actions, string(o.Action)+" "+o.Name)
	}
	if text.String() != res.stdout {
		t.Errorf("the UI's diff differs from release diff:\nUI:\n%s\nCLI:\n%s", text.String(), res.stdout)
	}
	if got, want := strings.Join(actions, ", "), fmt.Sprintf("Configure ConfigMap %s/podinfo, Create ConfigMap %s/new", ns, ns); got != want || d.To != refB {
		t.Errorf("objects %q (render %s), want %q (render %s)", got, d.To, want, refB)
	}
}

// The UI's diff of two renders lists, from the older render to the newer, the
// changed object with its fields and unified diff, the new object and the
// dropped one.
func TestUIRenderDiff(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRelease(t, ns, "podinfo")
	for _, r := range []struct{ ref, manifests string }{
		{refA, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: " + ns + "}\ndata: {k: one}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: old, namespace: " + ns + "}\n"},
		{refB, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: " + ns + "}\ndata: {k: two}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: " + ns + "}\n"},
	} {
		rd := &v1.Render{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1.RenderRef(r.ref).RenderName("podinfo"), Labels: map[string]string{v1.LabelRelease: "podinfo"}},
			RenderRef:  r.ref, Release: "podinfo", Chart: v1.RenderChart{Name: "podinfo", Version: "6.7.1"}, ObjectCount: 2, Manifests: gz(t, r.manifests),
		}
		if err := admin(t).rest.Post().Namespace(ns).Resource("renders").Body(rd).Do(testCtx(t)).Error(); err != nil {
			t.Fatal(err)
		}
	}
	base := startUI(t, "-n", ns)
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, base+"api/releases/"+ns+"/podinfo/renderdiff?from="+refA+"&to="+refB, nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var d ui.DiffResponse
	if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range d.Objects {
		got = append(got, fmt.Sprintf("%s %s %v", o.Action, strings.ReplaceAll(o.Name, ns, "NS"), o.Fields))
	}
	want := "Configure ConfigMap NS/a [data.k]; Create ConfigMap NS/new []; Prune ConfigMap NS/old []"
	if strings.Join(got, "; ") != want {
		t.Errorf("render diff: %s, want %s", strings.Join(got, "; "), want)
	}
	if len(d.Objects) > 0 && !strings.Contains(d.Objects[0].Unified, "-  k: one\n+  k: two\n") {
		t.Errorf("the unified diff of ConfigMap a:\n%s", d.Objects[0].Unified)
	}
	code, body := call(t, http.MethodGet, base+"api/releases/"+ns+"/podinfo/renderdiff?from="+refA, nil, "")
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["error"]), "needs ?from=REF&to=REF") {
		t.Errorf("render diff without to: %d %v", code, body)
	}
}

// Without -n, a user who may not list Releases cluster-wide sees the Releases of
// every namespace where they may (found through the namespaces they may list),
// and no other.
func TestUIWatchesEveryNamespaceTheUserMayList(t *testing.T) {
	needCluster(t)
	nsA, nsB, other := namespace(t), namespace(t), namespace(t)
	for _, ns := range []string{nsA, nsB, other} {
		createRelease(t, ns, "podinfo")
	}
	admin, err := client.New(env.admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := "team-" + testenv.RandomSuffix()
	read := rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{"releases"}, Verbs: []string{"get", "list", "watch"}}
	testenv.Grant(t, testCtx(t), admin, nsA, user, read)
	testenv.Grant(t, testCtx(t), admin, nsB, user, read)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user + "-namespaces"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-namespaces"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	for _, o := range []client.Object{role, binding} {
		if err := admin.Create(testCtx(t), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Delete(context.Background(), o) })
	}
	testenv.WaitAllowed(t, testCtx(t), admin, "", user, role.Rules...)

	base := startUI(t, "--kubeconfig", userKubeconfig(t, user))
	s := openStream(t, base)
	var got []string
	for {
		m := s.next(t, "the snapshot", func(m ui.Message) bool { return m.Op == "synced" || m.Kind == ui.KindRelease })
		if m.Op == "synced" {
			break
		}
		got = append(got, m.Key)
	}
	slices.Sort(got)
	want := []string{nsA + "/podinfo", nsB + "/podinfo"}
	slices.Sort(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Releases in the UI of a user of %s and %s: %v, want %v", nsA, nsB, got, want)
	}
}

// The UI's Sync approves the render whose diff the page shows: POST
// /api/releases/NS/NAME/sync?render=REF reaches releases/NAME/sync?render=REF (the
// server writes sync-requested-render and the UI answers with it); a render that is
// no longer the Release's is refused with 409 and renderChanged, and nothing is
// written.
func TestUISyncApprovesTheRenderShown(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createRenderedRelease(t, ns, "podinfo")
	base := startUI(t, "-n", ns)
	code, body := call(t, http.MethodPost, base+"api/releases/"+ns+"/podinfo/sync?render="+refB, write, "")
	if code != http.StatusOK || body["render"] != refB {
		t.Fatalf("sync of the current render: %d %v, want 200 and render %s", code, body, refB)
	}
	a := getRelease(t, ns, "podinfo").Annotations
	if a[v1.AnnotationSyncRequestedRender] != refB || a[v1.AnnotationSyncRequestedAt] != body["requestedAt"] {
		t.Errorf("annotations %v, want %s=%s and the time the UI answered %v", a, v1.AnnotationSyncRequestedRender, refB, body["requestedAt"])
	}

	code, body = call(t, http.MethodPost, base+"api/releases/"+ns+"/podinfo/sync?render="+refA, write, "")
	if code != http.StatusConflict || body["renderChanged"] != true || !strings.Contains(fmt.Sprint(body["error"]), "The render changed") {
		t.Errorf("sync of a render no longer current: %d %v, want 409 with renderChanged", code, body)
	}
	if b := getRelease(t, ns, "podinfo").Annotations; b[v1.AnnotationSyncRequestedAt] != a[v1.AnnotationSyncRequestedAt] || b[v1.AnnotationSyncRequestedRender] != refB {
		t.Errorf("a refused sync wrote: annotations %v, before %v", b, a)
	}
}
