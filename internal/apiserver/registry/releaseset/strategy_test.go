package releaseset

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/validation"
)

const revision = "sha256:0123456789abcdef"

func stored() *convoyv1alpha1.ReleaseSet {
	return &convoyv1alpha1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "team-a", Generation: 3,
			Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"a": "1"}},
		Spec: convoyv1alpha1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			Template: convoyv1alpha1.ReleaseTemplate{Spec: convoyv1alpha1.ReleaseSpec{
				Chart:  convoyv1alpha1.ChartSource{Repository: "https://c", Name: "podinfo"},
				Values: &runtime.RawExtension{Raw: []byte(`{"a":1,"b":2}`)},
			}},
			Strategy: convoyv1alpha1.ReleaseSetStrategy{Stages: []convoyv1alpha1.Stage{{Name: "rest", Approval: convoyv1alpha1.ApprovalManual}}},
		},
		Approvals:              []convoyv1alpha1.StageApproval{{Stage: "rest", Revision: revision, ApprovedBy: "alice"}},
		RemovalAcknowledgement: &convoyv1alpha1.RemovalAcknowledgement{Releases: []string{"web-c2"}, AcknowledgedBy: "alice"},
		Status:                 convoyv1alpha1.ReleaseSetStatus{ObservedGeneration: 3, Revision: revision},
	}
}

func TestMainStrategyUpdate(t *testing.T) {
	cases := map[string]struct {
		change         func(*convoyv1alpha1.ReleaseSet)
		wantGeneration int64
		want           func(*convoyv1alpha1.ReleaseSet) // the stored result, from stored()
	}{
		"a template change bumps the generation": {
			change:         func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Template.Spec.Chart.Version = "6.7.2" },
			wantGeneration: 4,
			want:           func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Template.Spec.Chart.Version = "6.7.2" },
		},
		"a strategy change bumps the generation": {
			change: func(s *convoyv1alpha1.ReleaseSet) {
				s.Spec.Strategy.Stages[0].Approval = convoyv1alpha1.ApprovalAutomatic
			},
			wantGeneration: 4,
			want: func(s *convoyv1alpha1.ReleaseSet) {
				s.Spec.Strategy.Stages[0].Approval = convoyv1alpha1.ApprovalAutomatic
			},
		},
		"equal values in another order do not": {
			change: func(s *convoyv1alpha1.ReleaseSet) {
				s.Spec.Template.Spec.Values = &runtime.RawExtension{Raw: []byte(`{ "b": 2, "a": 1 }`)}
			},
			wantGeneration: 3,
			want: func(s *convoyv1alpha1.ReleaseSet) {
				s.Spec.Template.Spec.Values = &runtime.RawExtension{Raw: []byte(`{ "b": 2, "a": 1 }`)}
			},
		},
		"labels and annotations do not": {
			change:         func(s *convoyv1alpha1.ReleaseSet) { s.Labels, s.Annotations = nil, map[string]string{"b": "2"} },
			wantGeneration: 3,
			want:           func(s *convoyv1alpha1.ReleaseSet) { s.Labels, s.Annotations = nil, map[string]string{"b": "2"} },
		},
		"a pause bumps the generation": {
			change:         func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Paused = true },
			wantGeneration: 4,
			want:           func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Paused = true },
		},
		"approvals, the removal acknowledgement and status are kept": {
			change: func(s *convoyv1alpha1.ReleaseSet) {
				s.Approvals = append(s.Approvals, convoyv1alpha1.StageApproval{Stage: "rest", Revision: "sha256:ff"})
				s.RemovalAcknowledgement = &convoyv1alpha1.RemovalAcknowledgement{Releases: []string{"web-c1", "web-c3"}}
				s.Status = convoyv1alpha1.ReleaseSetStatus{Revision: "sha256:ff"}
			},
			wantGeneration: 3,
			want:           func(*convoyv1alpha1.ReleaseSet) {},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := stored()
			in := stored()
			tc.change(in)
			newStrategy(nil, validation.ReleaseOptions{}).PrepareForUpdate(context.Background(), in, old)
			want := stored()
			tc.want(want)
			want.Generation = tc.wantGeneration
			if diff := cmp.Diff(want, in); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMainStrategyCreateDropsStatusAndApprovals(t *testing.T) {
	in := stored()
	newStrategy(nil, validation.ReleaseOptions{}).PrepareForCreate(context.Background(), in)
	if in.Generation != 1 || in.Approvals != nil || in.RemovalAcknowledgement != nil || !cmp.Equal(in.Status, convoyv1alpha1.ReleaseSetStatus{}) {
		t.Errorf("after create: generation %d, approvals %v, status %+v; want 1 and neither", in.Generation, in.Approvals, in.Status)
	}
}

func TestStatusStrategyWritesOnlyStatus(t *testing.T) {
	old := stored()
	in := stored()
	in.Spec.Template.Spec.Chart.Version = "9"
	in.Labels = map[string]string{"x": "y"}
	in.Approvals = nil
	in.RemovalAcknowledgement = nil
	in.Generation = 7
	in.Status = convoyv1alpha1.ReleaseSetStatus{ObservedGeneration: 3, Revision: revision,
		Stages: []convoyv1alpha1.StageStatus{{Name: "rest", Phase: convoyv1alpha1.StageWaitingForApproval, Clusters: 2}}}
	statusStrategy{newStrategy(nil, validation.ReleaseOptions{})}.PrepareForUpdate(context.Background(), in, old)
	want := stored()
	want.Status = in.Status
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("a /status write changed more than status (-want +got):\n%s", diff)
	}
}

func TestWritesReleases(t *testing.T) {
	cases := map[string]struct {
		change func(*convoyv1alpha1.ReleaseSet)
		old    func(*convoyv1alpha1.ReleaseSet)
		want   bool
	}{
		"a create (nothing stored)": {old: func(s *convoyv1alpha1.ReleaseSet) { *s = convoyv1alpha1.ReleaseSet{} }, want: true},
		"a template change":         {change: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Template.Spec.Chart.Version = "2" }, want: true},
		"a selector change": {change: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}
		}, want: true},
		"labels, annotations, finalizers": {change: func(s *convoyv1alpha1.ReleaseSet) {
			s.Labels, s.Annotations, s.Finalizers = map[string]string{"x": "y"}, nil, []string{"foregroundDeletion"}
		}},
		"equal values in another order": {change: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"b":2, "a":1}`)}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, obj := stored(), stored()
			old.ResourceVersion, obj.ResourceVersion = "7", "7"
			if tc.old != nil {
				tc.old(old)
			}
			if tc.change != nil {
				tc.change(obj)
			}
			if got := WritesReleases(obj, old); got != tc.want {
				t.Errorf("WritesReleases = %v, want %v", got, tc.want)
			}
		})
	}
}
