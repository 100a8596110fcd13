package dev

import (
	"context"

	"k8s.io/client-go/rest"
)

// GrantController gives identity on host what `convoy dev` grants convoy controller
// (ControllerRules and, for dev, cluster-admin), so that a benchmark (bench/e2e) runs
// the controller with the same rights as dev does.
func GrantController(ctx context.Context, host *rest.Config, identity string) error {
	return grantController(ctx, host, identity)
}

// GrantObserver gives identity on host what `convoy dev` grants convoy observer
// (ObserverRules and ObserverTargetRules).
func GrantObserver(ctx context.Context, host *rest.Config, identity string) error {
	return grantObserver(ctx, host, identity)
}
