package render

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kumodo.io/convoy/api/v1alpha1"
)

func TestNewRenderObject(t *testing.T) {
	repo := chartServer(t)
	r, _ := testRenderer(t)
	rel := testRelease("web", repo.url(), "web")
	res := renderOK(t, r, Request{Release: rel, Revision: 4})

	got, err := NewRenderObject(rel, res)
	if err != nil {
		t.Fatal(err)
	}
	hex := strings.TrimPrefix(res.Ref, "sha256:")
	yes := true
	want := &v1alpha1.Render{
		TypeMeta: metav1.TypeMeta{APIVersion: "convoy.kumodo.io/v1alpha1", Kind: "Render"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      "web-" + hex[:10],
			Namespace: "team-a",
			Labels: map[string]string{
				v1alpha1.LabelRelease:  "web",
				v1alpha1.LabelInputs:   strings.TrimPrefix(res.Inputs, "sha256:")[:32],
				v1alpha1.LabelRevision: "4",
			},
			Annotations: map[string]string{v1alpha1.AnnotationInputs: res.Inputs},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "convoy.kumodo.io/v1alpha1", Kind: "Release", Name: "web", UID: "uid-web",
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		RenderRef:    res.Ref,
		Release:      "web",
		Chart:        v1alpha1.RenderChart{Name: "web", Version: "1.0.0"},
		ValuesDigest: res.ValuesDigest,
		ObjectCount:  3,
		Waves:        []int32{0},
		Manifests:    got.Manifests,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
	objs, _, err := DecodeManifests(got.Manifests)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ids(res.Objects), ids(objs)); diff != "" {
		t.Errorf("manifests (-rendered +stored):\n%s", diff)
	}
	again, _ := NewRenderObject(rel, res)
	if string(again.Manifests) != string(got.Manifests) {
		t.Error("the gzip'd manifests of one result differ between two calls")
	}
}

// renders builds n Renders of Release "web", render i created i minutes after a
// fixed time, with ref "sha256:r<i>".
func renders(n int) []v1alpha1.Render {
	base := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var out []v1alpha1.Render
	for i := range n {
		out = append(out, v1alpha1.Render{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("web-r%02d", i), Namespace: "team-a",
				CreationTimestamp: metav1.NewTime(base.Add(time.Duration(i) * time.Minute)),
			},
			Release:   "web",
			RenderRef: fmt.Sprintf("sha256:r%02d", i),
		})
	}
	return out
}

func names(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("web-r%02d", i))
	}
	return out
}

func TestRendersToDelete(t *testing.T) {
	release := func(f func(*v1alpha1.Release)) *v1alpha1.Release {
		rel := testRelease("web", "", "web")
		if f != nil {
			f(rel)
		}
		return rel
	}
	cases := map[string]struct {
		rel     *v1alpha1.Release
		renders []v1alpha1.Render
		want    []string
	}{
		"ten or fewer: none": {rel: release(nil), renders: renders(10), want: nil},
		"the oldest beyond ten": {
			rel: release(nil), renders: renders(14), want: names(0, 4),
		},
		"referenced renders are kept and do not count among the ten": {
			rel: release(func(r *v1alpha1.Release) {
				r.Status.Render = &v1alpha1.RenderStatus{Ref: "sha256:r00"}
				r.Status.LastSuccessful = &v1alpha1.LastSuccessful{RenderRef: "sha256:r01"}
				r.Status.Rollout = &v1alpha1.RolloutStatus{RenderRef: "sha256:r02", PreviousRenderRef: "sha256:r03"}
				r.Pin = &v1alpha1.Pin{RenderRef: "sha256:r04"}
			}),
			renders: renders(20),
			// r00..r04 kept by reference; of r05..r19 the ten newest (r10..r19) kept.
			want: names(5, 10),
		},
		"another Release's renders are never chosen": {
			rel: release(nil),
			renders: append(renders(11), v1alpha1.Render{
				ObjectMeta: metav1.ObjectMeta{Name: "other-x", Namespace: "team-a"},
				Release:    "other", RenderRef: "sha256:x",
			}),
			want: names(0, 1),
		},
		"same creation time: by name": {
			rel: release(nil),
			renders: func() []v1alpha1.Render {
				rs := renders(12)
				for i := range rs {
					rs[i].CreationTimestamp = rs[0].CreationTimestamp
				}
				return rs
			}(),
			want: names(10, 12),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := RendersToDelete(tc.rel, tc.renders)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("to delete (-want +got):\n%s", diff)
			}
		})
	}
}
