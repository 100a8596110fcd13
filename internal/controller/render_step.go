package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/internal/store"
	"kumodo.io/convoy/internal/targets"
)

// renderStep is steps 3 and 4: resolve and reach the target cluster, render the
// Release for it, store the Render object if it is new and decide status.render. A
// failure of the cluster or of the render is returned as the Result that stops the
// reconcile; an error is a failure to read or write convoy's own objects.
func (r *Reconciler) renderStep(ctx context.Context, st *state) (*policy.Result, error) {
	rel := st.rel
	if stop := r.verificationRequired(rel); stop != nil {
		return stop, nil
	}
	target, err := r.clusters.Resolve(ctx, rel)
	if err != nil {
		return notReady(err), nil
	}
	host, err := r.clusters.Host(ctx, rel)
	if err != nil {
		return notReady(err), nil
	}
	disc, err := target.Discovery()
	if err != nil {
		return notReady(&targets.NotReadyError{Kind: targets.Unreachable, Cluster: rel.Spec.Cluster,
			Message: "cannot read the API of the target cluster: check that it runs", Err: err}), nil
	}
	st.target = target

	creds, stop := r.credentials(ctx, rel, host)
	if stop != nil {
		return stop, nil
	}
	if st.trust, stop = r.trustMaterial(ctx, rel, host); stop != nil {
		return stop, nil
	}
	res, err := r.render(ctx, st, render.Request{
		Release:      rel,
		Capabilities: r.capabilities.of(target.Name, disc),
		Lookup:       targetLookup{client: target.Client},
	}, r.hostValues(host), creds)
	if err != nil {
		reason := reasons.Of(err, "")
		if reason == "" {
			return nil, err // a cancelled context, or a bug: a failure of convoy's own (ownFailure)
		}
		// A lookup refused on the target, or a valuesFrom read refused on the host.
		reason = forbiddenReason(host, forbiddenReason(target, reason, err), err)
		return &policy.Result{Reason: reason, Message: err.Error()}, nil
	}
	st.render = res
	if err := r.storeRender(ctx, st); err != nil {
		// status.render names only a render whose Render object is stored.
		st.render = nil
		return nil, err
	}
	st.renderStatus = renderStatus(rel.Status.Render, res, st.verified, st.now)
	return nil, nil
}

