package cli

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/store"
)

// scheme decodes convoy's objects as the server sends them (no defaulting) and
// sets their apiVersion and kind for -o yaml|json.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(v1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

var parameterCodec = runtime.NewParameterCodec(scheme)

// Client talks to convoy.kumodo.io/v1alpha1 (and, for diff and completion, to the
// host cluster's core APIs). Every error it returns for a request is a *RequestError.
type Client struct {
	rest   rest.Interface
	kube   kubernetes.Interface
	config *rest.Config
}

// NewClient returns a Client of the cluster that cfg names.
func NewClient(cfg *rest.Config) (*Client, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &v1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme)}
	c.ContentType = runtime.ContentTypeJSON
	if c.UserAgent == "" {
		c.UserAgent = "kubectl-convoy"
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating a client of convoy.kumodo.io: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a client of the cluster: %w", err)
	}
	return &Client{rest: rc, kube: kube, config: cfg}, nil
}

// request names one API request, for error messages.
type request struct {
	verb, resource, subresource, namespace, name string
}

// fail turns an API error into a *RequestError, finding out whether the API group is
// installed at all when the server answered 404.
func (c *Client) fail(ctx context.Context, r request, err error) error {
	if err == nil {
		return nil
	}
	e := &RequestError{Verb: r.verb, Resource: r.resource, Subresource: r.subresource, Namespace: r.namespace, Name: r.name, Err: err}
	if apierrors.IsNotFound(err) {
		installed, served := c.served(r.resource)
		e.APIMissing = !installed
		e.ResourceMissing = installed && !served
		if installed && served && r.name != "" {
			e.Suggestions = c.similarNames(ctx, r.resource, r.namespace, r.name)
		}
	}
	return e
}

// served asks discovery whether the host serves convoy.kumodo.io/v1alpha1 at all, and
// whether it serves resource in it (an older convoy lacks the newer kinds). Both are
// true when discovery cannot tell.
func (c *Client) served(resource string) (installed, served bool) {
	list, err := c.kube.Discovery().ServerResourcesForGroupVersion(v1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, false
	}
	if err != nil || list == nil {
		return true, true
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, true
		}
	}
	return true, false
}

// similarNames are the names of the namespace's Releases (ReleaseSets, Alerts,
// Receivers) close to name; none when they cannot be listed or for another resource.
func (c *Client) similarNames(ctx context.Context, resource, ns, name string) []string {
	var names []string
	switch resource {
	case v1.ResourceReleases:
		list := &v1.ReleaseList{}
		if err := c.rest.Get().Namespace(ns).Resource(resource).Do(ctx).Into(list); err != nil {
			return nil
		}
		for _, r := range list.Items {
			names = append(names, r.Name)
		}
	case v1.ResourceReleaseSets:
		list := &v1.ReleaseSetList{}
		if err := c.rest.Get().Namespace(ns).Resource(resource).Do(ctx).Into(list); err != nil {
			return nil
		}
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
	case v1.ResourceAlerts:
		list := &v1.AlertList{}
		if err := c.rest.Get().Namespace(ns).Resource(resource).Do(ctx).Into(list); err != nil {
			return nil
		}
		for _, a := range list.Items {
			names = append(names, a.Name)
		}
	case v1.ResourceReceivers:
		list := &v1.ReceiverList{}
		if err := c.rest.Get().Namespace(ns).Resource(resource).Do(ctx).Into(list); err != nil {
			return nil
		}
		for _, r := range list.Items {
			names = append(names, r.Name)
		}
	default:
		return nil
	}
	return DidYouMean(name, names)
}

// GetRelease reads one Release.
func (c *Client) GetRelease(ctx context.Context, ns, name string) (*v1.Release, error) {
	out := &v1.Release{}
	err := c.rest.Get().Namespace(ns).Resource(v1.ResourceReleases).Name(name).Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "get", resource: v1.ResourceReleases, namespace: ns, name: name}, err)
}

// ListReleases lists the Releases of ns, or of every namespace when ns is empty,
// sorted by namespace and name.
func (c *Client) ListReleases(ctx context.Context, ns string) (*v1.ReleaseList, error) {
	out := &v1.ReleaseList{}
	if err := c.list(ctx, v1.ResourceReleases, ns, out); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out.Items, byNamespaceAndName)
	return out, nil
}

