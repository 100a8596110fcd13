package store

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/manifest"
)

// GetRender reads the Render of the render ref of the Release namespace/release,
// manifests included; nil when it does not exist, when the API has no Renders (a
// NoMatch error), or when the Render of that name is of another render (two refs of
// the same short name).
func GetRender(ctx context.Context, r client.Reader, namespace, release, ref string) (*v1.Render, error) {
	obj := &v1.Render{}
	key := client.ObjectKey{Namespace: namespace, Name: v1.RenderRef(ref).RenderName(release)}
	err := r.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read Render %s: %w", key, err)
	case obj.RenderRef != ref:
		return nil, nil // another render with the same short name
	}
	return obj, nil
}

// FindRender reads the Render of the render ref of the Release namespace/release: by
// its name (GetRender), else by the field selectors of its Release and ref (a Render
// whose name is not the one its ref gives). Unlike GetRender, a Render that is not
// found is an error, which names what is kept and how to list it.
func FindRender(ctx context.Context, r client.Reader, namespace, release, ref string) (*v1.Render, error) {
	obj := &v1.Render{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: v1.RenderRef(ref).RenderName(release)}, obj)
	if err == nil && obj.RenderRef == ref {
		return obj, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	var list v1.RenderList
	sel := fields.AndSelectors(fields.OneTermEqualSelector(v1.FieldRenderRelease, release), fields.OneTermEqualSelector(v1.FieldRenderRef, ref))
	if err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("release %s/%s has no Render %s (kept: the current, last successful, rolled out and pinned renders and the 10 most recent; see kubectl convoy release history %s)", namespace, release, ref, release)
	}
	return &list.Items[0], nil
}

// GetRenderNamed reads the Render name from r; nil when it does not exist.
func GetRenderNamed(ctx context.Context, r client.Reader, namespace, name string) (*v1.Render, error) {
	obj := &v1.Render{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read Render %s/%s: %w", namespace, name, err)
	}
	return obj, nil
}

// ListRenders lists the Renders of the Release namespace/release (by its label), in
// the order r returns them.
func ListRenders(ctx context.Context, r client.Reader, namespace, release string) ([]v1.Render, error) {
	var list v1.RenderList
	if err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{v1.LabelRelease: v1.LabelValue(release)}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// Objects decodes the manifests of a Render, chart hooks included.
func Objects(obj *v1.Render) ([]*unstructured.Unstructured, error) {
	us, err := manifest.Decode(obj.Manifests)
	if err != nil {
		return nil, fmt.Errorf("read the manifests of Render %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	return us, nil
}

// CreateRender creates a Render of obj without what the API server set on obj (its
// uid, resourceVersion, managed fields: obj may be a Render read back) and returns it
// as created; nil when a Render of its name exists already.
func CreateRender(ctx context.Context, c client.Writer, obj *v1.Render) (*v1.Render, error) {
	created := obj.DeepCopy()
	created.ObjectMeta = metav1.ObjectMeta{
		Name: obj.Name, Namespace: obj.Namespace, Labels: obj.Labels, Annotations: obj.Annotations,
		OwnerReferences: obj.OwnerReferences,
	}
	if err := c.Create(ctx, created); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("store Render %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	return created, nil
}

// DeleteRender deletes the Render name; one that is gone already is no error.
func DeleteRender(ctx context.Context, c client.Writer, namespace, name string) error {
	obj := &v1.Render{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Render %s/%s: %w", namespace, name, err)
	}
	return nil
}

// DeleteRenders deletes every Render of the Release namespace/release.
func DeleteRenders(ctx context.Context, c client.Writer, namespace, release string) error {
	if err := c.DeleteAllOf(ctx, &v1.Render{}, client.InNamespace(namespace),
		client.MatchingLabels{v1.LabelRelease: v1.LabelValue(release)}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the Renders of Release %s/%s: %w", namespace, release, err)
	}
	return nil
}

// The controller keeps the metadata of every Render in its cache (no manifests), to
// find a Release's earlier renders without a request.

// IndexRenderRelease indexes the cached Render metadata by the Release its label
// names (convoy.kumodo.io/release: v1.LabelValue of the Release's name), so that a
// reconcile reads its Release's Renders without going over every Render of the
// namespace: a label selector in a cache List is a filter over the namespace, O(N)
// per reconcile and O(N²) per round at N Releases in one namespace.
const IndexRenderRelease = "convoy.kumodo.io/render-release"

// IndexRenders adds IndexRenderRelease to the cache's Render metadata.
func IndexRenders(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, RenderMetadata(), IndexRenderRelease, indexRenderByRelease)
}

func indexRenderByRelease(o client.Object) []string {
	if name := o.GetLabels()[v1.LabelRelease]; name != "" {
		return []string{name}
	}
	return nil
}

// RenderMetadata is the object of the cache's Render metadata informer.
func RenderMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(v1.SchemeGroupVersion.WithKind("Render"))
	return m
}

// GetRenderMetadata reads the metadata of the Render name (from the cache of Render
// metadata, when r is the controller's client); nil when it does not exist.
func GetRenderMetadata(ctx context.Context, r client.Reader, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	m := RenderMetadata()
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, m)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read Render %s/%s: %w", namespace, name, err)
	}
	return m, nil
}

// ListRenderMetadata lists the metadata of the Renders of the Release
// namespace/release through IndexRenderRelease: r must be a cache with IndexRenders.
func ListRenderMetadata(ctx context.Context, r client.Reader, namespace, release string) ([]metav1.PartialObjectMetadata, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(v1.SchemeGroupVersion.WithKind("RenderList"))
	if err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{IndexRenderRelease: v1.LabelValue(release)}); err != nil {
		return nil, fmt.Errorf("list the Renders of Release %s/%s: %w", namespace, release, err)
	}
	return list.Items, nil
}

// PatchRenderMetadata writes the labels and annotations of patched, the metadata of
// a Render as read (orig) with them changed.
func PatchRenderMetadata(ctx context.Context, c client.Writer, patched, orig *metav1.PartialObjectMetadata) error {
	if err := c.Patch(ctx, patched, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("write the labels and annotations of Render %s/%s: %w", orig.Namespace, orig.Name, err)
	}
	return nil
}