// render renders the Release with req: its values read with values, its chart
// fetched with creds, then the Render of the same inputs reused when there is one
// whose reads of the target still answer the same (reuse), else the chart templated
// anew as the next revision. A render templated anew that changed with no input change
// gets a warning, once per Release and inputs.
func (r *Reconciler) render(ctx context.Context, st *state, req render.Request, values render.ValuesReader, creds *source.Credentials) (*render.Result, error) {
	rel := st.rel
	hist, err := r.history(ctx, rel)
	if err != nil {
		return nil, err
	}
	next := policy.NextRenderRevision(policy.IsUpgrade(lastSuccessfulRender(rel), rel.Annotations), hist.revisions())
	req.Revision, req.IsUpgrade = next.Revision, next.IsUpgrade
	if req.Values, err = render.MergeValues(ctx, rel, values); err != nil {
		return nil, err
	}
	chart, err := r.source.Fetch(ctx, rel.Spec.Chart, listingMaxAge(rel), creds)
	if err != nil {
		return nil, fmt.Errorf("Release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	// Verified before anything of the chart is rendered.
	if st.verified, err = r.verifyChart(ctx, st, chart, st.trust); err != nil {
		return nil, fmt.Errorf("Release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	req.Chart = renderChart(chart)
	prepared, err := render.Prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	key := prepared.Key
	prev, err := r.reuse(ctx, st, hist, key)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		res, err := prepared.Reuse(ctx, prev)
		if err != nil || res != nil {
			return res, err
		}
	}
	offered := prev != nil // an earlier render was offered: templated anew, its reads changed
	res, err := prepared.Render(ctx)
	if err != nil {
		return nil, err
	}
	st.renderObj = nil
	if w := unexplainedChange(rel, hist, key, res); w != "" && !offered && r.renders.warnOnce(releaseKey(rel), res.Inputs) {
		res.Warnings = append(res.Warnings, w)
	}
	return res, nil
}

// renderChart is the chart that source fetched, as render takes it.
func renderChart(c *source.Chart) render.Chart {
	return render.Chart{What: c.What, Digest: c.Digest, Commit: c.Commit, Archive: c.Archive, Files: c.Files}
}

// listingMaxAge is how old a Git ref listing the Release takes: its interval; 0 (the
// fetcher's index lifetime) when it has none.
func listingMaxAge(rel *v1.Release) time.Duration {
	if iv := rel.Spec.SyncPolicy.Interval; iv != nil && iv.Duration > 0 {
		return iv.Duration
	}
	return 0
}

// notReady is the Result of a target that cannot be used (err, from internal/targets):
// its reason (ClusterNotReady or ServiceAccountNotFound) and message.
func notReady(err error) *policy.Result {
	msg := err.Error()
	if e, ok := errors.AsType[*targets.NotReadyError](err); ok {
		msg = e.Error()
	}
	return &policy.Result{Reason: reasons.Of(err, v1.ReasonClusterNotReady), Message: capitalize(msg) + "."}
}

// renderStatus is the new status.render: renderedAt says when the ref first appeared,
// so a reconcile that renders the same ref again keeps it; verified says what
// verified its chart (nil: nothing), and keeps the time of the first verification of
// the same ref by the same provider and identity.
func renderStatus(old *v1.RenderStatus, res *render.Result, verified *v1.VerifiedStatus, now time.Time) *v1.RenderStatus {
	out := &v1.RenderStatus{Ref: res.Ref, ChartVersion: res.ChartVersion, Commit: res.Commit, ValuesDigest: res.ValuesDigest}
	if old != nil && old.Ref == res.Ref && old.RenderedAt != nil {
		out.RenderedAt = old.RenderedAt.DeepCopy()
	} else {
		out.RenderedAt = timestamp(now)
	}
	if verified != nil {
		out.Verified = verified.DeepCopy()
		if old != nil && old.Ref == res.Ref && old.Verified != nil && old.Verified.Time != nil &&
			old.Verified.Provider == verified.Provider && old.Verified.Identity == verified.Identity {
			out.Verified.Time = old.Verified.Time.DeepCopy()
		}
	}
	return out
}

// storeRender creates the Render object of this reconcile's render unless it exists,
// and remembers it. Existence is read from the cache of Render metadata, so a steady
// Release costs no request. A render templated anew whose Render exists already
// (other inputs gave the same objects) gets its inputs recorded on that Render, so
// that it is found for them.
func (r *Reconciler) storeRender(ctx context.Context, st *state) error {
	rel, res := st.rel, st.render
	name := v1.RenderRef(res.Ref).RenderName(rel.Name)
	meta, err := store.GetRenderMetadata(ctx, r.client, rel.Namespace, name)
	if err != nil {
		return err
	}
	exists := meta != nil
	// A Render reused as it is has its inputs; one of an earlier convoy gets them now.
	reusedAsIs := res.Reused && st.renderObj != nil && st.renderObj.Annotations[v1.AnnotationInputs] == res.Inputs
	var recorded *metav1.PartialObjectMetadata
	if exists && !reusedAsIs {
		if recorded, err = r.recordInputs(ctx, res, meta); err != nil {
			return err
		}
	}
	if exists {
		latest := meta
		if recorded != nil {
			latest = recorded
		}
		patched, err := r.recordVerified(ctx, st.verified, latest)
		if err != nil {
			return err
		}
		if patched != nil {
			recorded = patched
		}
	}
	obj := st.renderObj
	if obj != nil && recorded != nil {
		// A reused Render whose inputs were recorded anew: remembered as it is now.
		obj = obj.DeepCopy()
		obj.Labels, obj.Annotations = recorded.Labels, recorded.Annotations
	}
	if obj == nil || (!exists && obj.Manifests == nil) {
		// A render templated anew, or one remembered without its manifests whose
		// Render is gone: made again from the result.
		if obj, err = render.NewRenderObject(rel, res); err != nil {
			return err
		}
	}
	if exists {
		return r.renders.put(releaseKey(rel), obj, res)
	}
	if ann := verifiedAnnotation(st.verified); ann != "" {
		obj = obj.DeepCopy()
		obj.Annotations = maps.Clone(obj.Annotations) // not the remembered Render's map
		if obj.Annotations == nil {
			obj.Annotations = map[string]string{}
		}
		obj.Annotations[v1.AnnotationVerified] = ann
	}
	logr.FromContextOrDiscard(ctx).Info("Storing a new Render", "renderRef", res.Ref, "render", obj.Name,
		"revision", res.Revision)
	created, err := store.CreateRender(ctx, r.client, obj)
	if created == nil || err != nil {
		return err
	}
	st.newRender = true
	return r.renders.put(releaseKey(rel), created, res)
}

// recordInputs writes the inputs of a render on its existing Render (meta) when they
// are not the ones it records: a render templated anew that gave the same objects,
// or a Render of an earlier convoy reused (render.ReuseKey.Legacy). The Render keeps
// its revision, which the result then reports. It returns the Render's metadata as
// patched; nil when it wrote nothing.
func (r *Reconciler) recordInputs(ctx context.Context, res *render.Result, meta *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
	if rev, ok := render.RevisionOf(meta.Labels); ok {
		res.Revision = rev
	}
	lookups, err := render.LookupsAnnotation(res.Lookups)
	if err != nil {
		return nil, err
	}
	caps, err := render.CapabilitiesAnnotation(res.Capabilities)
	if err != nil {
		return nil, err
	}
	if res.Inputs == "" || (meta.Annotations[v1.AnnotationInputs] == res.Inputs &&
		meta.Annotations[v1.AnnotationLookups] == lookups && meta.Annotations[v1.AnnotationCapabilities] == caps) {
		return nil, nil
	}
	patched := meta.DeepCopy()
	if patched.Labels == nil {
		patched.Labels = map[string]string{}
	}
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	patched.Labels[v1.LabelInputs] = render.InputsLabel(res.Inputs)
	patched.Labels[v1.LabelRevision] = strconv.FormatInt(res.Revision, 10)
	patched.Annotations[v1.AnnotationInputs] = res.Inputs
	for key, value := range map[string]string{v1.AnnotationLookups: lookups, v1.AnnotationCapabilities: caps} {
		if value != "" {
			patched.Annotations[key] = value
		} else {
			delete(patched.Annotations, key)
		}
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("Recording new inputs on an existing Render", "render", meta.Name)
	if err := store.PatchRenderMetadata(ctx, r.client, patched, meta); err != nil {
		return nil, err
	}
	return patched, nil
}

// pruneHistory deletes the Render objects that the history no longer keeps (render's
// RendersToDelete), judged against the status just written. A failure is logged: the
// next new render tries again.
func (r *Reconciler) pruneHistory(ctx context.Context, rel *v1.Release, status v1.ReleaseStatus) {
	logger := logr.FromContextOrDiscard(ctx)
	renders, err := store.ListRenders(ctx, r.apiReader, rel.Namespace, rel.Name)
	if err != nil {
		logger.Error(err, "Cannot list the Renders to prune the history")
		return
	}
	judged := rel.DeepCopy()
	judged.Status = status
	for _, name := range render.RendersToDelete(judged, renders) {
		logger.V(1).Info("Deleting an old Render", "render", name)
		if err := store.DeleteRender(ctx, r.client, rel.Namespace, name); err != nil {
			logger.Error(err, "Cannot delete an old Render", "render", name)
		}
	}
}

// credentials reads spec.chart.secretRef (spec.chart.git.secretRef for a chart from
// Git), and the keys of spec.chart.git.verify.secretRef, on the host, as host's
// identity (the Release's ServiceAccount under impersonation); a missing Secret stops
// the reconcile with SourceNotReady, a refused read with Forbidden. The source checks
// the keys: a verify Secret without the key keys is VerificationFailed there.
func (r *Reconciler) credentials(ctx context.Context, rel *v1.Release, host *targets.Target) (*source.Credentials, *policy.Result) {
	ref, field, keys := rel.Spec.Chart.SecretRef, "spec.chart.secretRef", "username and password (or caFile)"
	g := rel.Spec.Chart.Git
	if g != nil {
		ref, field, keys = g.SecretRef, "spec.chart.git.secretRef", "username and password (or bearerToken) and caFile for https, identity and known_hosts for ssh"
	}
	var creds *source.Credentials
	if ref != nil && ref.Name != "" {
		data, stop := r.chartSecret(ctx, rel, host, ref.Name, field, keys)
		if stop != nil {
			return nil, stop
		}
		creds = source.CredentialsFromSecret(data)
	}
	if g != nil && g.Verify != nil && g.Verify.SecretRef.Name != "" {
		data, stop := r.chartSecret(ctx, rel, host, g.Verify.SecretRef.Name, "spec.chart.git.verify.secretRef",
			"keys (the PGP public key blocks and SSH public keys trusted to sign the commits)")
		if stop != nil {
			return nil, stop
		}
		if creds == nil {
			creds = &source.Credentials{}
		}
		creds.VerifyKeys = data["keys"]
	}
	return creds, nil
}

// chartSecret reads the data of the Secret name, named by field, of the Release's
// namespace on the host as host's identity.
func (r *Reconciler) chartSecret(ctx context.Context, rel *v1.Release, host *targets.Target, name, field, keys string) (map[string][]byte, *policy.Result) {
	reader := r.apiReader
	if host != nil && !host.Identity.IsZero() {
		reader = host.Client
	}
	secret := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: rel.Namespace, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, &policy.Result{Reason: v1.ReasonSourceNotReady, Message: fmt.Sprintf(
			"The Secret %s/%s named by %s does not exist: create it with the keys %s.",
			rel.Namespace, name, field, keys)}
	case err != nil:
		return nil, &policy.Result{Reason: forbiddenReason(host, v1.ReasonSourceNotReady, err), Message: fmt.Sprintf(
			"Cannot read the Secret %s/%s named by %s: %v.", rel.Namespace, name, field, err)}
	}
	return secret.Data, nil
}

// readValuesSource reads a ConfigMap or Secret of spec.valuesFrom on the host cluster,
// uncached: convoy does not keep every Secret of the cluster in memory.
func (r *Reconciler) readValuesSource(ctx context.Context, namespace string, kind v1.ValuesSourceKind, name string) (map[string][]byte, error) {
	return targets.ReadValuesSource(ctx, r.apiReader, namespace, kind, name)
}

// capabilitiesMemo keeps the render Capabilities of each target cluster's current
// discovery. A Target returns the same *Discovery until it reads the target's API
// again (targets.Target.Discovery: a minute, or an invalidation after CRDs), so the
// Capabilities are built once per read instead of at every reconcile, where they were
// ~35 KiB of garbage each (15 % of a steady reconcile's; decision 0136).
type capabilitiesMemo struct {
	mu        sync.Mutex
	byCluster map[string]memoCapabilities
}

type memoCapabilities struct {
	disc *targets.Discovery
	caps render.Capabilities
}

// of returns the Capabilities of disc, the current discovery of cluster; callers
// must not change them (they are shared).
func (m *capabilitiesMemo) of(cluster string, disc *targets.Discovery) render.Capabilities {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byCluster[cluster]; ok && e.disc == disc {
		return e.caps
	}
	caps := render.CapabilitiesFromDiscovery(disc.KubeVersion, disc.Resources)
	if m.byCluster == nil {
		m.byCluster = map[string]memoCapabilities{}
	}
	m.byCluster[cluster] = memoCapabilities{disc: disc, caps: caps}
	return caps
}

// lastSuccessfulRender is status.lastSuccessful.renderRef; empty for none.
func lastSuccessfulRender(rel *v1.Release) string {
	if rel.Status.LastSuccessful == nil {
		return ""
	}
	return rel.Status.LastSuccessful.RenderRef
}
