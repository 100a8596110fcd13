package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

func TestDeletionRequeue(t *testing.T) {
	cases := map[string]struct {
		stop     *policy.Result // nil: done
		interval time.Duration
		want     reconcile.Result
	}{
		"done":                           {want: reconcile.Result{}},
		"delete hooks run":               {stop: &policy.Result{Reason: v1.ReasonWaitingForHooks}, interval: time.Minute, want: reconcile.Result{RequeueAfter: deletionPoll}},
		"a failed delete hook, interval": {stop: &policy.Result{Reason: v1.ReasonHookFailed}, interval: 5 * time.Minute, want: reconcile.Result{RequeueAfter: 5 * time.Minute}},
		"a failed delete hook, no interval (the informer resync)": {stop: &policy.Result{Reason: v1.ReasonHookFailed}, want: reconcile.Result{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := deletionDone
			if tc.stop != nil {
				p = progressOf(tc.stop)
			}
			if diff := cmp.Diff(tc.want, deletionRequeue(p, tc.interval)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(reconcile.Result{RequeueAfter: deletionPoll}, deletionRequeue(deletionWaiting, time.Minute)); diff != "" {
		t.Errorf("objects terminating (-want +got):\n%s", diff)
	}
}

// A deletion held by a failed pre-delete hook (HookFailed) is checked again at the next
// periodic reconcile, after spec.syncPolicy.interval, not every deletionPoll (decision
// 0173): its reconciles come an interval apart, each schedules the next one an
// interval later, and none writes to the API server (events aside).
func TestAHookFailedDeletionIsCheckedAtThePeriodicReconcile(t *testing.T) {
	const every = 5 * time.Second
	counter := &requestCounter{}
	e := newEnv(t, envOptions{requests: counter})
	e.createRelease("pdf", automatic(), interval(every), chartName("pre-delete-hooks"), values(`{"failPreDelete": true}`))
	rel := e.waitApplied("pdf", "True", v1.ReasonApplied)
	if err := e.client.Delete(e.ctx, rel); err != nil {
		t.Fatal(err)
	}
	e.waitApplied("pdf", "False", v1.ReasonHookFailed)
	start := len(e.results("pdf"))
	_, log := counter.snapshot()
	from := len(log)

	const n = 3
	e.eventually(fmt.Sprintf("%d reconciles of the held deletion", n), func() (bool, string) {
		got := len(e.results("pdf")) - start
		return got >= n, fmt.Sprintf("%d reconciles", got)
	})
	held := e.results("pdf")[start:]
	for i, r := range held {
		if r.err != nil || r.res.RequeueAfter != every {
			t.Errorf("reconcile %d of the held deletion returned %+v, %v; want a requeue after %s", i, r.res, r.err, every)
		}
		if i > 0 {
			if gap := r.at.Sub(held[i-1].at); gap < every*4/5 {
				t.Errorf("reconcile %d of the held deletion came %s after the one before; want about %s (deletionPoll is %s)",
					i, gap.Round(time.Millisecond), every, deletionPoll)
			}
		}
	}
	_, log = counter.snapshot()
	for _, req := range log[from:] {
		method := req[:strings.IndexByte(req, ' ')]
		if method != "GET" && !strings.Contains(req, "/events") {
			t.Errorf("the held deletion wrote: %s", req)
		}
	}
	if e.deployment("pdf-webhook") == nil {
		t.Error("the objects were deleted although the pre-delete hook failed")
	}

	// The way out still works at once: deletionPolicy Orphan, an update event.
	e.update("pdf", func(r *v1.Release) { r.Spec.DeletionPolicy = v1.DeletionPolicyOrphan })
	e.eventually("the Release deleted", func() (bool, string) {
		err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "pdf"}, &v1.Release{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}
