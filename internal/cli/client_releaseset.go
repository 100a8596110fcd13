package cli

import (
	"context"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// GetReleaseSet reads one ReleaseSet.
func (c *Client) GetReleaseSet(ctx context.Context, ns, name string) (*v1.ReleaseSet, error) {
	out := &v1.ReleaseSet{}
	err := c.rest.Get().Namespace(ns).Resource(v1.ResourceReleaseSets).Name(name).Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "get", resource: v1.ResourceReleaseSets, namespace: ns, name: name}, err)
}

// ListReleaseSets lists the ReleaseSets of ns, or of every namespace when ns is
// empty, sorted by namespace and name.
func (c *Client) ListReleaseSets(ctx context.Context, ns string) (*v1.ReleaseSetList, error) {
	out := &v1.ReleaseSetList{}
	if err := c.list(ctx, v1.ResourceReleaseSets, ns, out); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out.Items, byNamespaceAndName)
	return out, nil
}

// ListSetReleases lists the Releases that the ReleaseSet set writes (by the label
// convoy.kumodo.io/release-set), sorted by Cluster and name.
func (c *Client) ListSetReleases(ctx context.Context, ns, set string) ([]v1.Release, error) {
	out := &v1.ReleaseList{}
	sel := labels.SelectorFromSet(labels.Set{v1.LabelReleaseSet: v1.LabelValue(set)}).String()
	err := c.rest.Get().Namespace(ns).Resource(v1.ResourceReleases).
		VersionedParams(&metav1.ListOptions{LabelSelector: sel}, parameterCodec).Do(ctx).Into(out)
	if err != nil {
		return nil, c.fail(ctx, request{verb: "list", resource: v1.ResourceReleases, namespace: ns}, err)
	}
	items := out.Items
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Spec.Cluster != items[j].Spec.Cluster {
			return items[i].Spec.Cluster < items[j].Spec.Cluster
		}
		return items[i].Name < items[j].Name
	})
	return items, nil
}

// Promote POSTs releasesets/<name>/promote, which acknowledges a held mass removal or
// approves the Manual stage that waits for approval, and returns the ReleaseSet the server wrote.
func (c *Client) Promote(ctx context.Context, ns, name string) (*v1.ReleaseSet, error) {
	out := &v1.ReleaseSet{}
	err := c.rest.Post().Namespace(ns).Resource(v1.ResourceReleaseSets).Name(name).SubResource(v1.SubresourcePromote).
		Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "create", resource: v1.ResourceReleaseSets, subresource: v1.SubresourcePromote, namespace: ns, name: name}, err)
}

// PatchReleaseSet merge-patches the ReleaseSet name (spec.paused for pause and
// resume) and returns the ReleaseSet the server wrote.
func (c *Client) PatchReleaseSet(ctx context.Context, ns, name string, patch []byte) (*v1.ReleaseSet, error) {
	out := &v1.ReleaseSet{}
	err := c.rest.Patch(types.MergePatchType).Namespace(ns).Resource(v1.ResourceReleaseSets).Name(name).Body(patch).Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "patch", resource: v1.ResourceReleaseSets, namespace: ns, name: name}, err)
}
