package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/controller"
	"kumodo.io/convoy/internal/testenv"
)

// team is a tenant: a namespace, its ServiceAccount convoy-deployer (everything in
// the namespace, nothing elsewhere) unless made without one, and a user who may
// only create Releases there and /sync them.
type team struct {
	t     *testing.T
	ctx   context.Context
	ns    string
	admin client.Client
	user  client.Client
}

// everything is what a namespace admin may do in the namespace.
var everything = rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}

func newTeam(t *testing.T, withDeployer bool) *team {
	t.Helper()
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	scheme, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	admin := testenv.Client(t, host.RestConfig(), scheme)
	ns := testenv.Namespace(t, ctx, admin, "team", nil)
	if withDeployer {
		serviceAccount(t, ctx, admin, ns, deployer, everything)
	}
	user := "user-" + ns
	testenv.Grant(t, ctx, admin, ns, user, rbacv1.PolicyRule{
		APIGroups: []string{v1.GroupName}, Resources: []string{"releases", "releases/sync"},
		Verbs: []string{"create", "get", "list", "watch", "update", "patch", "delete"},
	})
	cfg, err := host.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	return &team{t: t, ctx: ctx, ns: ns, admin: admin, user: testenv.Client(t, cfg, scheme)}
}

// serviceAccount creates the ServiceAccount name in ns with rules in ns, in force
// when it returns.
func serviceAccount(t *testing.T, ctx context.Context, admin client.Client, ns, name string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	if err := admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	testenv.Grant(t, ctx, admin, ns, saUser(ns, name), rules...)
}

func saUser(ns, name string) string { return "system:serviceaccount:" + ns + ":" + name }

// release creates, as the team's user, an automatic Release of chart.
func (tm *team) release(name, chart string, opts ...func(*v1.Release)) *v1.Release {
	tm.t.Helper()
	rel := &v1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: tm.ns, Name: name},
		Spec: v1.ReleaseSpec{
			Chart:      v1.ChartSource{Repository: charts, Name: chart},
			SyncPolicy: v1.SyncPolicy{Automatic: ptr.To(true)},
		},
	}
	for _, o := range opts {
		o(rel)
	}
	if err := tm.user.Create(tm.ctx, rel); err != nil {
		tm.t.Fatalf("the team's user cannot create Release %s: %v", name, err)
	}
	return rel
}

// applied waits until the Applied condition of Release name, for its generation, has
// reason, and returns the condition.
func (tm *team) applied(name, reason string) metav1.Condition {
	tm.t.Helper()
	var cond metav1.Condition
	testenv.Eventually(tm.t, tm.ctx, fmt.Sprintf("Release %s Applied with reason %s", name, reason), time.Minute, func() (bool, string) {
		rel := &v1.Release{}
		if err := tm.admin.Get(tm.ctx, client.ObjectKey{Namespace: tm.ns, Name: name}, rel); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		if c == nil || c.ObservedGeneration != rel.Generation {
			return false, "no Applied condition for the generation yet"
		}
		cond = *c
		return c.Reason == reason, fmt.Sprintf("Applied %s %s: %s", c.Status, c.Reason, c.Message)
	})
	return cond
}

// refused checks a Forbidden condition: False, and a message that names the
// ServiceAccount, the missing permission (verb and resource) and the object.
func (tm *team) refused(name string, want ...string) {
	tm.t.Helper()
	c := tm.applied(name, v1.ReasonForbidden)
	if c.Status != metav1.ConditionFalse {
		tm.t.Errorf("Applied is %s", c.Status)
	}
	want = append(want, fmt.Sprintf("User %q cannot", saUser(tm.ns, deployer)))
	for _, w := range want {
		if !strings.Contains(c.Message, w) {
			tm.t.Errorf("the condition's message %q does not contain %q", c.Message, w)
		}
	}
}

// absent checks that obj (its kind, namespace and name set) does not exist.
func (tm *team) absent(obj client.Object) {
	tm.t.Helper()
	err := tm.admin.Get(tm.ctx, client.ObjectKeyFromObject(obj), obj)
	switch {
	case err == nil:
		tm.t.Errorf("%T %s/%s exists: something was applied", obj, obj.GetNamespace(), obj.GetName())
	case !apierrors.IsNotFound(err):
		tm.t.Fatal(err)
	}
}

// nothingApplied checks that the team's namespace holds none of the Release's
// ConfigMaps and that it has no inventory of applied objects.
func (tm *team) nothingApplied(name string) {
	tm.t.Helper()
	tm.absent(configMap(tm.ns, name))
	inv := &v1.ReleaseInventory{}
	err := tm.admin.Get(tm.ctx, client.ObjectKey{Namespace: tm.ns, Name: name}, inv)
	if err == nil && len(inv.Objects) > 0 {
		tm.t.Errorf("the ReleaseInventory lists %d objects: %v", len(inv.Objects), inv.Objects)
	}
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}
