package cli

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestSyncWaitJudge(t *testing.T) {
	requested := now.Add(-2 * time.Second).Truncate(time.Second)
	value := v1.FormatSyncTime(requested)
	before := metav1.NewTime(requested.Add(-time.Minute))
	same := metav1.NewTime(requested)
	baseline := testRelease("team-a", "podinfo", applied(v1.ReasonUnappliable, "old failure"))
	tests := map[string]struct {
		r     *v1.Release
		force bool
		at    time.Time
		want  Outcome
		msg   string
	}{
		"not reconciled yet": {
			r: testRelease("team-a", "podinfo"), want: Waiting,
		},
		"manual, handled and applied": {
			r:    testRelease("team-a", "podinfo", applied(v1.ReasonApplied, "ok"), lastSuccessful(refB, "6.7.1"), syncRequested(value, &same)),
			want: Handled, msg: "sync " + value + " handled: render 9a2b0c1d2e applied",
		},
		"manual, applied but an older request handled": {
			r:    testRelease("team-a", "podinfo", applied(v1.ReasonApplied, "in sync, waits for /sync"), syncRequested(value, &before)),
			want: Waiting,
		},
		"automatic, applied after a new status": {
			r:    testRelease("team-a", "podinfo", automatic(), applied(v1.ReasonApplied, "applied")),
			want: Handled,
		},
		"unappliable after the request": {
			r:    testRelease("team-a", "podinfo", applied(v1.ReasonUnappliable, "template error at line 3")),
			want: Failed, msg: "sync failed: Unappliable: template error at line 3",
		},
		"a commit that failed its verification after the request": {
			r:    testRelease("team-a", "podinfo", applied(v1.ReasonVerificationFailed, "commit 4abdd2c3ec0f: NoSignature")),
			want: Failed, msg: "sync failed: VerificationFailed: commit 4abdd2c3ec0f: NoSignature",
		},
		"the same failure as before the request, still fresh": {
			r: baseline, want: Waiting,
		},
		"the same failure as before the request, after the freshness": {
			r: baseline, at: requested.Add(defaultFreshness), want: Failed, msg: "sync failed: Unappliable: old failure",
		},
		"the same failure, but the forced request is handled": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonUnappliable, "old failure"), func(r *v1.Release) {
				r.Status.LastHandledForceSyncAt = &same
			}),
			force: true, want: Failed,
		},
		"hook failed": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonHookFailed, "Job migrate failed.")), want: Failed,
		},
		"verification failed": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonVerificationFailed, "Verifying chart podinfo-6.5.0.tgz: NoSignature.")), want: Failed,
			msg: "sync failed: VerificationFailed: Verifying chart podinfo-6.5.0.tgz: NoSignature.",
		},
		"pinned holds the request": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonPinned, "Pinned to sha256:4f1c.")), want: Failed, msg: "sync held: Pinned: Pinned to sha256:4f1c.",
		},
		"rolled back holds the request": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonRolledBack, "Rolled back.")), want: Failed,
		},
		"transient failure keeps waiting": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonSourceNotReady, "503")), want: Waiting, msg: v1.ReasonSourceNotReady,
		},
		"sync waves keep waiting": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonWaitingForSyncWave, "wave 1"), wave(1, 2)), want: Waiting,
		},
		"cluster wave keeps waiting": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonWaitingForClusterWave, "redis first")), want: Waiting,
		},
		"status of an older generation is not the answer": {
			r: testRelease("team-a", "podinfo", applied(v1.ReasonUnappliable, "x"), func(r *v1.Release) { r.Generation = 2 }), want: Waiting,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := SyncWait{At: requested, Force: tc.force, Baseline: statusFingerprint(baseline)}
			judgeAt := tc.at
			if judgeAt.IsZero() {
				judgeAt = now
			}
			got, msg := w.Judge(tc.r, judgeAt)
			if got != tc.want {
				t.Fatalf("Judge = %v (%s), want %v", got, msg, tc.want)
			}
			if tc.msg != "" && msg != tc.msg {
				t.Errorf("message = %q, want %q", msg, tc.msg)
			}
		})
	}
}

func progressRelease() *v1.Release {
	return testRelease("team-a", "podinfo", rendered(refB, "6.7.1"),
		applied(v1.ReasonWaitingForHooks, "hooks"), healthy(v1.ReasonProgressing), wave(1, 3),
		hooks(v1.HookStatus{Name: "migrate", Phase: v1.HookJobSucceeded}, v1.HookStatus{Name: "notify", Batch: 1, Phase: v1.HookJobRunning}),
		rollout(v1.RolloutProgressing, refB, refA, ""))
}

func TestProgressLine(t *testing.T) {
	var b strings.Builder
	for _, tc := range []struct {
		name    string
		r       *v1.Release
		elapsed time.Duration
		width   int
		term    Terminal
	}{
		{name: "not reconciled", r: testRelease("team-a", "podinfo")},
		{name: "waves hooks health rollout", r: progressRelease()},
		{name: "with elapsed", r: progressRelease(), elapsed: 12*time.Second + 300*time.Millisecond},
		{name: "cut to 40", r: progressRelease(), elapsed: 3 * time.Second, width: 40},
		{name: "coloured", r: progressRelease(), term: Terminal{TTY: true, Color: true}},
		{name: "coloured cut to 40", r: progressRelease(), width: 40, term: Terminal{TTY: true, Color: true}},
	} {
		line := ProgressLine(tc.r, tc.elapsed, tc.width, tc.term)
		if tc.width > 0 && visibleWidth(line) > tc.width {
			t.Errorf("%s: %d visible characters, want at most %d", tc.name, visibleWidth(line), tc.width)
		}
		b.WriteString(tc.name + ": " + line + "\n")
	}
	golden(t, "progress_line", b.String())
}

// On a terminal the line is rewritten in place; piped, each change is one plain line
// and nothing repeats.
func TestProgressWriter(t *testing.T) {
	steps := []string{"a · wave 1/2", "a · wave 1/2", "a · wave 2/2", "a"}
	for _, tc := range []struct {
		name string
		term Terminal
	}{
		{"tty", Terminal{TTY: true, Color: true}},
		{"tty_no_color", Terminal{TTY: true}},
		{"piped", Terminal{}},
	} {
		var b strings.Builder
		p := &Progress{Terminal: tc.term}
		for i, s := range steps {
			p.Update(&b, s+strings.Repeat(".", i), s)
		}
		p.Finish(&b, "done")
		golden(t, "progress_writer_"+tc.name, b.String())
		if !tc.term.TTY && strings.ContainsAny(b.String(), "\r\x1b") {
			t.Errorf("piped progress has control characters: %q", b.String())
		}
		if !tc.term.Color && strings.Contains(b.String(), "\x1b") {
			t.Errorf("progress without colour has escape codes: %q", b.String())
		}
	}
}
