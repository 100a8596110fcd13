package testenv

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RequestCounter counts the requests that pass through a client (set Wrap as its
// rest.Config's WrapTransport): "read" (GET), "dry-run" (dryRun=All) and "write"
// (anything else), and the most served at once; Log lists them all.
type RequestCounter struct {
	mu     sync.Mutex
	counts map[string]int
	// log is every request since the counter was made, "METHOD path?query".
	log []string
	// unvalidated counts, by kind, the requests that asked the server not to validate fields
	// (fieldValidation=Ignore).
	unvalidated map[string]int
	// inFlight and maxInFlight count the requests being served.
	inFlight, maxInFlight int
}

// Wrap is a rest.Config WrapTransport that counts.
func (c *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		kind := "write"
		switch {
		case r.Method == http.MethodGet:
			kind = "read"
		case r.URL.Query().Get("dryRun") == "All":
			kind = "dry-run"
		}
		c.mu.Lock()
		if c.counts == nil {
			c.counts = map[string]int{}
		}
		c.counts[kind]++
		c.log = append(c.log, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		if c.unvalidated == nil {
			c.unvalidated = map[string]int{}
		}
		if r.URL.Query().Get("fieldValidation") == "Ignore" {
			c.unvalidated[kind+" fieldValidation=Ignore"]++
		}
		c.inFlight++
		c.maxInFlight = max(c.maxInFlight, c.inFlight)
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.inFlight--
			c.mu.Unlock()
		}()
		return rt.RoundTrip(r)
	})
}

// Take returns the counts since the last call, by kind.
func (c *RequestCounter) Take() map[string]int { return c.take(&c.counts) }

// TakeUnvalidated returns, since the last call, how many requests of each kind asked for
// no field validation ("<kind> fieldValidation=Ignore").
func (c *RequestCounter) TakeUnvalidated() map[string]int { return c.take(&c.unvalidated) }

// take returns *m, never nil, and empties it.
func (c *RequestCounter) take(m *map[string]int) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := *m
	if out == nil {
		out = map[string]int{}
	}
	*m = map[string]int{}
	return out
}

// Log returns how many requests passed through since the counter was made, and each
// of them in order as "METHOD path?query".
func (c *RequestCounter) Log() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.log), append([]string(nil), c.log...)
}

// TakeMaxInFlight returns the most requests served at once since the last call.
func (c *RequestCounter) TakeMaxInFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.maxInFlight
	c.maxInFlight = c.inFlight
	return n
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Grant gives user the rules in the namespace ns: a Role and a RoleBinding named after
// the user, and waits until they are in force (WaitAllowed).
func Grant(t testing.TB, ctx context.Context, c client.Client, ns, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns}, Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("grant %s in %s: %v", user, ns, err)
		}
	}
	WaitAllowed(t, ctx, c, ns, user, rules...)
}

// WaitAllowed waits until the control plane of c authorizes user for the first verb
// of every rule in the namespace ns, as a SubjectAccessReview says. A new RoleBinding
// takes effect when kube-apiserver's RBAC informers see it; a request made earlier is
// denied, and an aggregated API server (convoy apiserver) caches that denial for
// seconds.
func WaitAllowed(t testing.TB, ctx context.Context, c client.Client, ns, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	for _, r := range rules {
		if len(r.APIGroups) == 0 || len(r.Resources) == 0 || len(r.Verbs) == 0 {
			continue
		}
		resource, sub, _ := strings.Cut(r.Resources[0], "/")
		attrs := &authorizationv1.ResourceAttributes{
			Namespace: ns, Group: r.APIGroups[0], Resource: resource, Subresource: sub, Verb: r.Verbs[0],
		}
		Eventually(t, ctx, fmt.Sprintf("%s allowed to %s %s", user, r.Verbs[0], r.Resources[0]), 30*time.Second, func() (bool, string) {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: attrs}}
			if err := c.Create(ctx, sar); err != nil {
				return false, err.Error()
			}
			return sar.Status.Allowed, fmt.Sprintf("not allowed yet: %s", sar.Status.Reason)
		})
	}
}