// list lists resource in ns, or in every namespace when ns is empty, into out.
func (c *Client) list(ctx context.Context, resource, ns string, out runtime.Object) error {
	req := c.rest.Get().Resource(resource)
	if ns != "" {
		req = req.Namespace(ns)
	}
	if err := req.Do(ctx).Into(out); err != nil {
		return c.fail(ctx, request{verb: "list", resource: resource, namespace: ns}, err)
	}
	return nil
}

// byNamespaceAndName orders objects by namespace, then name.
func byNamespaceAndName[T any, PT interface {
	*T
	GetNamespace() string
	GetName() string
}](a, b T) int {
	pa, pb := PT(&a), PT(&b)
	if c := strings.Compare(pa.GetNamespace(), pb.GetNamespace()); c != 0 {
		return c
	}
	return strings.Compare(pa.GetName(), pb.GetName())
}

// Sync POSTs releases/<name>/sync (?force=true with opts.Force, ?render=REF with opts.Render:
// the request approves that render only, 409 Conflict when it is no longer current) and
// returns the Release it wrote.
func (c *Client) Sync(ctx context.Context, ns, name string, opts v1.SyncOptions) (*v1.Release, error) {
	req := c.rest.Post().Namespace(ns).Resource(v1.ResourceReleases).Name(name).SubResource(v1.SubresourceSync)
	if opts.Force {
		req = req.Param("force", "true")
	}
	if opts.Render != "" {
		req = req.Param("render", opts.Render)
	}
	out := &v1.Release{}
	err := req.Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "create", resource: v1.ResourceReleases, subresource: v1.SubresourceSync, namespace: ns, name: name}, err)
}

// MergePatch sends a JSON merge patch to releases/<name>/<subresource>.
func (c *Client) MergePatch(ctx context.Context, ns, name, subresource string, patch []byte) (*v1.Release, error) {
	out := &v1.Release{}
	err := c.rest.Patch(types.MergePatchType).Namespace(ns).Resource(v1.ResourceReleases).Name(name).
		SubResource(subresource).Body(patch).Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "patch", resource: v1.ResourceReleases, subresource: subresource, namespace: ns, name: name}, err)
}

// ListRenders lists the Renders of a Release, newest first.
func (c *Client) ListRenders(ctx context.Context, ns, release string) ([]v1.Render, error) {
	items, err := store.ListRenders(ctx, c.Reader(), ns, release)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i].CreationTimestamp, items[j].CreationTimestamp
		if !a.Equal(&b) {
			return b.Before(&a)
		}
		return items[i].Name < items[j].Name
	})
	return items, nil
}

// ListClusters lists the Clusters by name.
func (c *Client) ListClusters(ctx context.Context) (*v1.ClusterList, error) {
	out := &v1.ClusterList{}
	if err := c.rest.Get().Resource(v1.ResourceClusters).Do(ctx).Into(out); err != nil {
		return nil, c.fail(ctx, request{verb: "list", resource: v1.ResourceClusters}, err)
	}
	sort.SliceStable(out.Items, func(i, j int) bool { return out.Items[i].Name < out.Items[j].Name })
	return out, nil
}

// GetCluster reads one Cluster.
func (c *Client) GetCluster(ctx context.Context, name string) (*v1.Cluster, error) {
	out := &v1.Cluster{}
	err := c.rest.Get().Resource(v1.ResourceClusters).Name(name).Do(ctx).Into(out)
	return out, c.fail(ctx, request{verb: "get", resource: v1.ResourceClusters, name: name}, err)
}

// ListNamespaces lists the host cluster's namespace names (completion of -n).
func (c *Client) ListNamespaces(ctx context.Context) ([]string, error) {
	list, err := c.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	return names, nil
}

// CreateRelease creates rel.
func (c *Client) CreateRelease(ctx context.Context, rel *v1.Release) (*v1.Release, error) {
	out := &v1.Release{}
	err := c.rest.Post().Namespace(rel.Namespace).Resource(v1.ResourceReleases).Body(rel).Do(ctx).Into(out)
	if apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("release %s/%s exists already: choose another name with --name, or see kubectl convoy release status %s -n %s",
			rel.Namespace, rel.Name, rel.Name, rel.Namespace)
	}
	return out, c.fail(ctx, request{verb: "create", resource: v1.ResourceReleases, namespace: rel.Namespace, name: rel.Name}, err)
}
