package deploy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/backup"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/test/convoychart"
)

// buildConvoy builds cmd/convoy into a temporary folder.
func buildConvoy(t *testing.T) string {
	t.Helper()
	bin, err := localcluster.BuildConvoy(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// releaseNames lists the Releases of ns through convoy apiserver, with their steps.
func releaseSteps(t *testing.T, api *convoyAPI, ns string) map[string]string {
	t.Helper()
	res := api.do(ctx(t), http.MethodGet, releasesPath(ns), "", nil)
	if res.err != nil || res.code != http.StatusOK {
		t.Fatalf("listing Releases: %d %v %s", res.code, res.err, res.body)
	}
	var list convoyv1alpha1.ReleaseList
	if err := json.Unmarshal([]byte(res.body), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range list.Items {
		out[r.Name] = r.Annotations[stepAnnotation]
	}
	return out
}

// Logical backups (decision 0183): the chart's backup CronJob, its command run as a process against the
// chart's etcd (three members, TLS) with an S3 server standing in for the bucket,
// then `convoy restore`: the Releases are again exactly those of the backup (new
// ones gone, changed ones back, deleted ones back), and convoy apiserver, which
// ran all along, serves them. backup.retain keeps the newest backups. A restore
// into another prefix, or of objects of an API version this convoy does not read,
// is refused with a clear message and writes nothing.
func TestBackupCronJobAndRestore(t *testing.T) {
	needCluster(t)
	bin := buildConvoy(t)

	s3 := s3mem.New()
	if err := s3.CreateBucket("convoy-backups"); err != nil {
		t.Fatal(err)
	}
	s3srv := httptest.NewServer(gofakes3.New(s3).Server())
	t.Cleanup(s3srv.Close)
	s3host := strings.TrimPrefix(s3srv.URL, "http://")

	values := map[string]any{"backup": map[string]any{"retain": 2, "s3": map[string]any{
		"url": "s3://convoy-backups/daily", "endpoint": "s3.example.com", "insecure": true, "credentialsSecret": "convoy-backup-s3",
	}}}
	r := renderEtcd(t, values)
	objs := renderObjects(t, values)
	var cj batchv1.CronJob
	typed(t, find(t, objs, "CronJob", "convoy-backup"), &cj)
	if cj.Spec.Schedule != "0 2 * * *" {
		t.Errorf("the backup runs at %q, want daily", cj.Spec.Schedule)
	}
	job := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]

	p := newEtcdProcesses(t, r)
	for _, m := range p.members {
		m.start(t)
	}
	for _, m := range p.members {
		m.waitReady(t, 2*time.Minute)
	}
	api := p.startAPIServer(t, r.apiserver)
	mounts := map[string]string{}
	for _, m := range job.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	// The CronJob's container as a process: its args with the addresses and the
	// mounted client certificate mapped, the S3 credentials of its Secret.
	var backupArgs []string
	for _, a := range job.Args {
		a = strings.ReplaceAll(p.hostMap.Replace(a), mounts["etcd-tls"], p.clientDir)
		a = strings.Replace(a, "--s3-endpoint=s3.example.com", "--s3-endpoint="+s3host, 1)
		backupArgs = append(backupArgs, a)
	}
	s3env := append(os.Environ(), "AWS_ACCESS_KEY_ID=convoy", "AWS_SECRET_ACCESS_KEY=convoy-secret")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = s3env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	etcdArgs := func(extra ...string) []string {
		var out []string
		for _, a := range backupArgs[1:] {
			if strings.HasPrefix(a, "--etcd-") || strings.HasPrefix(a, "--s3-") {
				out = append(out, a)
			}
		}
		return append(out, extra...)
	}

	kube := kubernetes.NewForConfigOrDie(env.admin)
	ns := "convoy-backup-test"
	if _, err := kube.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		if res := api.createRelease(ctx(t), ns, n); res.code != http.StatusCreated {
			t.Fatalf("create %s: %d %v %s", n, res.code, res.err, res.body)
		}
	}
	before := releaseSteps(t, api, ns)

	out, err := run(backupArgs...)
	if err != nil || !strings.Contains(out, "Backed up") {
		t.Fatalf("convoy %s: %v\n%s", strings.Join(backupArgs, " "), err, out)
	}
	t.Logf("convoy backup: %s", out)

	// What happens after the backup: a new Release, a change, a deletion.
	if res := api.createRelease(ctx(t), ns, "new"); res.code != http.StatusCreated {
		t.Fatalf("create new: %d %s", res.code, res.body)
	}
	if res := api.setStep(ctx(t), ns, "a", 7); res.code != http.StatusOK {
		t.Fatalf("patch a: %d %s", res.code, res.body)
	}
	if res := api.do(ctx(t), http.MethodDelete, releasesPath(ns)+"/b", "", nil); res.code != http.StatusOK {
		t.Fatalf("delete b: %d %s", res.code, res.body)
	}
	if got := releaseSteps(t, api, ns); maps2String(got) == maps2String(before) {
		t.Fatalf("the changes did not change the Releases: %v", got)
	}

	// Refused: another prefix, then a newer API version; nothing written.
	out, err = run(append([]string{"restore"}, etcdArgs("--etcd-prefix=/registry/convoy-other", "--from=s3://convoy-backups/daily/")...)...)
	if err == nil || !strings.Contains(out, `the backup holds the keys of etcd prefix "/registry/convoy.kumodo.io"`) {
		t.Errorf("a restore into another prefix: %v\n%s", err, out)
	}

	out, err = run(append([]string{"restore"}, etcdArgs("--from=s3://convoy-backups/daily/")...)...)
	if err != nil || !strings.Contains(out, "Restored") {
		t.Fatalf("convoy restore: %v\n%s", err, out)
	}
	t.Logf("convoy restore: %s", out)
	// convoy apiserver ran all along: it serves the restored state (its watch saw
	// the restore as changes).
	var got map[string]string
	err = pollFor(time.Minute, func() bool {
		got = releaseSteps(t, api, ns)
		return maps2String(got) == maps2String(before)
	})
	if err != nil {
		t.Errorf("after the restore the Releases are %v, want those of the backup %v", got, before)
	}

	// backup.retain: 2 of 3 backups are kept.
	for range 2 {
		if out, err := run(backupArgs...); err != nil {
			t.Fatalf("convoy backup: %v\n%s", err, out)
		}
	}
	st, _, err := backup.Open("s3://convoy-backups/daily", backup.S3Options{Endpoint: s3host, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "convoy")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "convoy-secret")
	names, err := st.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 {
		t.Errorf("the bucket keeps %v, want the newest 2 (backup.retain)", names)
	}

	// A newer API version: an object of convoy.kumodo.io/v1beta1 in the backup.
	etcd := p.etcdClient(t, p.members[0].client)
	key := "/registry/convoy.kumodo.io/releases/" + ns + "/from-the-future"
	if _, err := etcd.Put(ctx(t), key, `{"apiVersion":"convoy.kumodo.io/v1beta1","kind":"Release"}`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if out, err := run(append([]string{"backup"}, etcdArgs("--to="+dir)...)...); err != nil {
		t.Fatalf("convoy backup --to %s: %v\n%s", dir, err, out)
	}
	if _, err := etcd.Delete(ctx(t), key); err != nil {
		t.Fatal(err)
	}
	if res := api.createRelease(ctx(t), ns, "kept"); res.code != http.StatusCreated {
		t.Fatalf("create kept: %d %s", res.code, res.body)
	}
	out, err = run(append([]string{"restore"}, etcdArgs("--from="+dir)...)...)
	if err == nil || !strings.Contains(out, "the backup holds convoy.kumodo.io/v1beta1 objects, which this convoy does not read") {
		t.Errorf("a restore of a newer API version: %v\n%s", err, out)
	}
	if _, ok := releaseSteps(t, api, ns)["kept"]; !ok {
		t.Error("the refused restore deleted a Release")
	}
}

func renderObjects(t *testing.T, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	c := convoychart.Load(t)
	objs := convoychart.Render(t, c, values, etcdNamespace)
	return objs
}

func maps2String(m map[string]string) string {
	var keys []string
	for k, v := range m {
		keys = append(keys, k+"="+v)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

func pollFor(timeout time.Duration, cond func() bool) error {
	return wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
}
