package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/observer"
	"kumodo.io/convoy/internal/render"
)

// The design floor (-floor-design, with -floor; it implies -floor-dry-runs) adds to the
// floor every request of convoy's API that the design requires of a Release's first
// apply, each sent by the identity that sends it in a run to Ready — the author, and
// convoy controller's and observer's ServiceAccounts with the rights `convoy dev` gives
// them — in the order they send it, but without the processes: no chart rendered at the
// clock (the Render is made before it), no watch, no cache, no reconcile. Per Release:
//
//   - the author creates the Release;
//   - the first reconcile stores the Render and creates the inventory naming no render
//     (before the apply: a crash mid-apply must find what to prune), dry-runs and
//     applies each object, names the render in the inventory, writes the Release's
//     status (Applied) and records an event;
//   - the observer writes the inventory's health data and asks for a /sync;
//   - the reconcile that the /sync starts dry-runs each object again and writes the
//     Release's status (Ready).
//
// It is what the design costs the control plane and convoy apiserver on this machine,
// whatever convoy's controller and observer do: their own CPU comes on top.

// designFloor is the clients and the per-Release material of the design floor.
type designFloor struct {
	author               *rest.RESTClient
	controller, observer client.Client
	events               kubernetes.Interface // as the controller
	syncer               observer.Syncer
	releases             []designRelease
}

// designRelease is what the bench makes for one Release before the clock.
type designRelease struct {
	rel     *v1.Release
	render  *v1.Render
	entries []v1.InventoryObject
	ref     string
}

// newDesignFloor grants convoy controller's and observer's ServiceAccounts what `convoy
// dev` grants them and the author its Role in the namespaces, and makes their clients.
func (e *env) newDesignFloor(ctx context.Context, namespaces []string, direct bool) (*designFloor, error) {
	if err := e.grantAuthor(ctx, namespaces); err != nil {
		return nil, err
	}
	d := &designFloor{author: e.author}
	identity := func(name string, grant func(context.Context, *rest.Config, string) error) (*rest.Config, error) {
		kubeconfig, user, err := e.serviceAccountKubeconfig(ctx, name)
		if err != nil {
			return nil, err
		}
		if err := grant(ctx, e.Cluster.RestConfig(), user); err != nil {
			return nil, err
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, err
		}
		cfg.QPS, cfg.Burst = 2000, 4000 // the bench's clients are not what it measures
		return cfg, nil
	}
	ctl, err := identity("convoy-controller", dev.GrantController)
	if err != nil {
		return nil, err
	}
	obs, err := identity("convoy-observer", dev.GrantObserver)
	if err != nil {
		return nil, err
	}
	if d.events, err = kubernetes.NewForConfig(ctl); err != nil {
		return nil, err
	}
	if direct {
		ctl, obs = e.Direct(ctl), e.Direct(obs)
	}
	if d.controller, err = client.New(ctl, client.Options{Scheme: benchenv.Scheme}); err != nil {
		return nil, err
	}
	if d.observer, err = client.New(obs, client.Options{Scheme: benchenv.Scheme}); err != nil {
		return nil, err
	}
	if d.syncer, err = observer.NewSyncer(obs); err != nil {
		return nil, err
	}
	return d, nil
}

// prepare makes Release i's Release, Render and inventory entries from its render.
func (d *designFloor) prepare(rel *v1.Release, res *render.Result) error {
	r, err := render.NewRenderObject(rel, res)
	if err != nil {
		return err
	}
	var entries []v1.InventoryObject
	for _, o := range res.Objects {
		gvk := o.GroupVersionKind()
		entries = append(entries, v1.InventoryObject{ObjectReference: v1.ObjectReference{
			Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Namespace: o.GetNamespace(), Name: o.GetName(),
		}})
	}
	d.releases = append(d.releases, designRelease{rel: rel, render: r, entries: entries, ref: res.Ref})
	return nil
}

// beforeApply sends what precedes Release i's first dry run: its create, its Render,
// its inventory naming no render.
func (d *designFloor) beforeApply(ctx context.Context, i int) error {
	dr := &d.releases[i]
	created := &v1.Release{}
	if err := d.author.Post().Namespace(dr.rel.Namespace).Resource(v1.ResourceReleases).Body(dr.rel).Do(ctx).Into(created); err != nil {
		return fmt.Errorf("create Release %s: %w", dr.rel.Name, err)
	}
	dr.rel = created
	owner := *metav1.NewControllerRef(created, v1.SchemeGroupVersion.WithKind("Release"))
	dr.render.OwnerReferences = []metav1.OwnerReference{owner}
	if err := d.controller.Create(ctx, dr.render); err != nil {
		return fmt.Errorf("store Render %s: %w", dr.render.Name, err)
	}
	inv := &v1.ReleaseInventory{
		ObjectMeta: metav1.ObjectMeta{Namespace: created.Namespace, Name: created.Name,
			OwnerReferences: []metav1.OwnerReference{owner}, Finalizers: []string{v1.Finalizer}},
		Cluster: created.Spec.Cluster,
		Objects: dr.entries,
	}
	if err := d.controller.Create(ctx, inv); err != nil {
		return fmt.Errorf("create ReleaseInventory %s: %w", inv.Name, err)
	}
	return nil
}

