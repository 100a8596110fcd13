package apply_test

import (
	"context"
	"fmt"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/targets"
)

// The controller's steps 9–11 for one Release, sketched: the dry run (unless
// a force is pending), the waves the decision core allows, the inventory
// growing as they apply, then the prune.
func Example() {
	var (
		ctx       context.Context
		resolver  targets.Resolver           // a *targets.Cache in production
		release   *v1alpha1.Release          // the Release being reconciled
		inventory *v1alpha1.ReleaseInventory // read from the host
		render    []apply.Object             // from internal/render: objects and their waves
		force     bool                       // a force is pending
		healthy   func(wave int32) bool      // the observer's verdict on waves ≤ wave
	)

	target, err := resolver.Resolve(ctx, release)
	if err != nil {
		return // Applied=False, reason ClusterNotReady, message err.Error()
	}
	applier := apply.New(target.Client, apply.Options{})

	var plan *apply.Plan
	if force {
		plan, err = apply.NewPlan(render)
	} else {
		plan, err = applier.DryRun(ctx, render, nil)
	}
	if err != nil {
		fmt.Println(reasons.Of(err, ""), err) // Unappliable or DeployFailed
		return
	}

	waves := plan.Waves()
	for i, wave := range waves {
		res, err := applier.ApplyWave(ctx, plan, wave)
		if res != nil {
			inventory.Objects = apply.Merge(inventory.Objects, res.Entries) // write it, even on error
		}
		if err != nil {
			fmt.Println(reasons.Of(err, ""), err) // DeployFailed
			return
		}
		if i < len(waves)-1 && !healthy(wave) {
			return // WaitingForSyncWave: the observer's /sync brings the next reconcile
		}
	}

	res, err := applier.Prune(ctx, apply.PruneInput{
		Release:   apply.Owner{Name: release.Name, Namespace: release.Namespace},
		Inventory: inventory.Objects,
		Render:    plan.Entries(nil),
		Disabled:  release.Spec.Prune != nil && !*release.Spec.Prune,
	})
	if res != nil {
		inventory.Objects = res.Inventory // exactly the render when the prune succeeded
	}
	if err != nil {
		fmt.Println(reasons.Of(err, ""), err) // PruneFailed
	}
}
