package fleet_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/render/gittest"
	"kumodo.io/convoy/internal/testenv"
)

// sourceInterval is the sets' template.spec.syncPolicy.interval: how often they
// resolve their source.
const sourceInterval = 2 * time.Second

// What moves outside a ReleaseSet's template — a chart version published in its
// range, a Git branch moved, a valuesFrom ConfigMap edited — is a new revision that
// goes through the stages: the canary's Cluster (rs-1) first, the rest (rs-2) only
// once approved, its Release at the exact version, commit and values copy it had until
// then. A set whose source did not move writes nothing.
func TestReleaseSetSourceThroughStages(t *testing.T) {
	f := startRSFleet(t,
		map[string]string{"fleet": "on", "ring": "canary"},
		map[string]string{"fleet": "on", "ring": "main"},
		map[string]string{"ring": "main"},
	)
	f.grantPromote(sourceApprover)
	t.Run("ChartVersionPublished", f.chartVersionPublished)
	t.Run("BranchMoved", f.branchMoved)
	t.Run("ValuesEdited", f.valuesEdited)
}

const sourceApprover = "release-manager"

// sourceSet is a set of f.set's over the fleet (canary, then rest by approval) that
// resolves its source every sourceInterval.
func (f *rsFleet) sourceSet(name string, change func(*v1.ReleaseTemplate)) *v1.ReleaseSet {
	s := f.set(name, map[string]string{"fleet": "on"}, `{"value":"one"}`, canaryThenManualRest()...)
	s.Spec.Template.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: sourceInterval}
	change(&s.Spec.Template)
	return s
}

// rollOut creates set and promotes its first revision to every stage.
func (f *rsFleet) rollOut(set *v1.ReleaseSet) *v1.ReleaseSet {
	f.t.Helper()
	f.create(set)
	f.waitPhases(set.Name, "", "canary Complete, rest WaitingForApproval")
	f.promote(set.Name)
	return f.waitPhases(set.Name, "", "canary Complete, rest Complete")
}

func (f *rsFleet) promote(set string) {
	f.t.Helper()
	if code, body := f.promoteAs(sourceApprover, set); code != http.StatusOK {
		f.t.Fatalf("promote %s as %s: %d %s", set, sourceApprover, code, body)
	}
}

// throughStages makes a change outside the template of set and checks that it is a
// new revision that goes through the stages: on the canary's Cluster at once
// (moved(1)), on rs-2 only after the approval, its Release at the revision before
// until then (stayed(2)). It returns the revision before and the new one.
func (f *rsFleet) throughStages(set string, change func(), moved, stayed func(i int) (bool, string)) (string, string) {
	f.t.Helper()
	before := f.getSet(set)
	rev0 := before.Status.Revision
	change()
	s := f.waitPhases(set, rev0, "canary Complete, rest WaitingForApproval")
	rev1 := s.Status.Revision
	testenv.Eventually(f.t, f.ctx, "the change on rs-1", time.Minute, func() (bool, string) { return moved(1) })
	testenv.Consistently(f.t, f.ctx, "rs-2 keeps the revision before until approved", 2*sourceInterval, func() (bool, string) {
		rel := f.releases(set)[f.release(set, 2)]
		if at := rel.Annotations[v1.AnnotationReleaseSetRevision]; at != rev0 {
			return false, fmt.Sprintf("Release %s at %s, want %s", rel.Name, at, rev0)
		}
		return stayed(2)
	})
	f.promote(set)
	f.waitPhases(set, rev0, "canary Complete, rest Complete")
	testenv.Eventually(f.t, f.ctx, "the change on rs-2 once approved", time.Minute, func() (bool, string) { return moved(2) })
	if got := f.getSet(set).Status.Revision; got != rev1 {
		f.t.Errorf("revision %s after the approval, want %s", got, rev1)
	}
	return rev0, rev1
}

