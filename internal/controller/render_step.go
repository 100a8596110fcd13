package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/clusters"
	"kumodo.io/convoy/internal/release"
	"kumodo.io/convoy/internal/render"
)

// renderStep is steps 3 and 4: resolve and reach the target cluster, render the
// Release for it, store the Render object if it is new and decide status.render. A
// failure of the cluster or of the render is returned as the Result that stops the
// reconcile; an error is a failure to read or write convoy's own objects.
func (r *Reconciler) renderStep(ctx context.Context, st *state) (*release.Result, error) {
	rel := st.rel
	target, err := r.clusters.Resolve(ctx, rel)
	if err != nil {
		return notReady(err), nil
	}
	disc, err := target.Discovery()
	if err != nil {
		return notReady(&clusters.NotReadyError{Kind: clusters.Unreachable, Cluster: rel.Spec.Cluster,
			Message: "cannot read the API of the target cluster: check that it runs", Err: err}), nil
	}
	st.target = target

	creds, stop := r.credentials(ctx, rel)
	if stop != nil {
		return stop, nil
	}
	res, err := r.renderer.Render(ctx, render.Request{
		Release:      rel,
		Capabilities: render.CapabilitiesFromDiscovery(disc.KubeVersion, disc.Resources),
		Values:       render.ValuesReaderFunc(r.readValuesSource),
		Credentials:  creds,
	})
	if err != nil {
		reason := render.ReasonOf(err)
		if reason == "" {
			return nil, err // a cancelled context, or a bug: let the work queue retry
		}
		return &release.Result{Reason: reason, Message: err.Error()}, nil
	}
	st.render = res
	st.renderStatus = renderStatus(rel.Status.Render, res, st.now)
	if err := r.storeRender(ctx, st); err != nil {
		return nil, err
	}
	return nil, nil
}

func notReady(err error) *release.Result {
	msg := err.Error()
	if e, ok := errors.AsType[*clusters.NotReadyError](err); ok {
		msg = e.Message
		if e.Err != nil {
			msg += ": " + e.Err.Error()
		}
	}
	return &release.Result{Reason: v1.ReasonClusterNotReady, Message: capitalize(msg) + "."}
}

// renderStatus is the new status.render: renderedAt says when the ref first appeared,
// so a reconcile that renders the same ref again keeps it.
func renderStatus(old *v1.RenderStatus, res *render.Result, now time.Time) *v1.RenderStatus {
	out := &v1.RenderStatus{Ref: res.Ref, ChartVersion: res.ChartVersion, ValuesDigest: res.ValuesDigest}
	if old != nil && old.Ref == res.Ref && old.RenderedAt != nil {
		out.RenderedAt = old.RenderedAt.DeepCopy()
	} else {
		out.RenderedAt = timestamp(now)
	}
	return out
}

// storeRender creates the Render object of this reconcile's render unless it exists.
// Existence is read from the cache of Render metadata, so a steady Release costs no
// request.
func (r *Reconciler) storeRender(ctx context.Context, st *state) error {
	obj, err := render.NewRenderObject(st.rel, st.render)
	if err != nil {
		return err
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(v1.SchemeGroupVersion.WithKind("Render"))
	err = r.client.Get(ctx, client.ObjectKeyFromObject(obj), meta)
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read Render %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	logr.FromContextOrDiscard(ctx).Info("Storing a new Render", "renderRef", st.render.Ref, "render", obj.Name)
	if err := r.client.Create(ctx, obj); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("store Render %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	st.newRender = true
	return nil
}

// pruneHistory deletes the Render objects that the history no longer keeps (render's
// RendersToDelete), judged against the status just written. A failure is logged: the
// next new render tries again.
func (r *Reconciler) pruneHistory(ctx context.Context, rel *v1.Release, status v1.ReleaseStatus) {
	logger := logr.FromContextOrDiscard(ctx)
	var list v1.RenderList
	if err := r.apiReader.List(ctx, &list, client.InNamespace(rel.Namespace),
		client.MatchingLabels{v1.LabelRelease: rel.Name}); err != nil {
		logger.Error(err, "Cannot list the Renders to prune the history")
		return
	}
	judged := rel.DeepCopy()
	judged.Status = status
	for _, name := range render.RendersToDelete(judged, list.Items) {
		logger.V(1).Info("Deleting an old Render", "render", name)
		obj := &v1.Render{ObjectMeta: metav1.ObjectMeta{Namespace: rel.Namespace, Name: name}}
		if err := r.client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			logger.Error(err, "Cannot delete an old Render", "render", name)
		}
	}
}

// credentials reads spec.chart.secretRef; a missing Secret stops the reconcile with
// SourceNotReady.
func (r *Reconciler) credentials(ctx context.Context, rel *v1.Release) (*render.Credentials, *release.Result) {
	ref := rel.Spec.Chart.SecretRef
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	secret := &corev1.Secret{}
	err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: rel.Namespace, Name: ref.Name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, &release.Result{Reason: v1.ReasonSourceNotReady, Message: fmt.Sprintf(
			"The Secret %s/%s named by spec.chart.secretRef does not exist: create it with the keys username and password (or caFile).",
			rel.Namespace, ref.Name)}
	case err != nil:
		return nil, &release.Result{Reason: v1.ReasonSourceNotReady, Message: fmt.Sprintf(
			"Cannot read the Secret %s/%s named by spec.chart.secretRef: %v.", rel.Namespace, ref.Name, err)}
	}
	return render.CredentialsFromSecret(secret.Data), nil
}

// readValuesSource reads a ConfigMap or Secret of spec.valuesFrom on the host cluster,
// uncached: convoy does not keep every Secret of the cluster in memory.
func (r *Reconciler) readValuesSource(ctx context.Context, namespace string, kind v1.ValuesSourceKind, name string) (map[string][]byte, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	switch kind {
	case v1.ValuesSourceConfigMap:
		cm := &corev1.ConfigMap{}
		if err := r.apiReader.Get(ctx, key, cm); err != nil {
			return nil, err
		}
		out := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
		for k, v := range cm.BinaryData {
			out[k] = v
		}
		for k, v := range cm.Data {
			out[k] = []byte(v)
		}
		return out, nil
	case v1.ValuesSourceSecret:
		s := &corev1.Secret{}
		if err := r.apiReader.Get(ctx, key, s); err != nil {
			return nil, err
		}
		return s.Data, nil
	}
	return nil, fmt.Errorf("unknown valuesFrom kind %q", kind)
}
