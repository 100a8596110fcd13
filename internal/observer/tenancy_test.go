package observer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/observer/drift"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/testenv"
)

// Decision 0098: the drift check of a Release with spec.serviceAccountName is made as that
// ServiceAccount (the client it gets says so to the API server's SelfSubjectReview),
// while health still comes from the observer's own shared informers (Ready).
func TestDriftChecksActAsTheReleasesServiceAccount(t *testing.T) {
	e := newEnv(t)
	if err := e.client.Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "deployer"}}); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + e.ns + ":deployer"
	testenv.Grant(t, e.ctx, e.client, e.ns, user, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}})
	grantImpersonation(t, e)
	e.startController()
	checker := &whoChecker{next: drift.New(drift.Options{})}
	e.startObserver(observerOptions{drift: checker})

	rel := testRelease(e.ns, "app")
	rel.Spec.ServiceAccountName = "deployer"
	rel.Spec.SyncPolicy.Interval = &metav1.Duration{Duration: 2 * time.Second}
	e.create(rel)
	e.waitCondition("app", v1.ConditionApplied, metav1.ConditionFalse, v1.ReasonWaitingForSync)
	e.sync("app")
	e.waitCondition("app", v1.ConditionReady, metav1.ConditionTrue, policy.ReasonReady)
	e.eventually("a drift check without drift", func() (bool, string) {
		d := e.inventory("app").Status.Drift
		return d != nil && d.Since != nil && len(d.Drifted) == 0, fmt.Sprintf("drift %+v", d)
	})
	if got := checker.seen(); !slices.Equal(got, []string{user}) {
		t.Errorf("the drift checks were made as %v, want only %s", got, user)
	}
}

// grantImpersonation lets the tests' observer identity impersonate ServiceAccounts, as
// the chart's convoy-observer-impersonate does.
func grantImpersonation(t *testing.T, e *env) {
	t.Helper()
	name := "convoy-observer-impersonate-test"
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate", "get", "list", "watch"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: identity}}},
	} {
		if err := e.client.Create(e.ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// whoChecker records who each drift check's client is, then checks drift.
type whoChecker struct {
	next DriftChecker
	mu   sync.Mutex
	who  []string
}

func (c *whoChecker) Check(ctx context.Context, target client.Client, objects []*unstructured.Unstructured) ([]v1.DriftedObject, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := target.Create(ctx, review); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if !slices.Contains(c.who, review.Status.UserInfo.Username) {
		c.who = append(c.who, review.Status.UserInfo.Username)
	}
	c.mu.Unlock()
	return c.next.Check(ctx, target, objects)
}

func (c *whoChecker) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.who)
}
