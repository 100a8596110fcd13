package tenancy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/targets"
	"kumodo.io/convoy/internal/testenv"
)

// `convoy dev --default-service-account` works as the chart's lockdown: dev grants
// the observer what the chart does (dev.ObserverRules: impersonate ServiceAccounts),
// so its drift check — a server-side apply dry run made as the Release's
// ServiceAccount — is allowed in the team's namespace, and, made as the
// ServiceAccount dev created (dev.CreateDeployer: admin in its namespace), refused
// elsewhere although the observer itself may patch everything in dev. Without the
// impersonate rule in dev.ObserverRules every drift check of such a Release is
// refused ("cannot impersonate").
func TestDevObserverActsAsTheServiceAccount(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scheme, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	admin := testenv.Client(t, host.RestConfig(), scheme)
	ns := testenv.Namespace(t, ctx, admin, "dev", nil)
	if err := dev.CreateDeployer(ctx, host.RestConfig(), ns, deployer); err != nil {
		t.Fatal(err)
	}
	// dev binds the ServiceAccount to admin, which kube-controller-manager fills by
	// aggregation; this control plane runs none, so the test grants the same directly.
	testenv.Grant(t, ctx, admin, ns, saUser(ns, deployer), everything)
	const observer = "convoy-dev-observer"
	if err := dev.GrantObserver(ctx, host.RestConfig(), observer); err != nil {
		t.Fatal(err)
	}
	cfg, err := host.UserConfig(observer)
	if err != nil {
		t.Fatal(err)
	}
	asDeployer := testenv.Client(t, targets.Impersonating(cfg, targets.Identity{Namespace: ns, ServiceAccount: deployer}), scheme)

	dryRun := func(namespace string) error {
		cm := &unstructured.Unstructured{}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetNamespace(namespace)
		cm.SetName("drift")
		// The drift check's request (internal/diff).
		return asDeployer.Apply(ctx, client.ApplyConfigurationFromUnstructured(cm),
			client.DryRunAll, client.ForceOwnership, client.FieldOwner(v1.FieldManager))
	}
	// RBAC grants take effect at once, but poll in case the cache lags.
	testenv.Eventually(t, ctx, "a dry run as the deployer in its namespace", time.Minute, func() (bool, string) {
		if err := dryRun(ns); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	err = dryRun("kube-system")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:serviceaccount:"+ns+":"+deployer) {
		t.Fatalf("a dry run in kube-system as %s/%s: %v, want Forbidden naming the ServiceAccount", ns, deployer, err)
	}
}
