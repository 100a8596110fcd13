package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
)

// syncRelease is the manual Release of the 10-object chart (testdata/configs) whose
// /sync → Applied latency the bench measures.
const syncRelease = "configs"

// chartsDir is a temporary folder with the charts of bench/controller/testdata
// (podinfo) and of bench/e2e/testdata (configs), served as one repository.
func chartsDir(root string) (string, error) {
	dir, err := os.MkdirTemp("", "convoy-bench-e2e-charts-")
	if err != nil {
		return "", err
	}
	for _, from := range []string{filepath.Join(root, "bench", "controller", "testdata"), filepath.Join(root, "bench", "e2e", "testdata")} {
		if err := copyTree(from, dir); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// syncResult is the /sync → Applied latency of one manual Release.
type syncResult struct {
	objects       int
	syncs         int
	p50, p99, max time.Duration
	load          string // load average before
}

// createSyncRelease creates the manual Release of testdata/configs and waits until
// it is WaitingForSync.
func (e *env) createSyncRelease(ctx context.Context) error {
	rel := &convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: syncRelease, Labels: e.shardLabel},
		Spec:       convoyv1alpha1.ReleaseSpec{Chart: convoyv1alpha1.ChartSource{Repository: e.Charts.URL, Name: "configs", Version: "1.0.0"}},
	}
	created := &convoyv1alpha1.Release{}
	if err := e.author.Post().Namespace(namespace).Resource("releases").Body(rel).Do(ctx).Into(created); err != nil {
		return fmt.Errorf("creating Release %s/%s: %w", namespace, syncRelease, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	next, stop, err := e.watchSyncRelease(wctx, created.ResourceVersion)
	if err != nil {
		return err
	}
	defer stop()
	for {
		r, _, err := next()
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(r.Status.Conditions, convoyv1alpha1.ConditionApplied); c != nil && c.Reason == convoyv1alpha1.ReasonWaitingForSync {
			return nil
		}
	}
}

// watchSyncRelease watches the Release of createSyncRelease from rv; next returns its
// next state seen, with the time it arrived.
func (e *env) watchSyncRelease(ctx context.Context, rv string) (next func() (*convoyv1alpha1.Release, time.Time, error), stop func(), err error) {
	wi, err := e.Convoy.Get().Namespace(namespace).Resource("releases").
		Param("watch", "true").Param("resourceVersion", rv).Watch(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("watching Release %s: %w", syncRelease, err)
	}
	next = func() (*convoyv1alpha1.Release, time.Time, error) {
		for {
			select {
			case <-ctx.Done():
				return nil, time.Time{}, fmt.Errorf("no change of Release %s/%s on the watch: %w", namespace, syncRelease, ctx.Err())
			case ev, ok := <-wi.ResultChan():
				if !ok || ev.Type == watch.Error {
					return nil, time.Time{}, fmt.Errorf("the watch of Release %s/%s ended", namespace, syncRelease)
				}
				if r, ok := ev.Object.(*convoyv1alpha1.Release); ok && r.Name == syncRelease {
					return r, time.Now(), nil
				}
			}
		}
	}
	return next, wi.Stop, nil
}

// timeSyncs sends count /syncs to the Release of createSyncRelease one after the other
// as the author, each after the previous one was handled, and times each from the
// moment the request is sent to the first watch event of the Release with
// status.lastHandledSyncAt at or after the value the /sync wrote and Applied=True (the
// controller applied the render: a GET and a dry run per object, nothing to change,
// and the status write). Each may take up to perSync.
func (e *env) timeSyncs(ctx context.Context, count int, perSync time.Duration) (*syncResult, error) {
	res := &syncResult{objects: 10, syncs: count, load: benchenv.LoadAvg()}
	cur := &convoyv1alpha1.Release{}
	if err := e.Convoy.Get().Namespace(namespace).Resource("releases").Name(syncRelease).Do(ctx).Into(cur); err != nil {
		return nil, fmt.Errorf("reading Release %s/%s: %w", namespace, syncRelease, err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(count)*perSync)
	defer cancel()
	next, stop, err := e.watchSyncRelease(wctx, cur.ResourceVersion)
	if err != nil {
		return nil, err
	}
	defer stop()
	var lats []time.Duration
	for i := range count {
		sent := time.Now()
		synced := &convoyv1alpha1.Release{}
		if err := e.author.Post().Namespace(namespace).Resource("releases").Name(syncRelease).SubResource("sync").Do(wctx).Into(synced); err != nil {
			return nil, fmt.Errorf("/sync %d of Release %s: %w", i+1, syncRelease, err)
		}
		want, err := time.Parse(time.RFC3339, synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt])
		if err != nil {
			return nil, fmt.Errorf("/sync %d answered %s=%q: %w", i+1, convoyv1alpha1.AnnotationSyncRequestedAt, synced.Annotations[convoyv1alpha1.AnnotationSyncRequestedAt], err)
		}
		for {
			r, at, err := next()
			if err != nil {
				return nil, err
			}
			h := r.Status.LastHandledSyncAt
			if h != nil && !h.Time.Before(want) && meta.IsStatusConditionTrue(r.Status.Conditions, convoyv1alpha1.ConditionApplied) {
				lats = append(lats, at.Sub(sent))
				break
			}
		}
	}
	slices.Sort(lats)
	res.p50, res.p99, res.max = lats[len(lats)/2], lats[min(len(lats)-1, len(lats)*99/100)], lats[len(lats)-1]
	return res, nil
}
