package apiserver

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	clocktesting "k8s.io/utils/clock/testing"
)

// The decision cache answers a repeated request from its cache for the TTL of its
// answer, asks again after it, at once after an RBAC change, and keeps no answer
// given within rbacSettle of an RBAC change longer than that while it watches RBAC.
func TestDecisionCache(t *testing.T) {
	get := func(name string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "alice", Groups: []string{"dev"}}, Verb: "get",
			Namespace: "team", APIGroup: "convoy.kumodo.io", Resource: "releases", Name: name, ResourceRequest: true}
	}
	const allowed = "get team/releases//podinfo"
	type step struct {
		advance     time.Duration
		rbacChange  bool
		revoke      bool // the delegate stops allowing
		request     string
		wantAsked   bool
		wantAllowed bool
	}
	tests := map[string]struct {
		watching bool
		steps    []step
	}{
		"an allow is kept for its TTL": {steps: []step{
			{request: "podinfo", wantAsked: true, wantAllowed: true},
			{advance: 9 * time.Second, revoke: true, request: "podinfo", wantAllowed: true},
			{advance: 2 * time.Second, request: "podinfo", wantAsked: true},
		}},
		"a denial is kept for its TTL, per name": {steps: []step{
			{request: "other", wantAsked: true},
			{request: "other"},
			{request: "podinfo", wantAsked: true, wantAllowed: true},
			{advance: 6 * time.Second, request: "other", wantAsked: true},
		}},
		"an RBAC change forgets every answer": {watching: true, steps: []step{
			{advance: time.Minute, request: "podinfo", wantAsked: true, wantAllowed: true},
			{revoke: true, rbacChange: true, request: "podinfo", wantAsked: true},
		}},
		"an answer right after an RBAC change is kept until rbacSettle ends": {watching: true, steps: []step{
			{rbacChange: true, request: "podinfo", wantAsked: true, wantAllowed: true},
			{advance: rbacSettle / 2, request: "podinfo", wantAllowed: true},
			{advance: rbacSettle/2 + time.Millisecond, revoke: true, request: "podinfo", wantAsked: true},
			{advance: 4 * time.Second, request: "podinfo"},
		}},
		"without the RBAC watch no settle time applies": {steps: []step{
			{rbacChange: true, request: "podinfo", wantAsked: true, wantAllowed: true},
			{request: "podinfo", wantAllowed: true},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC))
			delegate := &askLog{allow: map[string]bool{allowed: true}}
			c := newDecisionCache(delegate, 10*time.Second, 5*time.Second, clk)
			c.rbacSynced = func() bool { return tc.watching }
			for i, s := range tc.steps {
				clk.Step(s.advance)
				if s.revoke {
					delete(delegate.allow, allowed)
				}
				if s.rbacChange {
					c.rbacChanged()
				}
				before := len(delegate.asked)
				d, _, err := c.Authorize(context.Background(), get(s.request))
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				got := struct{ Asked, Allowed bool }{len(delegate.asked) > before, d == authorizer.DecisionAllow}
				want := struct{ Asked, Allowed bool }{s.wantAsked, s.wantAllowed}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// Answers differ by user, group and request; requests with selectors are not cached.
func TestCacheKey(t *testing.T) {
	base := authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "alice", Groups: []string{"a", "b"}}, Verb: "get",
		Namespace: "team", Resource: "releases", Name: "x", ResourceRequest: true}
	key := func(a authorizer.AttributesRecord) string {
		k, ok := cacheKey(a)
		if !ok {
			return ""
		}
		return k
	}
	same := base
	same.User = &user.DefaultInfo{Name: "alice", Groups: []string{"b", "a"}}
	if key(same) != key(base) {
		t.Errorf("the groups' order changed the key")
	}
	for name, change := range map[string]func(a *authorizer.AttributesRecord){
		"user": func(a *authorizer.AttributesRecord) {
			a.User = &user.DefaultInfo{Name: "bob", Groups: []string{"a", "b"}}
		},
		"group": func(a *authorizer.AttributesRecord) { a.User = &user.DefaultInfo{Name: "alice", Groups: []string{"a"}} },
		"extra": func(a *authorizer.AttributesRecord) {
			a.User = &user.DefaultInfo{Name: "alice", Groups: []string{"a", "b"}, Extra: map[string][]string{"k": {"v"}}}
		},
		"verb":        func(a *authorizer.AttributesRecord) { a.Verb = "delete" },
		"namespace":   func(a *authorizer.AttributesRecord) { a.Namespace = "other" },
		"name":        func(a *authorizer.AttributesRecord) { a.Name = "y" },
		"subresource": func(a *authorizer.AttributesRecord) { a.Subresource = "sync" },
	} {
		a := base
		change(&a)
		if key(a) == key(base) {
			t.Errorf("%s: the same key", name)
		}
	}
	samePath := base
	samePath.Path = "/apis/convoy.kumodo.io/v1alpha1/namespaces/team/releases/x"
	if key(samePath) != key(base) {
		t.Errorf("a resource request's path changed the key")
	}
	withSelector := base
	withSelector.LabelSelectorRequirements = make(labels.Requirements, 1)
	if _, ok := cacheKey(withSelector); ok {
		t.Errorf("a request with a label selector is cached")
	}
}
