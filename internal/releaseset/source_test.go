package releaseset

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/source"
)

func cmRef(name, key string) v1.ValuesReference {
	return v1.ValuesReference{Kind: v1.ValuesSourceConfigMap, Name: name, Key: key}
}

func TestValuesDigest(t *testing.T) {
	a := valuesRead{Ref: cmRef("a", ""), Found: true, Data: []byte("x: 1\n")}
	base := valuesDigest([]valuesRead{a})
	cases := map[string]struct {
		reads []valuesRead
		same  bool
	}{
		"the same data under another object name (the name is the template's)": {
			reads: []valuesRead{{Ref: cmRef("b", ""), Found: true, Data: []byte("x: 1\n")}}, same: true,
		},
		"the key named as it defaults": {
			reads: []valuesRead{{Ref: cmRef("a", "values.yaml"), Found: true, Data: []byte("x: 1\n")}}, same: true,
		},
		"other data":  {reads: []valuesRead{{Ref: cmRef("a", ""), Found: true, Data: []byte("x: 2\n")}}},
		"another key": {reads: []valuesRead{{Ref: cmRef("a", "other"), Found: true, Data: []byte("x: 1\n")}}},
		"a Secret instead of a ConfigMap": {
			reads: []valuesRead{{Ref: v1.ValuesReference{Kind: v1.ValuesSourceSecret, Name: "a"}, Found: true, Data: []byte("x: 1\n")}},
		},
		"missing (optional) rather than empty": {reads: []valuesRead{{Ref: cmRef("a", "")}}},
		"an entry more":                        {reads: []valuesRead{a, {Ref: cmRef("a", ""), Found: true}}},
		"data split otherwise between entries": {
			reads: []valuesRead{{Ref: cmRef("a", ""), Found: true, Data: []byte("x: ")}, {Ref: cmRef("a", ""), Found: true, Data: []byte("1\n")}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := valuesDigest(c.reads)
			if !strings.HasPrefix(got, "sha256:") || len(got) != len("sha256:")+64 {
				t.Fatalf("digest %q, want sha256:<64 hex>", got)
			}
			if (got == base) != c.same {
				t.Errorf("digest %s, of the base %s: same %t, want %t", got, base, got == base, c.same)
			}
		})
	}
}

func TestCopyName(t *testing.T) {
	d1, d2 := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	names := map[string]bool{}
	for _, n := range []string{copyName("web", d1, 0), copyName("web", d1, 1), copyName("web", d2, 0), copyName("api", d1, 0)} {
		if names[n] {
			t.Errorf("name %s twice", n)
		}
		names[n] = true
	}
	if got := copyName("web", d1, 0); !strings.HasPrefix(got, "web-values-") || len(got) != len("web-values-")+copyHex || got != copyName("web", d1, 0) {
		t.Errorf("copyName = %q, want web-values-<10 hex>, the same each time", got)
	}
	long := strings.Repeat("s", 250)
	if got := copyName(long, d1, 0); len(got) > maxCopyNameLength || !strings.Contains(got, "-values-") {
		t.Errorf("copyName of a long set = %q (%d), want at most %d characters", got, len(got), maxCopyNameLength)
	}
}

