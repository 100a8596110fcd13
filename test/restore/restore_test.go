package restore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/cli"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/testenv"
)

// Backup and restore (decisions 0183, 0184), the whole cycle on real parts. Five Releases, Ready, on the host
// and on a remote Cluster; a backup by the convoy binary; then changes: two new
// Releases (one of them with an object Helm's resource policy keeps), an upgrade
// that adds objects (a cache: a ConfigMap, a Secret, a ClusterRole) and changes a
// value, one that drops objects, a deletion, and a /sync; the controller and the
// observer stopped; the restore by the convoy binary; both started again; then
// kubectl convoy orphans lists the objects of the two Releases of after the backup
// (not the kept one) and deletes them with --delete. In the end:
//   - every object each restored Release renders is on its target with the restored
//     values, and nothing else of theirs: the upgrade's additions are pruned (adopted
//     before the first prune), the upgrade's drops and the deleted Release's objects
//     are back;
//   - what was there at the backup and every Release wanted all along is the same
//     object (its UID): nothing of a live Release was deleted;
//   - each inventory lists exactly its render; each Release has the Renders of the
//     backup, none of after it;
//   - the /sync of after the backup is not replayed: the Release's request and its
//     lastHandledSyncAt are the backup's;
//   - no object of a Release that does not exist is left, but the one kept on purpose.
func TestTheTargetsEndAsTheRestoredReleasesSay(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	bin := convoyBinary(t)
	scheme, err := hostmanager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Client(t, host.RestConfig(), scheme)
	ns := testenv.Namespace(t, ctx, c, "restore", nil)
	stopConvoy := startConvoy(t, ctx, ns)
	cluster := "restore-" + testenv.RandomSuffix()
	targets := []target{newTarget(t, "", host), registerRemote(t, ctx, ns, cluster)}

	// Before the backup.
	one := values{Greeting: "one", Legacy: true}
	atBackup := map[string]release{
		"steady": {values: values{Greeting: "steady", Legacy: true, Cache: true}},
		"grow":   {cluster: cluster, values: one},
		"shrink": {cluster: cluster, values: values{Greeting: "one", Legacy: true, Cache: true}},
		"gone":   {values: one},
		"synced": {values: one, manual: true},
	}
	for _, name := range slices.Sorted(maps.Keys(atBackup)) {
		createRelease(t, ctx, c, ns, name, atBackup[name])
	}
	waitReady(t, ctx, c, ns, atBackup, 4*time.Minute)
	waitObjects(t, ctx, ns, targets, renderedAll(ns, atBackup), "the Releases applied before the backup")
	syncedAtBackup := syncAndWait(t, ctx, c, ns, "synced")
	objectsAtBackup := labelled(t, ctx, ns, targets...)
	rendersAtBackup := renders(t, ctx, c, ns)

	prefix := etcdPrefix(t, ctx)
	dir := t.TempDir()
	out := convoy(t, ctx, bin, "backup", "--etcd-servers="+host.EtcdURL(), "--etcd-prefix="+prefix, "--to="+dir)
	t.Logf("convoy backup: %s", strings.TrimSpace(out))

	// After the backup: new Releases, upgrades, a deletion, a /sync.
	later := map[string]release{
		"steady":       atBackup["steady"],
		"grow":         {cluster: cluster, values: values{Greeting: "two", Legacy: true, Cache: true}},
		"shrink":       {cluster: cluster, values: values{Greeting: "two"}},
		"synced":       atBackup["synced"],
		"fresh-host":   {values: values{Greeting: "new", Legacy: true, Cache: true}},
		"fresh-remote": {cluster: cluster, values: values{Greeting: "new", Cache: true, KeepData: true}},
	}
	for _, name := range []string{"fresh-host", "fresh-remote"} {
		createRelease(t, ctx, c, ns, name, later[name])
	}
	for _, name := range []string{"grow", "shrink"} {
		setValues(t, ctx, c, ns, name, later[name].values)
	}
	if err := c.Delete(ctx, &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone"}}); err != nil {
		t.Fatal(err)
	}
	syncedLater := syncAndWait(t, ctx, c, ns, "synced")
	if syncedLater.LastHandledSyncAt.Equal(syncedAtBackup.LastHandledSyncAt) {
		t.Fatalf("the /sync after the backup was handled at %v, as the one before it", syncedLater.LastHandledSyncAt)
	}
	testenv.Eventually(t, ctx, "Release gone deleted", 2*time.Minute, func() (bool, string) { return gone(ctx, c, ns, "gone") })
	waitReady(t, ctx, c, ns, later, 4*time.Minute)
	waitObjects(t, ctx, ns, targets, renderedAll(ns, later), "the changes after the backup applied")

	// The restore, with the controller and the observer stopped.
	stopConvoy()
	out = convoy(t, ctx, bin, "restore", "--etcd-servers="+host.EtcdURL(), "--etcd-prefix="+prefix, "--from="+dir)
	t.Logf("convoy restore: %s", strings.TrimSpace(out))
	for _, name := range []string{"fresh-host", "fresh-remote"} {
		if ok, state := gone(ctx, c, ns, name); !ok {
			t.Fatalf("after the restore: %s, want it gone (created after the backup)", state)
		}
	}
	startConvoy(t, ctx, ns)

	// The objects of the Releases of after the backup are orphans, but the one their
	// chart keeps (helm.sh/resource-policy: keep).
	kept := object{cluster, "ConfigMap", ns, "fresh-remote-data"}
	fresh := map[string]release{"fresh-host": later["fresh-host"], "fresh-remote": later["fresh-remote"]}
	orphans := slices.DeleteFunc(slices.Collect(maps.Keys(renderedAll(ns, fresh))), func(o object) bool { return o == kept })
	code, stdout, stderr := kubectlConvoy(ctx, "orphans", "-o", "json")
	if code != 0 {
		t.Fatalf("kubectl convoy orphans: exit %d: %s", code, stderr)
	}
	if d := cmp.Diff(sortObjects(orphans), listed(t, stdout, ns)); d != "" {
		t.Errorf("kubectl convoy orphans (-want +got):\n%s", d)
	}
	code, stdout, stderr = kubectlConvoy(ctx, "orphans", "--delete")
	if code != 0 {
		t.Fatalf("kubectl convoy orphans --delete: exit %d: %s%s", code, stdout, stderr)
	}
	t.Logf("kubectl convoy orphans --delete:\n%s", stdout)

	// The targets end as the restored Releases say, with the kept object only.
	want := renderedAll(ns, atBackup)
	want[kept] = map[string]string{"seed": "1"}
	waitReady(t, ctx, c, ns, atBackup, 4*time.Minute)
	final := waitObjects(t, ctx, ns, targets, want, "the targets as the restored Releases say")

	// Nothing of a live Release deleted: what every Release wanted all along is the
	// object of the backup's time.
	for name, r := range atBackup {
		now, ok := later[name]
		if !ok {
			continue
		}
		for o := range rendered(r.cluster, ns, name, r.values) {
			if _, wanted := rendered(now.cluster, ns, name, now.values)[o]; !wanted {
				continue
			}
			if got, was := final[o].UID, objectsAtBackup[o].UID; got != was {
				t.Errorf("%s of Release %s: uid %s, want %s: deleted and made again", o, name, got, was)
			}
		}
	}
	for name, r := range atBackup {
		inv := &v1.ReleaseInventory{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, inv); err != nil {
			t.Fatalf("ReleaseInventory %s: %v", name, err)
		}
		var got []object
		for _, e := range inv.Objects {
			got = append(got, object{r.cluster, e.Kind, e.Namespace, e.Name})
		}
		if d := cmp.Diff(sortObjects(slices.Collect(maps.Keys(rendered(r.cluster, ns, name, r.values)))), sortObjects(got)); d != "" {
			t.Errorf("ReleaseInventory %s (-want +got):\n%s", name, d)
		}
	}
	if d := cmp.Diff(rendersAtBackup, renders(t, ctx, c, ns)); d != "" {
		t.Errorf("Renders after the restore (-backup's +got):\n%s", d)
	}

	// The /sync of after the backup is not replayed.
	testenv.Consistently(t, ctx, "the /sync of after the backup not replayed", 5*time.Second, func() (bool, string) {
		rel := &v1.Release{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "synced"}, rel); err != nil {
			return false, err.Error()
		}
		ok := rel.Annotations[v1.AnnotationSyncRequestedAt] == syncedAtBackup.Annotations[v1.AnnotationSyncRequestedAt] &&
			rel.Status.LastHandledSyncAt.Equal(syncedAtBackup.LastHandledSyncAt)
		return ok, fmt.Sprintf("sync requested at %s, handled %v; the backup's: %s, %v", rel.Annotations[v1.AnnotationSyncRequestedAt],
			rel.Status.LastHandledSyncAt, syncedAtBackup.Annotations[v1.AnnotationSyncRequestedAt], syncedAtBackup.LastHandledSyncAt)
	})
}

