package apiserver

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/clock"
)

// rbacSettle is how long after an RBAC change the cache keeps an answer at most: the
// host's own RBAC authorizer sees a change from its informer, which may run a little
// behind convoy apiserver's, and an answer it gave from the old rules must not be kept
// for a whole TTL.
const rbacSettle = 2 * time.Second

// decisionCache caches the answers of convoy apiserver's delegated authorizer (the
// SubjectAccessReviews it sends kube-apiserver) for allowTTL (Allow) or denyTTL
// (anything else; errors are never cached), like the delegated authorizer's own cache
// (--authorization-webhook-cache-authorized-ttl / -unauthorized-ttl, 10 s), which
// Options.config turns off in favour of this one. In addition, while it watches the
// host's RBAC objects (rbacSynced), every change of a Role, ClusterRole, RoleBinding
// or ClusterRoleBinding forgets every answer (rbacChanged), and answers given in the next rbacSettle
// are kept only until it ends: a revoked permission takes
// effect as soon as convoy apiserver sees the change, not up to a TTL later. Without
// that watch (a host that does not let convoy apiserver read RBAC) it is the TTL
// cache it replaces.
type decisionCache struct {
	authorizer.Authorizer
	allowTTL, denyTTL time.Duration
	clock             clock.Clock
	// rbacSynced reports whether the RBAC informers have synced (nil: never).
	rbacSynced func() bool

	mu         sync.Mutex
	generation uint64    // counts RBAC changes
	changedAt  time.Time // of the last RBAC change
	answers    *cache.LRUExpireCache
}

type cachedAnswer struct {
	generation uint64
	decision   authorizer.Decision
	reason     string
}

// maxCachedAnswers bounds the cache as the delegated authorizer's own (8,192 entries).
const maxCachedAnswers = 8192

func newDecisionCache(a authorizer.Authorizer, allowTTL, denyTTL time.Duration, c clock.Clock) *decisionCache {
	return &decisionCache{Authorizer: a, allowTTL: allowTTL, denyTTL: denyTTL, clock: c,
		answers: cache.NewLRUExpireCacheWithClock(maxCachedAnswers, c)}
}

// rbacChanged forgets every answer; those given in the next rbacSettle are kept only
// until it ends.
func (c *decisionCache) rbacChanged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.changedAt = c.clock.Now()
	c.answers.RemoveAll(func(any) bool { return true })
}

// Authorize implements authorizer.Authorizer.
func (c *decisionCache) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	key, ok := cacheKey(attrs)
	if !ok {
		return c.Authorizer.Authorize(ctx, attrs)
	}
	c.mu.Lock()
	generation := c.generation
	if v, found := c.answers.Get(key); found && v.(cachedAnswer).generation == generation {
		c.mu.Unlock()
		a := v.(cachedAnswer)
		return a.decision, a.reason, nil
	}
	c.mu.Unlock()

	d, reason, err := c.Authorizer.Authorize(ctx, attrs)
	if err != nil {
		return d, reason, err
	}
	ttl := c.denyTTL
	if d == authorizer.DecisionAllow {
		ttl = c.allowTTL
	}
	if ttl <= 0 {
		return d, reason, nil
	}
	watching := c.rbacSynced != nil && c.rbacSynced()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation != generation {
		return d, reason, nil // RBAC changed while it was asked: the answer may predate it
	}
	// Right after an RBAC change kube-apiserver may have answered from the rules before
	// it: such an answer is kept only until rbacSettle has passed.
	if left := rbacSettle - c.clock.Since(c.changedAt); watching && left > 0 && left < ttl {
		ttl = left
	}
	c.answers.Add(key, cachedAnswer{generation: generation, decision: d, reason: reason}, ttl)
	return d, reason, nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer: the delegated
// authorizer gives unconditional answers only (its SubjectAccessReviews).
func (c *decisionCache) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(c.Authorize(ctx, attrs))
}

// cacheKey is what an answer depends on: the user (name, UID, groups, extra) and the
// request's attributes (for a resource request not its path, which its
// SubjectAccessReview does not carry); false for requests with selectors (field and label selectors
// may be part of the answer; they are not cached, as small as the gain would be).
func cacheKey(attrs authorizer.Attributes) (string, bool) {
	if fs, err := attrs.GetFieldSelector(); len(fs) > 0 || err != nil {
		return "", false
	}
	if ls, err := attrs.GetLabelSelector(); len(ls) > 0 || err != nil {
		return "", false
	}
	type key struct {
		User, UID                                                  string
		Groups                                                     []string
		Extra                                                      map[string][]string
		Verb, Namespace, Group, Version, Resource, Sub, Name, Path string
		ResourceRequest                                            bool
	}
	k := key{Verb: attrs.GetVerb(), Namespace: attrs.GetNamespace(), Group: attrs.GetAPIGroup(), Version: attrs.GetAPIVersion(),
		Resource: attrs.GetResource(), Sub: attrs.GetSubresource(), Name: attrs.GetName(),
		ResourceRequest: attrs.IsResourceRequest()}
	if !k.ResourceRequest {
		k.Path = attrs.GetPath() // a resource request's answer does not depend on its path (nor does its review carry it)
	}
	if u := attrs.GetUser(); u != nil {
		k.User, k.UID, k.Extra = u.GetName(), u.GetUID(), u.GetExtra()
		k.Groups = append([]string(nil), u.GetGroups()...)
		sort.Strings(k.Groups)
	}
	b, err := json.Marshal(k)
	if err != nil {
		return "", false
	}
	return string(b), true
}
