package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// ReleaseSet reads the ReleaseSet ns/name and fails t if it cannot.
func ReleaseSet(t testing.TB, ctx context.Context, c client.Client, ns, name string) *v1.ReleaseSet {
	t.Helper()
	s := &v1.ReleaseSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatalf("get ReleaseSet %s: %v", name, err)
	}
	return s
}

// SetReleases are the Releases of the ReleaseSet ns/set, by name.
func SetReleases(t testing.TB, ctx context.Context, c client.Client, ns, set string) map[string]v1.Release {
	t.Helper()
	list := &v1.ReleaseList{}
	if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{v1.LabelReleaseSet: set}); err != nil {
		t.Fatal(err)
	}
	out := map[string]v1.Release{}
	for _, r := range list.Items {
		out[r.Name] = r
	}
	return out
}

// UpdateTemplate changes the template of the ReleaseSet ns/name, again after a
// conflict, for at most 30 s.
func UpdateTemplate(t testing.TB, ctx context.Context, c client.Client, ns, name string, change func(*v1.ReleaseTemplate)) {
	t.Helper()
	Eventually(t, ctx, "update of ReleaseSet "+name, 30*time.Second, func() (bool, string) {
		s := ReleaseSet(t, ctx, c, ns, name)
		change(&s.Spec.Template)
		if err := c.Update(ctx, s); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// Phases says where the rollout of s stands: "canary Complete, rest Waiting".
func Phases(s *v1.ReleaseSet) string {
	var parts []string
	for _, st := range s.Status.Stages {
		parts = append(parts, fmt.Sprintf("%s %s", st.Name, st.Phase))
	}
	return strings.Join(parts, ", ")
}

// Conditions are cs in one line: "Type=Status/Reason (message); …".
func Conditions(cs []metav1.Condition) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s/%s (%s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}

// WaitPhases waits, for at most timeout, until the status of the ReleaseSet ns/name
// describes its generation, at another revision than not, with the stage phases want
// ("canary Complete, rest Waiting"), and returns the set.
func WaitPhases(t testing.TB, ctx context.Context, c client.Client, ns, name, not, want string, timeout time.Duration) *v1.ReleaseSet {
	t.Helper()
	var s *v1.ReleaseSet
	Eventually(t, ctx, fmt.Sprintf("ReleaseSet %s: %s", name, want), timeout, func() (bool, string) {
		s = ReleaseSet(t, ctx, c, ns, name)
		got := Phases(s)
		return s.Status.ObservedGeneration == s.Generation && s.Status.Revision != not && got == want,
			fmt.Sprintf("generation %d, status of %d at %s: %s; conditions %s", s.Generation, s.Status.ObservedGeneration,
				s.Status.Revision, got, Conditions(s.Status.Conditions))
	})
	return s
}

// ReadyAt says whether rel is Ready at the ReleaseSet revision rev, as the ReleaseSet
// contract defines it.
func ReadyAt(rel *v1.Release, rev string) bool {
	return rel.Annotations[v1.AnnotationReleaseSetRevision] == rev && rel.Generation == rel.Status.ObservedGeneration &&
		apimeta.IsStatusConditionTrue(rel.Status.Conditions, v1.ConditionReady)
}

// WatchRevisions watches the Releases of the ReleaseSet ns/set until the end of the
// test and calls seen, from one goroutine, with each Release the watch shows (not the
// deleted ones), the latest of each Release the watch has shown so far (rel among
// them) and whether rel's revision differs from the one the watch showed before. One
// resource's watch is in resourceVersion order.
func WatchRevisions(t testing.TB, ctx context.Context, c client.WithWatch, ns, set string, seen func(rel *v1.Release, latest map[string]*v1.Release, changed bool)) {
	t.Helper()
	w, err := c.Watch(ctx, &v1.ReleaseList{}, client.InNamespace(ns), client.MatchingLabels{v1.LabelReleaseSet: set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		latest := map[string]*v1.Release{}
		for ev := range w.ResultChan() {
			rel, ok := ev.Object.(*v1.Release)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(latest, rel.Name)
				continue
			}
			rev := rel.Annotations[v1.AnnotationReleaseSetRevision]
			var before string
			if prev := latest[rel.Name]; prev != nil {
				before = prev.Annotations[v1.AnnotationReleaseSetRevision]
			}
			latest[rel.Name] = rel
			seen(rel, latest, rev != before)
		}
	}()
}