// syncState is a Release's latest /sync request and the one it handled last.
type syncState struct {
	Annotations       map[string]string
	LastHandledSyncAt *metav1.Time
}

// syncAndWait POSTs /sync to the Release and waits until it is handled.
func syncAndWait(t *testing.T, ctx context.Context, c client.Client, ns, name string) syncState {
	t.Helper()
	testenv.PostSync(t, ctx, host.RestConfig(), ns, name, false)
	var s syncState
	testenv.Eventually(t, ctx, "the /sync of "+name+" handled", 2*time.Minute, func() (bool, string) {
		rel := &v1.Release{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rel); err != nil {
			return false, err.Error()
		}
		at, h := rel.Annotations[v1.AnnotationSyncRequestedAt], rel.Status.LastHandledSyncAt
		s = syncState{Annotations: rel.Annotations, LastHandledSyncAt: h}
		return at != "" && h != nil && v1.FormatSyncTime(h.Time) == at, fmt.Sprintf("requested %s, handled %v", at, h)
	})
	return s
}

// renderedAll is what the Releases render, with their ConfigMaps' data.
func renderedAll(ns string, rels map[string]release) map[object]map[string]string {
	out := map[object]map[string]string{}
	for name, r := range rels {
		maps.Copy(out, rendered(r.cluster, ns, name, r.values))
	}
	return out
}