func TestValuesCopy(t *testing.T) {
	set := testSet("web")
	digest := "sha256:" + strings.Repeat("c", 64)
	meta := metav1.ObjectMeta{
		Namespace: "team-a", Name: copyName("web", digest, 0),
		Labels: map[string]string{v1.LabelReleaseSet: "web"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: v1.SchemeGroupVersion.String(), Kind: "ReleaseSet", Name: "web", UID: set.UID,
		}},
	}
	cases := map[string]struct {
		read valuesRead
		want client.Object
	}{
		"a ConfigMap's key, under its key": {
			read: valuesRead{Ref: cmRef("base", "prod.yaml"), Found: true, Data: []byte("x: 1\n")},
			want: &corev1.ConfigMap{ObjectMeta: meta, Immutable: ptr.To(true), Data: map[string]string{"prod.yaml": "x: 1\n"}},
		},
		"a ConfigMap's key that is not text, in binaryData": {
			read: valuesRead{Ref: cmRef("base", ""), Found: true, Data: []byte{0xff, 0xfe}},
			want: &corev1.ConfigMap{ObjectMeta: meta, Immutable: ptr.To(true), BinaryData: map[string][]byte{"values.yaml": {0xff, 0xfe}}},
		},
		"a Secret stays a Secret": {
			read: valuesRead{Ref: v1.ValuesReference{Kind: v1.ValuesSourceSecret, Name: "creds"}, Found: true, Data: []byte("token: t\n")},
			want: &corev1.Secret{ObjectMeta: meta, Immutable: ptr.To(true), Type: corev1.SecretTypeOpaque,
				Data: map[string][]byte{"values.yaml": []byte("token: t\n")}},
		},
		"an optional entry that found nothing: an empty copy": {
			read: valuesRead{Ref: v1.ValuesReference{Kind: v1.ValuesSourceConfigMap, Name: "maybe", Optional: true}},
			want: &corev1.ConfigMap{ObjectMeta: meta, Immutable: ptr.To(true)},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, valuesCopy(set, digest, 0, c.read)); diff != "" {
				t.Errorf("valuesCopy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPin(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	digest := "sha256:" + strings.Repeat("d", 64)
	repo := v1.ChartSource{Repository: "https://charts.example.com", Name: "web", Version: ">=1.0.0 <2.0.0"}
	git := v1.ChartSource{Git: &v1.GitChartSource{URL: "https://git.example.com/web.git", Path: "chart", Ref: v1.GitRef{Branch: "main"}}}
	cases := map[string]struct {
		spec v1.ReleaseSpec
		src  *v1.ReleaseSetSource
		want v1.ReleaseSpec
	}{
		"no source: as written": {spec: v1.ReleaseSpec{Chart: repo}, want: v1.ReleaseSpec{Chart: repo}},
		"a range: the exact version": {
			spec: v1.ReleaseSpec{Chart: repo}, src: &v1.ReleaseSetSource{ChartVersion: "1.4.2"},
			want: v1.ReleaseSpec{Chart: v1.ChartSource{Repository: repo.Repository, Name: "web", Version: "1.4.2"}},
		},
		"a branch: the commit, and nothing else of the ref": {
			spec: v1.ReleaseSpec{Chart: git}, src: &v1.ReleaseSetSource{Commit: commit},
			want: v1.ReleaseSpec{Chart: v1.ChartSource{Git: &v1.GitChartSource{URL: git.Git.URL, Path: "chart", Ref: v1.GitRef{Commit: commit}}}},
		},
		"valuesFrom: each entry reads its copy, with its kind, key and optional": {
			spec: v1.ReleaseSpec{Chart: repo, ValuesFrom: []v1.ValuesReference{cmRef("base", "prod.yaml"),
				{Kind: v1.ValuesSourceSecret, Name: "creds", Optional: true}}},
			src: &v1.ReleaseSetSource{ChartVersion: "1.4.2", ValuesDigest: digest},
			want: v1.ReleaseSpec{Chart: v1.ChartSource{Repository: repo.Repository, Name: "web", Version: "1.4.2"},
				ValuesFrom: []v1.ValuesReference{cmRef(copyName("web", digest, 0), "prod.yaml"),
					{Kind: v1.ValuesSourceSecret, Name: copyName("web", digest, 1), Optional: true}}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := *c.spec.DeepCopy()
			pin(&got, "web", c.src)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("pin (-want +got):\n%s", diff)
			}
		})
	}
}

// Decide pins the source into each Release it writes and holds the Releases when the
// source of the template is unknown.
func TestDecideSource(t *testing.T) {
	src1 := &v1.ReleaseSetSource{ChartVersion: "1.0.0"}
	src2 := &v1.ReleaseSetSource{ChartVersion: "1.1.0"}
	withRange := func(s *v1.ReleaseSet) { s.Spec.Template.Spec.Chart.Version = ">=1.0.0" }
	at := func(src *v1.ReleaseSetSource) func(*v1.ReleaseSet) {
		return func(s *v1.ReleaseSet) {
			s.Status.Revision = Revision(s.Spec.Template, s.Spec.ClusterOverrides, src)
			s.Status.Source = src.DeepCopy()
		}
	}
	// relAt is the set's Release of cluster at src, Ready.
	relAt := func(set *v1.ReleaseSet, cluster string, src *v1.ReleaseSetSource) v1.Release {
		b := builder{set: set, rev: Revision(set.Spec.Template, set.Spec.ClusterOverrides, src), source: src}
		r := b.release(cluster)
		r.Generation = 1
		ready()(r)
		return *r
	}
	resolveErr := errors.New("GET https://charts.example.com/index.yaml: cannot connect")
	type out struct {
		Writes     []string
		Revision   string
		Source     *v1.ReleaseSetSource
		Conditions []string
	}
	cases := map[string]struct {
		set      *v1.ReleaseSet
		releases func(*v1.ReleaseSet) []v1.Release
		source   *v1.ReleaseSetSource
		err      error
		want     out
	}{
		"a new version in the range is a new revision: the first stage gets it, pinned": {
			set: testSet("web", stages(canary(), manualRest()), withRange, at(src1)),
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{relAt(s, "c1", src1), relAt(s, "c2", src1), relAt(s, "c3", src1), relAt(s, "c4", src1)}
			},
			source: src2,
			want: out{Writes: []string{"web-c1 1.1.0"}, Source: src2,
				Conditions: []string{"Ready=False/Progressing", "Progressing=True/Progressing", "Halted=False/NotHalted"}},
		},
		"steady: the same source writes nothing": {
			set: testSet("web", stages(canary(), manualRest()), withRange, at(src1),
				approvals(v1.StageApproval{Stage: "rest", Revision: Revision(testSet("web", withRange).Spec.Template, nil, src1)})),
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{relAt(s, "c1", src1), relAt(s, "c2", src1), relAt(s, "c3", src1), relAt(s, "c4", src1)}
			},
			source: src1,
			want: out{Source: src1,
				Conditions: []string{"Ready=True/RolloutComplete", "Progressing=False/RolloutComplete", "Halted=False/NotHalted"}},
		},
		"a failed resolution with the source last resolved goes on with it and says so": {
			set: testSet("web", stages(canary(), manualRest()), withRange, at(src1)),
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{relAt(s, "c1", src1)}
			},
			source: src1, err: resolveErr,
			want: out{Writes: []string{"web-c2 1.0.0"}, Source: src1,
				Conditions: []string{"Ready=False/Progressing", "Progressing=False/SourceNotReady", "Halted=False/NotHalted"}},
		},
		"a failed resolution with no source known holds every Release and keeps the status's revision and source": {
			set: testSet("web", stages(canary(), manualRest()), withRange, at(src1), values(`{"replicas":3}`)),
			releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{relAt(s, "c1", src1)}
			},
			err: resolveErr,
			want: out{Source: src1, Revision: "kept",
				Conditions: []string{"Ready=False/SourceNotReady", "Progressing=False/SourceNotReady", "Halted=False/NotHalted"}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var rels []v1.Release
			if c.releases != nil {
				rels = c.releases(c.set)
			}
			p := Decide(Input{Set: c.set, Clusters: fleet, Releases: rels, Source: c.source, SourceErr: c.err})
			var got out
			for _, r := range append(p.Create, p.Update...) {
				got.Writes = append(got.Writes, r.Name+" "+r.Spec.Chart.Version)
				if want := Revision(c.set.Spec.Template, c.set.Spec.ClusterOverrides, c.source); r.Annotations[v1.AnnotationReleaseSetRevision] != want {
					t.Errorf("Release %s at %s, want %s", r.Name, r.Annotations[v1.AnnotationReleaseSetRevision], want)
				}
			}
			got.Source = p.Status.Source
			for _, cond := range p.Status.Conditions {
				got.Conditions = append(got.Conditions, cond.Type+"="+string(cond.Status)+"/"+cond.Reason)
			}
			if c.want.Revision == "kept" {
				got.Revision = "kept"
				if p.Status.Revision != c.set.Status.Revision {
					t.Errorf("status.revision %s, want the one kept %s", p.Status.Revision, c.set.Status.Revision)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeResolver counts resolutions and answers version or err.
type fakeResolver struct {
	calls   int
	version string
	err     error
}

func (f *fakeResolver) Resolve(context.Context, v1.ChartSource, time.Duration, *source.Credentials) (source.Resolved, error) {
	f.calls++
	return source.Resolved{ChartVersion: f.version}, f.err
}

// A set resolves its source once per interval however often it is reconciled, again
// at once when its inputs change, and at backoff after a failure, keeping the source
// resolved last from the same inputs.
func TestSourceSchedule(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	res := &fakeResolver{version: "1.0.0"}
	r := &Reconciler{clock: clk, resolver: res, schedule: &sourceSchedule{}}
	set := testSet("web", func(s *v1.ReleaseSet) {
		s.Spec.Template.Spec.Chart.Version = ">=1.0.0"
		s.Spec.Template.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: 30 * time.Second}
	})
	type step struct {
		Calls   int
		Version string
		Err     bool
		After   time.Duration
	}
	do := func() step {
		src, err, after, _ := r.source(ctx, set)
		s := step{Calls: res.calls, Err: err != nil, After: after}
		if src != nil {
			s.Version = src.ChartVersion
		}
		return s
	}
	check := func(what string, want step) {
		t.Helper()
		if diff := cmp.Diff(want, do()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("first reconcile", step{Calls: 1, Version: "1.0.0", After: 30 * time.Second})
	clk.Step(10 * time.Second)
	check("within the interval", step{Calls: 1, Version: "1.0.0", After: 20 * time.Second})
	res.version = "1.1.0"
	clk.Step(20 * time.Second)
	check("at the interval", step{Calls: 2, Version: "1.1.0", After: 30 * time.Second})
	res.err = errors.New("down")
	clk.Step(30 * time.Second)
	check("a failure keeps the last source, retries at backoff", step{Calls: 3, Version: "1.1.0", Err: true, After: 5 * time.Second})
	clk.Step(5 * time.Second)
	check("the backoff doubles", step{Calls: 4, Version: "1.1.0", Err: true, After: 10 * time.Second})
	set.Spec.Template.Spec.Chart.Version = ">=2.0.0"
	check("new inputs resolve at once; the source of other inputs is not kept", step{Calls: 5, Err: true, After: 5 * time.Second})
	res.err = nil
	set.Spec.Template.Spec.Chart.Version = "1.0.0"
	set.Spec.Template.Spec.ValuesFrom = nil
	check("nothing to resolve: no source, no schedule", step{Calls: 5})
}