// steady checks that over several intervals nothing of set is written: no Release,
// no status, no values copy.
func (f *rsFleet) steady(set string) {
	f.t.Helper()
	versions := func() map[string]string {
		out := map[string]string{"set": f.getSet(set).ResourceVersion}
		for name, r := range f.releases(set) {
			out[name] = r.ResourceVersion
		}
		cms := &corev1.ConfigMapList{}
		if err := f.c.List(f.ctx, cms, client.InNamespace(f.ns), client.MatchingLabels{v1.LabelReleaseSet: set}); err != nil {
			f.t.Fatal(err)
		}
		for _, cm := range cms.Items {
			out["configmap "+cm.Name] = cm.ResourceVersion
		}
		return out
	}
	// The Releases settle first (their status after the last rollout): the same
	// versions for two intervals.
	var last map[string]string
	var since time.Time
	testenv.Eventually(f.t, f.ctx, "ReleaseSet "+set+" settled", 2*time.Minute, func() (bool, string) {
		now := versions()
		if fmt.Sprint(now) != fmt.Sprint(last) {
			last, since = now, time.Now()
		}
		return time.Since(since) >= 2*sourceInterval, fmt.Sprint(now)
	})
	start := versions()
	testenv.Consistently(f.t, f.ctx, "no write to ReleaseSet "+set+", its Releases or copies", 4*sourceInterval, func() (bool, string) {
		now := versions()
		return fmt.Sprint(now) == fmt.Sprint(start), fmt.Sprintf("%v, before %v", now, start)
	})
}

// swappableRepo serves the chart repository of a folder and builds it again when a
// chart is published.
type swappableRepo struct {
	dir  string
	repo atomic.Pointer[chartrepo.Repository]
}

func (s *swappableRepo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.repo.Load().ServeHTTP(w, r)
}

// publish adds rsweb at version to the repository.
func (s *swappableRepo) publish(t *testing.T, version string) {
	t.Helper()
	src := "testdata/releaseset/rsweb"
	dst := filepath.Join(s.dir, "rsweb-"+version)
	for _, f := range []string{"Chart.yaml", "templates/deployment.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "Chart.yaml" {
			data = []byte(fmt.Sprintf("apiVersion: v2\nname: rsweb\nversion: %s\n", version))
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := chartrepo.Build(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	s.repo.Store(repo)
}

// (a) A chart version published in the template's range.
func (f *rsFleet) chartVersionPublished(t *testing.T) {
	f.t = t
	repo := &swappableRepo{dir: t.TempDir()}
	repo.publish(t, "0.1.0")
	srv := httptest.NewServer(repo)
	t.Cleanup(srv.Close)

	const set = "ranged"
	s := f.rollOut(f.sourceSet(set, func(tpl *v1.ReleaseTemplate) {
		tpl.Spec.Chart = v1.ChartSource{Repository: srv.URL, Name: "rsweb", Version: ">=0.1.0 <1.0.0"}
	}))
	if s.Status.Source == nil || s.Status.Source.ChartVersion != "0.1.0" {
		t.Fatalf("status.source %+v, want chartVersion 0.1.0", s.Status.Source)
	}
	at := func(version string) func(i int) (bool, string) {
		return func(i int) (bool, string) {
			rel := f.releases(set)[f.release(set, i)]
			last := ""
			if rel.Status.LastSuccessful != nil {
				last = rel.Status.LastSuccessful.ChartVersion
			}
			return rel.Spec.Chart.Version == version && last == version,
				fmt.Sprintf("Release %s: spec.chart.version %q, last successful %q", rel.Name, rel.Spec.Chart.Version, last)
		}
	}
	if ok, msg := at("0.1.0")(2); !ok {
		t.Fatalf("before the publication: %s", msg)
	}
	f.throughStages(set, func() { repo.publish(t, "0.2.0") }, at("0.2.0"), at("0.1.0"))
	if got := f.getSet(set).Status.Source; got == nil || got.ChartVersion != "0.2.0" {
		t.Errorf("status.source %+v, want chartVersion 0.2.0", got)
	}
	f.steady(set)
}

// (b) A Git branch moved.
func (f *rsFleet) branchMoved(t *testing.T) {
	f.t = t
	const user, password = "git", "secret"
	srv := gittest.NewServer(t, user, password)
	repo := srv.Repo(t, "charts")
	c1 := repo.Commit(t, "main", "one", gittest.Chart("web", "web", "1.0.0", nil))
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "git"},
		Data: map[string][]byte{"username": []byte(user), "password": []byte(password), "caFile": srv.CA()}})

	const set = "fromgit"
	s := f.rollOut(f.sourceSet(set, func(tpl *v1.ReleaseTemplate) {
		tpl.Spec.Chart = v1.ChartSource{Git: &v1.GitChartSource{URL: srv.RepoURL("charts"), Path: "web",
			Ref: v1.GitRef{Branch: "main"}, SecretRef: &v1.LocalObjectReference{Name: "git"}}}
	}))
	if s.Status.Source == nil || s.Status.Source.Commit != c1 {
		t.Fatalf("status.source %+v, want commit %s", s.Status.Source, c1)
	}
	at := func(commit, version string) func(i int) (bool, string) {
		return func(i int) (bool, string) {
			rel := f.releases(set)[f.release(set, i)]
			ref := v1.GitRef{}
			if rel.Spec.Chart.Git != nil {
				ref = rel.Spec.Chart.Git.Ref
			}
			cm, err := f.kube[f.clusters[i-1]].CoreV1().ConfigMaps(f.ns).Get(f.ctx, rel.Name+"-web", metav1.GetOptions{})
			got := ""
			switch {
			case err == nil:
				got = cm.Data["version"]
			case !apierrors.IsNotFound(err):
				return false, err.Error()
			}
			return ref == (v1.GitRef{Commit: commit}) && got == version,
				fmt.Sprintf("Release %s: ref %+v; ConfigMap's version %q", rel.Name, ref, got)
		}
	}
	c2 := ""
	f.throughStages(set, func() { c2 = repo.Commit(t, "main", "two", gittest.Chart("web", "web", "1.1.0", nil)) },
		func(i int) (bool, string) { return at(c2, "1.1.0")(i) }, at(c1, "1.0.0"))
	if got := f.getSet(set).Status.Source; got == nil || got.Commit != c2 {
		t.Errorf("status.source %+v, want commit %s", got, c2)
	}
	f.steady(set)
}