// waitObjects waits until the objects of Releases of ns on the targets are exactly
// want, ConfigMaps with want's data, and returns them.
func waitObjects(t *testing.T, ctx context.Context, ns string, targets []target, want map[object]map[string]string, what string) map[object]live {
	t.Helper()
	var got map[object]live
	testenv.Eventually(t, ctx, what, 3*time.Minute, func() (bool, string) {
		got = labelled(t, ctx, ns, targets...)
		data := map[object]map[string]string{}
		for o, l := range got {
			data[o] = l.Data
		}
		d := cmp.Diff(want, data)
		return d == "", "objects (-want +got):\n" + d
	})
	return got
}

// renders lists the Renders of ns by the Release they belong to.
func renders(t *testing.T, ctx context.Context, c client.Client, ns string) map[string][]string {
	t.Helper()
	var list v1.RenderList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, r := range list.Items {
		out[r.Labels[v1.LabelRelease]] = append(out[r.Labels[v1.LabelRelease]], r.Name)
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// listed is what kubectl convoy orphans -o json printed, of the Releases of ns.
func listed(t *testing.T, stdout, ns string) []object {
	t.Helper()
	var list struct{ Items []cli.Orphan }
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("kubectl convoy orphans -o json: %v\n%s", err, stdout)
	}
	var out []object
	for _, o := range list.Items {
		if o.Release.Namespace == ns {
			out = append(out, object{o.Cluster, o.Kind, o.Namespace, o.Name})
		}
	}
	return sortObjects(out)
}

func sortObjects(objs []object) []object {
	slices.SortFunc(objs, func(a, b object) int { return strings.Compare(a.String(), b.String()) })
	return objs
}