// afterApply sends what follows Release i's apply: the inventory names the render, the
// Release's status says Applied, an event; then the observer's health data and /sync.
func (d *designFloor) afterApply(ctx context.Context, i int) error {
	dr := &d.releases[i]
	rel := dr.rel
	inv := &v1.ReleaseInventory{}
	inv.Namespace, inv.Name = rel.Namespace, rel.Name
	if err := d.controller.Patch(ctx, inv, client.RawPatch("application/merge-patch+json",
		fmt.Appendf(nil, `{"renderRef":%q}`, dr.ref))); err != nil {
		return fmt.Errorf("name the render in ReleaseInventory %s: %w", rel.Name, err)
	}
	now := metav1.Now()
	applied := rel.DeepCopy()
	applied.Status = v1.ReleaseStatus{
		ObservedGeneration: rel.Generation,
		Render:             &v1.RenderStatus{Ref: dr.ref, ChartVersion: rel.Spec.Chart.Version, RenderedAt: &now},
		LastSuccessful:     &v1.LastSuccessful{RenderRef: dr.ref, ChartVersion: rel.Spec.Chart.Version, AppliedAt: &now},
	}
	message := fmt.Sprintf("Applied render %s: %d created", dr.ref, len(dr.entries))
	for _, c := range []metav1.Condition{
		{Type: v1.ConditionApplied, Status: metav1.ConditionTrue, Reason: v1.ReasonApplied, Message: message},
		{Type: v1.ConditionHealthy, Status: metav1.ConditionUnknown, Reason: v1.ReasonNotAssessed, Message: "The observer has not assessed render " + dr.ref + " yet"},
		{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonNotAssessed, Message: "Applied; waiting for the health of render " + dr.ref},
	} {
		c.ObservedGeneration = rel.Generation
		apimeta.SetStatusCondition(&applied.Status.Conditions, c)
	}
	if err := d.controller.Status().Patch(ctx, applied, client.MergeFrom(rel)); err != nil {
		return fmt.Errorf("write the status of Release %s: %w", rel.Name, err)
	}
	dr.rel = applied
	regarding, err := reference.GetReference(benchenv.Scheme, rel)
	if err != nil {
		return err
	}
	ev := &eventsv1.Event{
		// Named as client-go's events recorder names it.
		ObjectMeta:          metav1.ObjectMeta{Namespace: rel.Namespace, Name: fmt.Sprintf("%s.%x", rel.Name, now.UnixNano())},
		EventTime:           metav1.NewMicroTime(now.Time),
		Regarding:           *regarding,
		Reason:              v1.ReasonApplied,
		Action:              "Reconcile",
		Note:                message,
		Type:                corev1.EventTypeNormal,
		ReportingController: "convoy-controller",
		ReportingInstance:   "convoy-controller",
	}
	if _, err := d.events.EventsV1().Events(rel.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("record the event of Release %s: %w", rel.Name, err)
	}

	// The observer: the render's health data (on the inventory as its cache holds it:
	// as the patch above returned it), then /sync.
	live := inv
	assessed := live.DeepCopy()
	assessed.Status = v1.ReleaseInventoryStatus{RenderRef: dr.ref, ObservedGeneration: live.Generation, AssessedAt: &now, Health: v1.HealthHealthy}
	for _, o := range dr.entries {
		assessed.Status.Objects = append(assessed.Status.Objects, v1.ObjectHealth{ObjectReference: o.ObjectReference, Health: v1.HealthHealthy})
	}
	if err := d.observer.Status().Patch(ctx, assessed, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write the health of ReleaseInventory %s: %w", rel.Name, err)
	}
	return d.syncer.Sync(ctx, rel.Namespace, rel.Name, dr.ref)
}

// afterSecondDryRuns writes the status of the reconcile that the /sync started: Ready.
func (d *designFloor) afterSecondDryRuns(ctx context.Context, i int) error {
	rel := d.releases[i].rel
	ready := rel.DeepCopy()
	now := metav1.Now()
	ready.Status.LastHandledSyncAt = &now
	for _, c := range []metav1.Condition{
		{Type: v1.ConditionHealthy, Status: metav1.ConditionTrue, Reason: v1.ReasonHealthy, Message: "Every object of render " + d.releases[i].ref + " is healthy"},
		{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonApplied, Message: "Applied and healthy"},
	} {
		c.ObservedGeneration = rel.Generation
		apimeta.SetStatusCondition(&ready.Status.Conditions, c)
	}
	if err := d.controller.Status().Patch(ctx, ready, client.MergeFrom(rel)); err != nil {
		return fmt.Errorf("write the Ready status of Release %s: %w", rel.Name, err)
	}
	return nil
}
