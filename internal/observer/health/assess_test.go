package health

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestAssess(t *testing.T) {
	cfg, web, api, db := ref("ConfigMap", "cfg"), ref("Deployment", "web"), ref("Deployment", "api"), ref("StatefulSet", "db")
	threeWaves := inventory("sha256:r1", obj(web, 2), obj(db, 1), obj(cfg, 0), obj(api, 2))
	now := t0.Add(time.Minute)

	cases := map[string]struct {
		inv     *v1.ReleaseInventory
		results map[v1.ObjectReference]Result
		hooks   []v1.HookStatus
		want    Assessment
	}{
		"objects sorted, each wave and the render the worst of their objects": {
			inv: threeWaves,
			results: map[v1.ObjectReference]Result{
				cfg: healthy(), db: progressing(), web: healthy(), api: missing(),
			},
			want: Assessment{Write: true, Complete: true, Status: v1.ReleaseInventoryStatus{
				RenderRef:  "sha256:r1",
				AssessedAt: at(time.Minute),
				Health:     v1.HealthMissing,
				Objects:    []v1.ObjectHealth{oh(cfg, healthy()), oh(api, missing()), oh(web, healthy()), oh(db, progressing())},
				Waves:      []v1.WaveHealth{wave(0, v1.HealthHealthy), wave(1, v1.HealthProgressing), wave(2, v1.HealthMissing)},
			}},
		},
		"Degraded is worse than Missing in a wave and in the render": {
			inv:     threeWaves,
			results: map[v1.ObjectReference]Result{cfg: healthy(), db: unknown(), web: degraded(), api: missing()},
			want: Assessment{Write: true, Complete: true, Status: v1.ReleaseInventoryStatus{
				RenderRef:  "sha256:r1",
				AssessedAt: at(time.Minute),
				Health:     v1.HealthDegraded,
				Objects:    []v1.ObjectHealth{oh(cfg, healthy()), oh(api, missing()), oh(web, degraded()), oh(db, unknown())},
				Waves:      []v1.WaveHealth{wave(0, v1.HealthHealthy), wave(1, v1.HealthUnknown), wave(2, v1.HealthDegraded)},
			}},
		},
		"an object without a result yet: status does not name the render (SP-15)": {
			inv:     threeWaves,
			results: map[v1.ObjectReference]Result{cfg: healthy(), db: healthy(), web: healthy()},
			want:    Assessment{},
		},
		"hook states are written, sorted by batch and name, also before the objects are assessed": {
			inv:     threeWaves,
			results: map[v1.ObjectReference]Result{},
			hooks:   []v1.HookStatus{hook("seed", 1, v1.HookJobPending), hook("migrate", 0, v1.HookJobRunning), hook("backup", 0, v1.HookJobSucceeded)},
			want: Assessment{Write: true, Status: v1.ReleaseInventoryStatus{
				AssessedAt: at(time.Minute),
				Hooks:      []v1.HookStatus{hook("backup", 0, v1.HookJobSucceeded), hook("migrate", 0, v1.HookJobRunning), hook("seed", 1, v1.HookJobPending)},
			}},
		},
		// Decision 0160: the controller counts health for the sync waves only when it is of
		// the inventory's generation, so that a wave applied since waits.
		"a complete assessment records the inventory's generation": {
			inv: func() *v1.ReleaseInventory {
				inv := inventory("sha256:r1", obj(cfg, 0))
				inv.Generation = 7
				return inv
			}(),
			results: map[v1.ObjectReference]Result{cfg: healthy()},
			want: Assessment{Write: true, Complete: true, Status: v1.ReleaseInventoryStatus{
				RenderRef: "sha256:r1", ObservedGeneration: 7, AssessedAt: at(time.Minute), Health: v1.HealthHealthy,
				Objects: []v1.ObjectHealth{oh(cfg, healthy())}, Waves: []v1.WaveHealth{wave(0, v1.HealthHealthy)},
			}},
		},
		"an inventory without a render has nothing to assess": {
			inv:  inventory(""),
			want: Assessment{},
		},
		"a render without objects is Healthy": {
			inv:  inventory("sha256:empty"),
			want: Assessment{Write: true, Complete: true, Status: v1.ReleaseInventoryStatus{RenderRef: "sha256:empty", AssessedAt: at(time.Minute), Health: v1.HealthHealthy}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Assess(AssessInput{Inventory: tc.inv, Results: tc.results, Hooks: tc.hooks, Now: now})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
		})
	}
}

