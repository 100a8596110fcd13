package cli

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Reader is c as the client.Reader that internal/store reads Renders and
// ReleaseInventories with, over c's REST client. A Get that finds nothing returns
// the API server's NotFound error as it is (the store's callers take it for "none");
// every other error is a *RequestError.
func (c *Client) Reader() client.Reader { return reader{c} }

type reader struct{ c *Client }

// resourceOf is the resource of convoy's API that obj (an object or a list) is of.
func resourceOf(obj runtime.Object) (string, error) {
	switch obj.(type) {
	case *v1.Render, *v1.RenderList:
		return v1.ResourceRenders, nil
	case *v1.ReleaseInventory, *v1.ReleaseInventoryList:
		return v1.ResourceReleaseInventories, nil
	}
	return "", fmt.Errorf("kubectl-convoy does not read %T through internal/store", obj)
}

func (r reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	resource, err := resourceOf(obj)
	if err != nil {
		return err
	}
	err = r.c.rest.Get().Namespace(key.Namespace).Resource(resource).Name(key.Name).Do(ctx).Into(obj)
	if apierrors.IsNotFound(err) {
		return err
	}
	return r.c.fail(ctx, request{verb: "get", resource: resource, namespace: key.Namespace, name: key.Name}, err)
}

func (r reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	resource, err := resourceOf(list)
	if err != nil {
		return err
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	err = r.c.rest.Get().Namespace(o.Namespace).Resource(resource).VersionedParams(o.AsListOptions(), parameterCodec).Do(ctx).Into(list)
	return r.c.fail(ctx, request{verb: "list", resource: resource, namespace: o.Namespace}, err)
}
