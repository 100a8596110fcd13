package releaseset

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
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
		return false, "", errors.New("no authorizer")
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

// tenantREST is the main resource of ReleaseSets: a create, or an update that changes
// spec (PUT, PATCH, server-side apply, dry runs included), is refused with 403 unless
// the user may also create, update and delete releases in the namespace. A write of
// metadata alone (labels, annotations, finalizers, owner references) changes no
// Release and is not checked, so that the garbage collector and the namespace
// controller, which may not create Releases, can still remove their finalizers.
// A delete (one or a collection) needs delete on releases, since the garbage
// collector then deletes the set's Releases. Reads and the subresources are not
// checked: RBAC on releasesets decides them.
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
	if err := r.authorize(ctx, name, ReleaseVerbs...); err != nil {
		return nil, err
	}
	return r.REST.Create(ctx, obj, createValidation, options)
}

// Delete checks that the user may delete releases, then deletes.
func (r *tenantREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc,
	options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if err := r.authorize(ctx, name, "delete"); err != nil {
		return nil, false, err
	}
	return r.REST.Delete(ctx, name, deleteValidation, options)
}

// DeleteCollection checks that the user may delete releases, then deletes.
func (r *tenantREST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc,
	options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	if err := r.authorize(ctx, "", "delete"); err != nil {
		return nil, err
	}
	return r.REST.DeleteCollection(ctx, deleteValidation, options, listOptions)
}

// Update updates; when the update creates the ReleaseSet or changes its spec, only
// after checking the user's rights on releases (inside the storage's
// read-modify-write, where the stored object is known).
func (r *tenantREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo,
	createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	checked := checkedObjectInfo{UpdatedObjectInfo: objInfo, authorize: func(ctx context.Context) error { return r.authorize(ctx, name, ReleaseVerbs...) }}
	return r.REST.Update(ctx, name, checked, createValidation, updateValidation, forceAllowCreate, options)
}

// checkedObjectInfo is the new object of an update, refused by authorize when it
// creates the ReleaseSet or changes its spec.
type checkedObjectInfo struct {
	rest.UpdatedObjectInfo
	authorize func(context.Context) error
}

// UpdatedObject returns the new object, or authorize's error.
func (i checkedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	obj, err := i.UpdatedObjectInfo.UpdatedObject(ctx, oldObj)
	if err != nil {
		return nil, err
	}
	if WritesReleases(obj, oldObj) {
		if err := i.authorize(ctx); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// WritesReleases reports whether an update from old to obj may change the Releases
// a set writes: it creates the set (old not stored yet) or changes its spec.
func WritesReleases(obj, old runtime.Object) bool {
	s, ok1 := obj.(*convoyv1alpha1.ReleaseSet)
	o, ok2 := old.(*convoyv1alpha1.ReleaseSet)
	if !ok1 || !ok2 || o.ResourceVersion == "" {
		return true
	}
	return !registry.Semantic.DeepEqual(s.Spec, o.Spec)
}

// authorize is nil when the user of ctx may do every verb on releases in the
// namespace of ctx; else 403 naming the first verb missing, or 500 when the
// authorizer cannot tell.
func (r *tenantREST) authorize(ctx context.Context, name string, verbs ...string) error {
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	user := "the user"
	if u, ok := genericapirequest.UserFrom(ctx); ok {
		user = fmt.Sprintf("user %q", u.GetName())
	}
	for _, verb := range verbs {
		allowed, reason, err := r.access.MayWriteReleases(ctx, namespace, verb)
		if allowed {
			continue
		}
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("checking whether %s may %s releases in namespace %q: %w", user, verb, namespace, err))
		}
		msg := fmt.Sprintf("%s cannot %s resource %q in API group %q in the namespace %q, "+
			"and a ReleaseSet writes Releases: this write of a ReleaseSet needs %v on releases", user, verb,
			convoyv1alpha1.ResourceReleases, convoyv1alpha1.GroupName, namespace, verbs)
		if reason != "" {
			msg += " (" + reason + ")"
		}
		return apierrors.NewForbidden(convoyv1alpha1.Resource(convoyv1alpha1.ResourceReleaseSets), name, errors.New(msg))
	}
	return nil
}