// A steady cluster causes no writes: assessedAt moves only when something else changed.
func TestAssessWritesOnlyOnChange(t *testing.T) {
	cfg, web := ref("ConfigMap", "cfg"), ref("Deployment", "web")
	inv := inventory("sha256:r1", obj(cfg, 0), obj(web, 1))
	results := map[v1.ObjectReference]Result{cfg: healthy(), web: progressing()}
	drift := &v1.DriftStatus{Since: at(0)}

	first := Assess(AssessInput{Inventory: inv, Results: results, Drift: drift, Now: t0.Add(time.Minute)})
	if !first.Write {
		t.Fatalf("first assessment not written")
	}
	inv.Status = first.Status

	steps := []struct {
		name      string
		results   map[v1.ObjectReference]Result
		hooks     []v1.HookStatus
		drift     *v1.DriftStatus
		wantWrite bool
	}{
		{name: "same results", results: results, drift: drift},
		{name: "same results again, a drift status equal to the second", results: results, drift: &v1.DriftStatus{Since: at(0)}},
		{name: "an object turns Healthy", results: map[v1.ObjectReference]Result{cfg: healthy(), web: healthy()}, drift: drift, wantWrite: true},
		{name: "steady again", results: map[v1.ObjectReference]Result{cfg: healthy(), web: healthy()}, drift: drift},
		{name: "only a message changes", results: map[v1.ObjectReference]Result{cfg: healthy(), web: {Health: v1.HealthHealthy, Message: "other"}}, drift: drift, wantWrite: true},
		{name: "a hook appears", results: map[v1.ObjectReference]Result{cfg: healthy(), web: {Health: v1.HealthHealthy, Message: "other"}}, drift: drift, hooks: []v1.HookStatus{hook("migrate", 0, v1.HookJobRunning)}, wantWrite: true},
		{name: "drift found", results: map[v1.ObjectReference]Result{cfg: healthy(), web: {Health: v1.HealthHealthy, Message: "other"}}, hooks: []v1.HookStatus{hook("migrate", 0, v1.HookJobRunning)}, drift: &v1.DriftStatus{Since: at(time.Hour), Drifted: []v1.DriftedObject{{ObjectReference: web, Fields: []string{"spec.replicas"}}}}, wantWrite: true},
	}
	for i, s := range steps {
		now := t0.Add(time.Duration(i+2) * time.Minute)
		got := Assess(AssessInput{Inventory: inv, Results: s.results, Hooks: s.hooks, Drift: s.drift, Now: now})
		if got.Write != s.wantWrite {
			t.Fatalf("%s: Write = %v, want %v", s.name, got.Write, s.wantWrite)
		}
		wantAt := inv.Status.AssessedAt
		if s.wantWrite {
			wantAt = &metav1.Time{Time: now}
		}
		if diff := cmp.Diff(wantAt, got.Status.AssessedAt); diff != "" {
			t.Fatalf("%s: assessedAt (-want +got):\n%s", s.name, diff)
		}
		if got.Write {
			inv.Status = got.Status
		}
	}
}

func TestChanged(t *testing.T) {
	base := v1.ReleaseInventoryStatus{
		RenderRef: "sha256:r1", AssessedAt: at(0), Health: v1.HealthHealthy,
		Objects: []v1.ObjectHealth{oh(ref("ConfigMap", "cfg"), healthy())},
		Waves:   []v1.WaveHealth{wave(0, v1.HealthHealthy)},
		Drift:   &v1.DriftStatus{Since: at(0)},
	}
	with := func(f func(*v1.ReleaseInventoryStatus)) v1.ReleaseInventoryStatus {
		s := *base.DeepCopy()
		f(&s)
		return s
	}
	cases := map[string]struct {
		next v1.ReleaseInventoryStatus
		want bool
	}{
		"identical":                     {next: base, want: false},
		"only assessedAt differs":       {next: with(func(s *v1.ReleaseInventoryStatus) { s.AssessedAt = at(time.Hour) }), want: false},
		"nil and empty lists are equal": {next: with(func(s *v1.ReleaseInventoryStatus) { s.Hooks = []v1.HookStatus{} }), want: false},
		"drift since below the second":  {next: with(func(s *v1.ReleaseInventoryStatus) { s.Drift.Since = at(time.Millisecond) }), want: false},
		"render health":                 {next: with(func(s *v1.ReleaseInventoryStatus) { s.Health = v1.HealthProgressing }), want: true},
		"an object message":             {next: with(func(s *v1.ReleaseInventoryStatus) { s.Objects[0].Message = "x" }), want: true},
		"a wave":                        {next: with(func(s *v1.ReleaseInventoryStatus) { s.Waves[0].Health = v1.HealthMissing }), want: true},
		"the render":                    {next: with(func(s *v1.ReleaseInventoryStatus) { s.RenderRef = "sha256:r2" }), want: true},
		"drift since":                   {next: with(func(s *v1.ReleaseInventoryStatus) { s.Drift.Since = at(time.Hour) }), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Changed(base, tc.next)); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
		})
	}
}
