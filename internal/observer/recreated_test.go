package observer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// stalledWatches holds back what the watches through its transport receive while it
// is paused: the informers' caches keep what they had, as when a link to a target
// cluster breaks its watches for a while. Other requests go through.
type stalledWatches struct {
	mu sync.Mutex
	// open is closed while the watches run; a paused transport has a new, open one.
	open chan struct{}
}

func newStalledWatches() *stalledWatches {
	s := &stalledWatches{open: make(chan struct{})}
	close(s.open)
	return s
}

func (s *stalledWatches) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.open:
		s.open = make(chan struct{})
	default:
	}
}

func (s *stalledWatches) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.open:
	default:
		close(s.open)
	}
}

func (s *stalledWatches) gate() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

func (s *stalledWatches) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || req.URL.Query().Get("watch") != "true" {
			return resp, err
		}
		resp.Body = &stalledBody{ReadCloser: resp.Body, watches: s, ctx: req.Context()}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// stalledBody hands over what the watch received only while the watches run.
type stalledBody struct {
	io.ReadCloser
	watches *stalledWatches
	ctx     context.Context
}

func (b *stalledBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	select {
	case <-b.watches.gate():
	case <-b.ctx.Done():
	}
	return n, err
}

// A Release deleted and created again with the same name applies Deployments of the
// same names as the ones deleted with it. While the observer's watches of the target
// are broken, its informer still holds the deleted Deployments, Available, at the
// generation the new ones have: it must not take them for the new ones and report
// sync wave 0 Healthy, which let the controller apply wave 1 before the new wave 0
// was Available. It tells them apart by the uid the inventory records of an object
// the apply created (decision 0234), asks the API server once, and waits until its
// informer sees the new Deployment.
//
// The sync policy (SP-14): "The observer sends one when a sync wave completes" — a
// wave completes only when its objects as applied are healthy, not their predecessors.
func TestARecreatedObjectIsNotAssessedOnTheObserversViewOfTheDeletedOne(t *testing.T) {
	e := newEnv(t)
	e.startController()
	watches := newStalledWatches()
	t.Cleanup(watches.resume)
	e.startObserver(observerOptions{targetTransport: watches.wrap})
	rel := upgradeRelease(e.ns, "app", `{}`)
	rel.Spec.SyncPolicy.Automatic = ptr.To(true)
	e.create(rel.DeepCopy())
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	old := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "wave-0"}, old); err != nil {
		t.Fatal(err)
	}

	// The observer's watches break; the Release and its Deployments are deleted.
	watches.pause()
	if err := e.client.Delete(e.ctx, e.release("app")); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Release and its Deployments deleted", func() (bool, string) {
		var left []string
		if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "app"}, &v1.Release{}); !apierrors.IsNotFound(err) {
			left = append(left, fmt.Sprintf("Release (%v)", err))
		}
		list := &appsv1.DeploymentList{}
		if err := e.client.List(e.ctx, list, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		for _, d := range list.Items {
			left = append(left, d.Name)
		}
		return len(left) == 0, fmt.Sprintf("left: %v", left)
	})

	// The same Release again: its wave 0 is created anew, and rolls out.
	rollouts := e.watchRollouts(imageOld)
	e.create(rel.DeepCopy())
	e.eventually("wave-0 created again and rolled out", func() (bool, string) {
		return rollouts.index("rolled out wave-0") >= 0, "events: " + rollouts.String()
	})
	d := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "wave-0"}, d); err != nil {
		t.Fatal(err)
	}
	if d.UID == old.UID || d.Generation != old.Generation {
		t.Fatalf("wave-0: uid %s generation %d, the deleted one's %s %d: the test needs a new object at the same generation",
			d.UID, d.Generation, old.UID, old.Generation)
	}
	if i := rollouts.index("applied wave-1"); i >= 0 {
		t.Errorf("wave 1 applied while the observer saw only the deleted wave-0 (events: %s; health %+v)", rollouts, e.inventory("app").Status.Objects)
	}
	inv := e.inventory("app")
	i := slices.IndexFunc(inv.Objects, func(o v1.InventoryObject) bool { return o.Name == "wave-0" })
	if i < 0 || inv.Objects[i].UID != d.UID {
		t.Errorf("inventory entries %+v: want wave-0 with uid %s, the object the apply created", inv.Objects, d.UID)
	}

	// Once the observer's watches run again, it sees the new Deployments and the waves
	// go on, each one once the one before it rolled out.
	watches.resume()
	e.eventually("the Release Ready again", func() (bool, string) {
		r := e.release("app")
		return conditionTrue(r, v1.ConditionReady) && rollouts.index("rolled out wave-2") >= 0,
			fmt.Sprintf("conditions %+v, events %s", r.Status.Conditions, rollouts)
	})
	rollouts.wantWaveByWave(t)
}

// waitObjectHealth waits until the inventory name's health data says want for its
// object of that name.
func (e *env) waitObjectHealth(name, object string, want v1.HealthStatus) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("%s %s in the health data of %s", object, want, name), func() (bool, string) {
		st := e.inventory(name).Status
		i := slices.IndexFunc(st.Objects, func(o v1.ObjectHealth) bool { return o.Name == object })
		return i >= 0 && st.Objects[i].Health == want, fmt.Sprintf("health data %+v", st.Objects)
	})
}

// An object the apply created that someone else deleted and created again since is
// assessed from the API server's answer: the observer does not wait for a view of the
// object the inventory recorded, which is gone for good (decision 0234). In manual
// mode nothing applies the Release again, which would record the new object.
func TestAnObjectReplacedByHandIsAssessedNotWaitedFor(t *testing.T) {
	e := newEnv(t)
	e.startController()
	e.startObserver(observerOptions{})
	e.create(upgradeRelease(e.ns, "app", `{}`))
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("app")
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	old := &appsv1.Deployment{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "wave-0"}, old); err != nil {
		t.Fatal(err)
	}

	if err := e.client.Delete(e.ctx, old); err != nil {
		t.Fatal(err)
	}
	e.waitObjectHealth("app", "wave-0", v1.HealthMissing)
	replacement := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: e.ns, Name: old.Name, Labels: old.Labels, Annotations: old.Annotations,
	}, Spec: old.Spec}
	e.create(replacement)
	e.waitObjectHealth("app", "wave-0", v1.HealthHealthy)
	inv := e.inventory("app")
	i := slices.IndexFunc(inv.Objects, func(o v1.InventoryObject) bool { return o.Name == "wave-0" })
	if i < 0 || inv.Objects[i].UID != old.UID {
		t.Errorf("inventory entries %+v: want wave-0 still with the uid %s of the object convoy created (no apply since)", inv.Objects, old.UID)
	}
}
