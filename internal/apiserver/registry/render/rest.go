package render

import (
	"context"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
)

// redactingREST serves Renders as stored to users who may read the Secrets of the
// Render's namespace, and with the data of rendered Secrets replaced by digests
// (RedactSecrets) to everyone else: get, list and watch. Writes need rights that only
// convoy's controller and namespace editors hold, who may read Secrets anyway.
type redactingREST struct {
	*registry.REST
	access SecretsAccess
}

// Get returns the Render, redacted for the user when needed.
func (r *redactingREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.REST.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return r.forUser(ctx, newAccessCache(r.access), obj), nil
}

// List returns the Renders, each redacted for the user when needed.
func (r *redactingREST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	obj, err := r.REST.List(ctx, options)
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*convoyv1alpha1.RenderList)
	if !ok {
		return obj, nil
	}
	access := newAccessCache(r.access)
	var out *convoyv1alpha1.RenderList
	for i := range list.Items {
		redacted := r.forUser(ctx, access, &list.Items[i])
		if redacted == &list.Items[i] {
			continue
		}
		if out == nil { // the list may be the watch cache's: copy before changing it
			out = list.DeepCopy()
		}
		out.Items[i] = *redacted.(*convoyv1alpha1.Render)
	}
	if out == nil {
		return list, nil
	}
	return out, nil
}

// Watch streams the Renders' events, each object redacted for the user when needed.
func (r *redactingREST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	w, err := r.REST.Watch(ctx, options)
	if err != nil {
		return nil, err
	}
	access := newAccessCache(r.access)
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		if e.Type != watch.Error && e.Object != nil {
			e.Object = r.forUser(ctx, access, e.Object)
		}
		return e, true
	}), nil
}

// forUser returns obj itself when the user may read its namespace's Secrets or it
// holds no Secret, else a redacted copy. A Render whose manifests cannot be read is
// served without them.
func (r *redactingREST) forUser(ctx context.Context, access *accessCache, obj runtime.Object) runtime.Object {
	rd, ok := obj.(*convoyv1alpha1.Render)
	if !ok || len(rd.Manifests) == 0 || access.mayRead(ctx, rd.Namespace) {
		return obj
	}
	manifests, changed, err := RedactSecrets(rd.Manifests)
	if err == nil && !changed {
		return obj
	}
	out := rd.DeepCopy()
	out.Manifests = manifests // nil when unreadable: never serve what could not be checked
	return out
}

// accessCache asks once per namespace within one request (or watch).
type accessCache struct {
	access SecretsAccess
	seen   map[string]bool
}

func newAccessCache(a SecretsAccess) *accessCache {
	return &accessCache{access: a, seen: map[string]bool{}}
}

func (c *accessCache) mayRead(ctx context.Context, namespace string) bool {
	if may, ok := c.seen[namespace]; ok {
		return may
	}
	may := c.access.MayReadSecrets(ctx, namespace)
	c.seen[namespace] = may
	return may
}