// (c) A valuesFrom ConfigMap edited; the copies no Release reads are deleted.
func (f *rsFleet) valuesEdited(t *testing.T) {
	f.t = t
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "web-values"},
		Data: map[string]string{"values.yaml": "value: from-configmap\n"}}
	f.create(cm)

	const set = "valued"
	s := f.rollOut(f.sourceSet(set, func(tpl *v1.ReleaseTemplate) {
		tpl.Spec.Values = nil
		tpl.Spec.ValuesFrom = []v1.ValuesReference{{Kind: v1.ValuesSourceConfigMap, Name: cm.Name}}
	}))
	if s.Status.Source == nil || s.Status.Source.ValuesDigest == "" {
		t.Fatalf("status.source %+v, want a valuesDigest", s.Status.Source)
	}
	f.waitDeployed(2, f.release(set, 2), "from-configmap")
	copyOf := func(i int) string {
		rel := f.releases(set)[f.release(set, i)]
		if len(rel.Spec.ValuesFrom) != 1 {
			return fmt.Sprintf("%+v", rel.Spec.ValuesFrom)
		}
		return rel.Spec.ValuesFrom[0].Name
	}
	first := copyOf(1)
	copied := &corev1.ConfigMap{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: first}, copied); err != nil {
		t.Fatalf("the values copy %s the Releases read: %v", first, err)
	}
	if copied.Immutable == nil || !*copied.Immutable || copied.Data["values.yaml"] != cm.Data["values.yaml"] || first == cm.Name {
		t.Errorf("copy %s: immutable %v, data %v; want an immutable copy of %s's data", first, copied.Immutable, copied.Data, cm.Name)
	}

	value := func(want string) func(i int) (bool, string) {
		return func(i int) (bool, string) {
			got := f.deployed(i, f.release(set, i))
			return got == want, fmt.Sprintf("Deployment on rs-%d: value %q; Release reads %s", i, got, copyOf(i))
		}
	}
	f.throughStages(set, func() {
		testenv.Eventually(t, f.ctx, "edit of ConfigMap "+cm.Name, 30*time.Second, func() (bool, string) {
			cur := &corev1.ConfigMap{}
			if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(cm), cur); err != nil {
				return false, err.Error()
			}
			cur.Data["values.yaml"] = "value: edited\n"
			if err := f.c.Update(f.ctx, cur); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	}, value("edited"), func(i int) (bool, string) {
		ok, msg := value("from-configmap")(i)
		return ok && copyOf(i) == first, msg
	})
	testenv.Eventually(t, f.ctx, "the copy no Release reads deleted", time.Minute, func() (bool, string) {
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: first}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get %s: %v", first, err)
	})
	f.steady(set)
}
