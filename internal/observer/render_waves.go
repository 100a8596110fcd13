package observer

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// renderWaves remembers, per Release, the sync wave of each object of the render it is
// applying wave by wave (health.ReleaseView.RenderWaves). A Render never changes, so
// one read per render is enough; only the last render of each Release is kept.
type renderWaves struct {
	mu    sync.Mutex
	known map[types.NamespacedName]wavesOfRender
}

type wavesOfRender struct {
	ref   string
	waves map[v1.ObjectReference]int32
}

// renderWavesOf returns the waves of the objects of render ref of rel, reading its Render object
// the first time.
func (o *Observer) renderWavesOf(ctx context.Context, rel *v1.Release, ref string) (map[v1.ObjectReference]int32, error) {
	key := types.NamespacedName{Namespace: rel.Namespace, Name: rel.Name}
	c := &o.renderWaves
	c.mu.Lock()
	w, ok := c.known[key]
	c.mu.Unlock()
	if ok && w.ref == ref {
		return w.waves, nil
	}
	objs, err := o.readRender(ctx, rel, ref)
	if err != nil {
		return nil, err
	}
	waves := make(map[v1.ObjectReference]int32, len(objs))
	for _, ob := range objs {
		gvk := ob.GroupVersionKind()
		waves[v1.ObjectReference{Group: gvk.Group, Kind: gvk.Kind, Namespace: ob.GetNamespace(), Name: ob.GetName()}] = ob.Wave
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil {
		c.known = map[types.NamespacedName]wavesOfRender{}
	}
	c.known[key] = wavesOfRender{ref: ref, waves: waves}
	return waves, nil
}

// forget drops what is kept of a Release that is gone.
func (c *renderWaves) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.known, key)
}
