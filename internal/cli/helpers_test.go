package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run go test ./internal/cli -run %s -update to create it): %v", path, t.Name(), err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got), rerun with -update if intended:\n%s", path, diff)
	}
}

// now is the time of every formatting test.
var now = time.Date(2026, 12, 2, 10, 10, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }

const (
	refA = "sha256:4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c"
	refB = "sha256:9a2b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b"
)

// testRelease builds a Release created an hour ago; options change it.
func testRelease(ns, name string, opts ...func(*v1.Release)) *v1.Release {
	r := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1, CreationTimestamp: *at(time.Hour)},
		Spec:       v1.ReleaseSpec{Chart: v1.ChartSource{Repository: "https://charts.example.com", Name: name, Version: ">=6.0.0 <7.0.0"}},
	}
	r.Status.ObservedGeneration = 1
	for _, o := range opts {
		o(r)
	}
	return r
}

func automatic() func(*v1.Release) {
	return func(r *v1.Release) { b := true; r.Spec.SyncPolicy.Automatic = &b }
}

func interval(d time.Duration) func(*v1.Release) {
	return func(r *v1.Release) { r.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: d} }
}

func onCluster(name string, wave int32) func(*v1.Release) {
	return func(r *v1.Release) { r.Spec.Cluster, r.Spec.ClusterWave = name, wave }
}

func condition(typ string, status metav1.ConditionStatus, reason, msg string, since time.Duration) func(*v1.Release) {
	return func(r *v1.Release) {
		r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{
			Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: *at(since),
		})
	}
}

func applied(reason, msg string) func(*v1.Release) {
	status := metav1.ConditionFalse
	if reason == v1.ReasonApplied {
		status = metav1.ConditionTrue
	}
	return condition(v1.ConditionApplied, status, reason, msg, 5*time.Minute)
}

func healthy(reason string) func(*v1.Release) {
	status := metav1.ConditionFalse
	switch reason {
	case v1.ReasonHealthy:
		status = metav1.ConditionTrue
	case v1.ReasonNotAssessed:
		status = metav1.ConditionUnknown
	}
	return condition(v1.ConditionHealthy, status, reason, "", 4*time.Minute)
}

func rendered(ref, version string) func(*v1.Release) {
	return func(r *v1.Release) {
		r.Status.Render = &v1.RenderStatus{Ref: ref, ChartVersion: version, RenderedAt: at(10 * time.Minute)}
	}
}

func lastSuccessful(ref, version string) func(*v1.Release) {
	return func(r *v1.Release) {
		r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: ref, ChartVersion: version, AppliedAt: at(30 * time.Minute)}
	}
}

func syncRequested(value string, handled *metav1.Time) func(*v1.Release) {
	return func(r *v1.Release) {
		if r.Annotations == nil {
			r.Annotations = map[string]string{}
		}
		r.Annotations[v1.AnnotationSyncRequestedAt] = value
		r.Status.LastHandledSyncAt = handled
	}
}

func pinned(ref, reason string) func(*v1.Release) {
	return func(r *v1.Release) { r.Pin = &v1.Pin{RenderRef: ref, Reason: reason, PinnedAt: at(2 * time.Hour)} }
}

func wave(current, total int32) func(*v1.Release) {
	return func(r *v1.Release) { r.Status.SyncWave = &v1.SyncWaveStatus{Current: current, Total: total} }
}

func hooks(hs ...v1.HookStatus) func(*v1.Release) {
	return func(r *v1.Release) { r.Status.Hooks = hs }
}

func rollout(phase v1.RolloutPhase, ref, previous, msg string) func(*v1.Release) {
	return func(r *v1.Release) {
		r.Status.Rollout = &v1.RolloutStatus{Phase: phase, RenderRef: ref, PreviousRenderRef: previous,
			StartedAt: at(3 * time.Minute), Deadline: &metav1.Time{Time: now.Add(2 * time.Minute)}, Message: msg}
	}
}

func testRender(release, ref, version string, objects int32, age time.Duration) v1.Render {
	return v1.Render{
		ObjectMeta: metav1.ObjectMeta{Name: v1.RenderRef(ref).RenderName(release), CreationTimestamp: *at(age)},
		RenderRef:  ref, Release: release, Chart: v1.RenderChart{Name: release, Version: version}, ObjectCount: objects,
	}
}
