package controller

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// dryRunGate holds the controller's pre-apply dry run of one object (a PATCH with
// dryRun=All whose path ends in /configmaps/NAME) while armed: the test learns that the
// reconcile reached its dry run (held), changes what gated the apply meanwhile, and
// lets it go on (release). It stands for a slow target: a dry run of a large render on
// a remote Cluster takes seconds.
type dryRunGate struct {
	object  string
	armed   atomic.Bool
	held    chan struct{}
	release chan struct{}
}

func newDryRunGate(object string) *dryRunGate {
	return &dryRunGate{object: object, held: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *dryRunGate) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch && req.URL.Query().Get("dryRun") == "All" &&
			strings.HasSuffix(req.URL.Path, "/configmaps/"+g.object) && g.armed.CompareAndSwap(true, false) {
			g.held <- struct{}{}
			select {
			case <-g.release:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		return rt.RoundTrip(req)
	})
}

// waitHeld waits until the armed gate holds a dry run.
func (g *dryRunGate) waitHeld(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-g.held:
	case <-ctx.Done():
		t.Fatalf("no dry run of %s was held: %v", g.object, ctx.Err())
	}
}

// greeting is the data of the ConfigMap name, "" when there is none.
func (e *env) greeting(name string) string {
	if cm := e.configMap(name); cm != nil {
		return cm.Data["greeting"]
	}
	return ""
}

// The cluster wave is read again just before the first write to the target, not only
// at the start of the reconcile (docs/waves.md, "Cluster waves": a Release of a higher
// cluster wave applies only while every Release of a lower wave on its Cluster is
// Applied and Healthy). web (wave 1) starts a reconcile while db (wave 0) is ready;
// during web's dry run db is edited, so no longer ready; web's apply then holds with
// WaitingForClusterWave instead of applying on what it read seconds before (the chaos
// run's cluster-waves finding of seed 1251186771: a 5 s reconcile on a slow Cluster
// applied 3 s after the lower wave had a new render). Once db is Ready again, web
// applies.
func TestClusterWaveReadAgainBeforeTheFirstWrite(t *testing.T) {
	gate := newDryRunGate("web-config")
	e := newEnv(t, envOptions{transport: gate.wrap})
	for _, name := range []string{"db", "web"} {
		wave := int32(0)
		if name == "web" {
			wave = 1
		}
		e.createRelease(name, automatic(), clusterWave(wave))
		rel := e.waitApplied(name, "True", v1.ReasonApplied)
		e.writeHealthy(name, rel.Status.Render.Ref)
		e.waitReady(name, "True", "Ready")
	}

	gate.armed.Store(true)
	e.update("web", values(`{"greeting": "web-2"}`))
	gate.waitHeld(t, e.ctx)
	e.update("db", values(`{"greeting": "db-2"}`))
	db := e.release("db")
	e.eventually("the controller's cluster-wave view sees db's edit", func() (bool, string) {
		seen := &v1.Release{}
		if err := e.reconciler.waves.Get(e.ctx, client.ObjectKeyFromObject(db), seen); err != nil {
			return false, err.Error()
		}
		return seen.Generation == db.Generation, fmt.Sprintf("generation %d, want %d", seen.Generation, db.Generation)
	})
	close(gate.release)

	web := e.waitApplied("web", "False", v1.ReasonWaitingForClusterWave)
	if c := apimeta.FindStatusCondition(web.Status.Conditions, v1.ConditionApplied); !strings.Contains(c.Message, e.ns+"/db") {
		t.Errorf("web's Applied message %q does not name the lower wave's Release %s/db", c.Message, e.ns)
	}
	if got := e.greeting("web-config"); got != "hello" {
		t.Fatalf("web-config has greeting %q while db was not ready: web's render was applied, want it held", got)
	}

	db = e.waitApplied("db", "True", v1.ReasonApplied)
	e.writeHealthy("db", db.Status.Render.Ref)
	e.waitApplied("web", "True", v1.ReasonApplied)
	if got := e.greeting("web-config"); got != "web-2" {
		t.Fatalf("web-config has greeting %q once db is ready again, want web-2", got)
	}
}

// A Release found to have outlived its namespace just before its first write applies
// nothing more and is deleted (docs/deletion.md, "Deleting the namespace"):
// the namespace is deleted and created again while web's reconcile is in its dry run,
// which the check at the start of the reconcile cannot see. Without the second read,
// web's new render went into the new namespace (the chaos run's seed 1251186771:
// chaos-2/r005 applied 20 ms before the controller deleted it as outlived).
func TestOutlivedNamespaceReadAgainBeforeTheFirstWrite(t *testing.T) {
	gate := newDryRunGate("web-config")
	e := newEnv(t, envOptions{transport: gate.wrap})
	old := e.createRelease("web", automatic())
	e.waitApplied("web", "True", v1.ReasonApplied)
	kube, err := kubernetes.NewForConfig(hostConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns, err := kube.CoreV1().Namespaces().Get(e.ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	gate.armed.Store(true)
	e.update("web", values(`{"greeting": "web-2"}`))
	gate.waitHeld(t, e.ctx)
	// The namespace goes with its content left in storage, as when the namespace
	// controller finalizes it on a discovery without convoy's API, and comes back.
	again := e.recreateNamespace(kube, ns)
	e.eventually("the controller's cache sees the new namespace", func() (bool, string) {
		seen := &corev1.Namespace{}
		if err := e.reconciler.client.Get(e.ctx, client.ObjectKey{Name: e.ns}, seen); err != nil {
			return false, err.Error()
		}
		return seen.UID == again.UID, fmt.Sprintf("UID %s, want %s", seen.UID, again.UID)
	})
	// Every version of web-config from now on: one written by the outlived Release
	// would be deleted again with it, and leave no other trace.
	w, err := kube.CoreV1().ConfigMaps(e.ns).Watch(e.ctx, metav1.ListOptions{FieldSelector: "metadata.name=web-config"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	close(gate.release)

	e.eventually("the Release that outlived its namespace gone", func() (bool, string) { return e.outlivedGone(old) })
	if got := e.greeting("web-config"); got != "" {
		t.Fatalf("web-config is left in the new namespace with greeting %q", got)
	}
	for {
		select {
		case ev := <-w.ResultChan():
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && cm.Data["greeting"] == "web-2" {
				t.Fatalf("the Release that outlived its namespace applied its new render into the new one (%s web-config, greeting web-2)", ev.Type)
			}
			continue
		case <-time.After(time.Second):
		}
		break
	}
}
