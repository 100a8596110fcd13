package observer

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Syncer sends POST …/releases/<name>/sync (no force) for a Release.
type Syncer interface {
	// Sync approves render, a full render ref (…/sync?render=<render>): the API
	// server answers 409 Conflict (apierrors.IsConflict) when it is no longer the
	// Release's current (or pinned) render. An empty render sends the plain /sync,
	// which approves any render.
	Sync(ctx context.Context, namespace, name, render string) error
}

// restSyncer posts /sync through the host's API server, under the observer's identity
// (RBAC: create on releases/sync), as a person's request would go.
type restSyncer struct {
	rest rest.Interface
}

// NewSyncer returns a Syncer on the host cluster of cfg.
func NewSyncer(cfg *rest.Config) (Syncer, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &v1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = Name
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("make the /sync client: %w", err)
	}
	return &restSyncer{rest: rc}, nil
}

// Sync implements Syncer.
func (s *restSyncer) Sync(ctx context.Context, namespace, name, render string) error {
	req := s.rest.Post().Namespace(namespace).Resource(v1.ResourceReleases).Name(name).
		SubResource(v1.SubresourceSync)
	if render != "" {
		req = req.Param("render", render)
	}
	return req.Do(ctx).Error()
}
