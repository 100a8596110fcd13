// Package tenancy_test proves the multi-tenancy lockdown end to end: one local control
// plane, convoy's API server and one release controller started with
// --default-service-account=convoy-deployer, shared by every test. The controller
// runs as a user with only the chart's controller ClusterRoles under lockdown
// (convoy-controller and convoy-controller-impersonate: no rights to apply anything
// itself). Each team gets a
// namespace whose ServiceAccount convoy-deployer may do anything in that namespace
// and nothing elsewhere, and a user who may only create Releases there and /sync
// them. Whatever the chart, the Release's spec or its mutations ask, the controller
// acts as that ServiceAccount: a request outside the team's rights is refused with
// a condition naming the object and the missing permission, and nothing of the
// render is applied.
//
// With -short nothing runs.
package tenancy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/internal/wiring"

	"kumodo.io/convoy/internal/apiserver/apiservertest"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/internal/testenv"
)

// deployer is the controller's --default-service-account in these tests.
const deployer = "convoy-deployer"

var (
	// host is the local control plane; nil with -short.
	host *localcluster.Cluster
	// charts is the URL of the chart repository of testdata/charts.
	charts string
)

func TestMain(m *testing.M) {
	apiservertest.Main(m, apiservertest.MainOptions{
		Name: "tenancy", Host: &host, Charts: "testdata/charts", ChartsURL: &charts,
		Then: func(s *testenv.Setup) error {
			cfg, err := lockedDownController(s.Context())
			if err != nil {
				return err
			}
			return startController(s, cfg)
		},
	})
}

// controllerUser is the user the controller runs as: with the ClusterRoles of the
// chart installed with controller.defaultServiceAccount, and nothing else.
const controllerUser = "convoy-tenancy-controller"

// lockedDownController grants controllerUser the controller's ClusterRoles of the
// chart rendered under lockdown (convoy-controller and convoy-controller-impersonate;
// no convoy-controller-apply), and returns its configuration.
func lockedDownController(ctx context.Context) (*rest.Config, error) {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	c, err := chart.Load(root)
	if err != nil {
		return nil, err
	}
	files, err := chart.Render(c, map[string]any{"controller": map[string]any{"defaultServiceAccount": deployer}}, chart.Namespace)
	if err != nil {
		return nil, err
	}
	objs, err := chart.Objects(files)
	if err != nil {
		return nil, err
	}
	admin, err := client.New(host.RestConfig(), client.Options{})
	if err != nil {
		return nil, err
	}
	var roles []string
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" || !strings.HasPrefix(o.GetName(), "convoy-controller") {
			continue
		}
		if o.GetName() == "convoy-controller-apply" {
			return nil, errors.New("the chart installs convoy-controller-apply under lockdown")
		}
		if err := admin.Create(ctx, o); err != nil {
			return nil, err
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: o.GetName()},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: o.GetName()},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: controllerUser}},
		}
		if err := admin.Create(ctx, binding); err != nil {
			return nil, err
		}
		roles = append(roles, o.GetName())
	}
	slices.Sort(roles)
	if !slices.Equal(roles, []string{"convoy-controller", "convoy-controller-impersonate"}) {
		return nil, fmt.Errorf("the chart's controller ClusterRoles under lockdown are %v", roles)
	}
	return host.UserConfig(controllerUser)
}

// startController runs the release controller on cfg, locked down, until the tests end.
func startController(s *testenv.Setup, cfg *rest.Config) error {
	mgr, err := controller.NewManager(cfg, controller.ManagerOptions{
		Resync: 10 * time.Minute, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "convoy-tenancy-charts-")
	if err != nil {
		return err
	}
	s.Cleanup(func() { _ = os.RemoveAll(dir) })
	fetcher, err := source.New(source.Options{CacheDir: dir})
	if err != nil {
		return err
	}
	if _, err := wiring.Setup(s.Context(), mgr, wiring.Options{Release: controller.Options{
		Source: fetcher, Metrics: prometheus.NewRegistry(), DefaultServiceAccount: deployer,
	}}); err != nil {
		return err
	}
	ctx, stop := context.WithCancel(s.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	s.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "the release controller: %v\n", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("the controller's cache did not sync")
	}
	return nil
}
