package apiserver

import (
	"context"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// anyNameFirst wraps convoy apiserver's delegated authorizer so that a request for one
// named object (get, update, patch, delete of releases/<name>, its subresources, ...)
// is first asked as the same request for every name of that resource in that
// namespace (the name left empty, which is what an empty name means to Kubernetes
// authorization: RBAC allows it only by a rule without resourceNames, and such a rule
// allows every name). An Allow for every name is an Allow for this name; anything else
// falls back to the request as it is, so a user whose rules list resourceNames keeps
// exactly the answers they had.
//
// Why: the delegated authorizer caches kube-apiserver's SubjectAccessReview answers by
// the whole request, name included, so every new object missed the cache and cost a
// SubjectAccessReview (about 4 per Release created, from the controller's and the
// observer's writes to each new Release and ReleaseInventory; bench/e2e). Asked
// without the name, the answer is cached per user, verb, resource and namespace.
type anyNameFirst struct {
	authorizer.Authorizer
}

// Authorize implements authorizer.Authorizer.
func (a anyNameFirst) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if anyName, ok := forAnyName(attrs); ok {
		if d, reason, err := a.Authorizer.Authorize(ctx, anyName); err == nil && d == authorizer.DecisionAllow {
			return d, reason, nil
		}
	}
	return a.Authorizer.Authorize(ctx, attrs)
}

// ConditionsAwareAuthorize implements authorizer.Authorizer the same way: an
// unconditional Allow for every name answers; anything else (a conditional answer
// included) falls back to the request as it is.
func (a anyNameFirst) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	if anyName, ok := forAnyName(attrs); ok {
		if d := a.Authorizer.ConditionsAwareAuthorize(ctx, anyName); d.IsAllow() && d.Error() == nil {
			return d
		}
	}
	return a.Authorizer.ConditionsAwareAuthorize(ctx, attrs)
}

// forAnyName is attrs for every name of its resource in its namespace, and whether
// attrs is a resource request for one named object (otherwise there is nothing to
// widen).
func forAnyName(attrs authorizer.Attributes) (authorizer.AttributesRecord, bool) {
	if !attrs.IsResourceRequest() || attrs.GetName() == "" {
		return authorizer.AttributesRecord{}, false
	}
	r := authorizer.AttributesRecord{
		User:            attrs.GetUser(),
		Verb:            attrs.GetVerb(),
		Namespace:       attrs.GetNamespace(),
		APIGroup:        attrs.GetAPIGroup(),
		APIVersion:      attrs.GetAPIVersion(),
		Resource:        attrs.GetResource(),
		Subresource:     attrs.GetSubresource(),
		ResourceRequest: true,
		Path:            attrs.GetPath(),
	}
	r.FieldSelectorRequirements, r.FieldSelectorParsingErr = attrs.GetFieldSelector()
	r.LabelSelectorRequirements, r.LabelSelectorParsingErr = attrs.GetLabelSelector()
	return r, true
}
