package releaseset

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
)

// ReleaseVerbs are what a user must be allowed on releases in a namespace to create or
// update a ReleaseSet there: the set's controller creates, updates and deletes
// Releases with its own identity, so the set must not give its writer more than they
// have.
var ReleaseVerbs = []string{"create", "update", "delete"}

// ReleasesAccess says whether the user of a request may do verb on releases in a
// namespace. allowed is false with a reason when not; err when it cannot tell.
type ReleasesAccess interface {
	MayWriteReleases(ctx context.Context, namespace, verb string) (allowed bool, reason string, err error)
}

// AuthorizerAccess answers with the API server's authorizer (kube-apiserver's RBAC,
// through a SubjectAccessReview, cached per user, verb and namespace).
type AuthorizerAccess struct {
	Authorizer authorizer.Authorizer
}

// MayWriteReleases asks the authorizer for verb on releases.convoy.kumodo.io in namespace.
func (a AuthorizerAccess) MayWriteReleases(ctx context.Context, namespace, verb string) (bool, string, error) {
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return false, "the request has no user", nil
	}
	if a.Authorizer == nil {
		return false, "", fmt.Errorf("no authorizer")
	}
	decision, reason, err := a.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: user, Verb: verb, Namespace: namespace, APIGroup: convoyv1alpha1.GroupName,
		APIVersion: convoyv1alpha1.Version, Resource: convoyv1alpha1.ResourceReleases, ResourceRequest: true,
	})
	if decision == authorizer.DecisionAllow {
		return true, "", nil
	}
	return false, reason, err
}

// tenantREST is the main resource of ReleaseSets: a create or update (PUT, PATCH,
// server-side apply, dry runs included) is refused with 403 unless the user may also
// create, update and delete releases in the namespace. Deletes, reads and the
// subresources are not checked: RBAC on releasesets decides them.
type tenantREST struct {
	*registry.REST
	access ReleasesAccess
}

// Create checks the user's rights on releases, then creates.
func (r *tenantREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc,
	options *metav1.CreateOptions) (runtime.Object, error) {
	name := ""
	if s, ok := obj.(*convoyv1alpha1.ReleaseSet); ok {
		name = s.Name
	}
	if err := r.authorize(ctx, name); err != nil {
		return nil, err
	}
	return r.REST.Create(ctx, obj, createValidation, options)
}

// Update checks the user's rights on releases, then updates.
func (r *tenantREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo,
	createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if err := r.authorize(ctx, name); err != nil {
		return nil, false, err
	}
	return r.REST.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// authorize is nil when the user of ctx may do every ReleaseVerb on releases in the
// namespace of ctx; else 403 naming the first verb missing, or 500 when the
// authorizer cannot tell.
func (r *tenantREST) authorize(ctx context.Context, name string) error {
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	user := "the user"
	if u, ok := genericapirequest.UserFrom(ctx); ok {
		user = fmt.Sprintf("user %q", u.GetName())
	}
	for _, verb := range ReleaseVerbs {
		allowed, reason, err := r.access.MayWriteReleases(ctx, namespace, verb)
		if allowed {
			continue
		}
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("checking whether %s may %s releases in namespace %q: %w", user, verb, namespace, err))
		}
		msg := fmt.Sprintf("%s cannot %s resource %q in API group %q in the namespace %q, "+
			"and a ReleaseSet writes Releases: writing one needs %v on releases", user, verb,
			convoyv1alpha1.ResourceReleases, convoyv1alpha1.GroupName, namespace, ReleaseVerbs)
		if reason != "" {
			msg += " (" + reason + ")"
		}
		return apierrors.NewForbidden(convoyv1alpha1.Resource(convoyv1alpha1.ResourceReleaseSets), name, fmt.Errorf("%s", msg))
	}
	return nil
}
