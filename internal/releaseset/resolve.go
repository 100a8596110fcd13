package releaseset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/internal/targets"
)

// SourceResolver resolves a chart source as a Release's fetch would (*source.Fetcher,
// the one the release controller fetches with).
type SourceResolver interface {
	Resolve(ctx context.Context, src v1.ChartSource, maxAge time.Duration, creds *source.Credentials) (source.Resolved, error)
}

// HostResolver gives the host cluster acting as a Release's identity
// (clusters.Resolver): its spec.serviceAccountName, else the controller's default
// service account, under impersonation.
type HostResolver interface {
	Host(ctx context.Context, release *v1.Release) (*targets.Target, error)
}

const (
	// DefaultResolveInterval is how often a set whose template has no
	// syncPolicy.interval resolves its source (source.DefaultIndexTTL, the age of the
	// indexes fetches share).
	DefaultResolveInterval = source.DefaultIndexTTL
	// resolveBackoffBase is the first retry's delay after a failed resolution; it
	// doubles up to the interval.
	resolveBackoffBase = 5 * time.Second
)

// sourceSchedule keeps, per set, when its source was resolved and from which inputs,
// so that a set resolves once per interval however often it is reconciled.
type sourceSchedule struct {
	mu    sync.Mutex
	bySet map[types.UID]*sourceEntry
}

type sourceEntry struct {
	// key identifies the inputs of the resolution (sourceKey).
	key string
	// good is the last source resolved from key's inputs; nil before the first.
	good *v1.ReleaseSetSource
	// err is the failure of the last resolution, nil when it succeeded.
	err error
	// next is when to resolve again; failures counts the failures in a row.
	next     time.Time
	failures int
}

// sourceKey identifies what a set's resolution reads: the template's chart, valuesFrom
// and service account, and the set's namespace.
func sourceKey(set *v1.ReleaseSet) string {
	t := set.Spec.Template.Spec
	b, _ := json.Marshal([]any{set.Namespace, t.Chart, t.ValuesFrom, t.ServiceAccountName})
	return string(b)
}

// interval is how often the set resolves its source.
func resolveInterval(set *v1.ReleaseSet) time.Duration {
	if iv := set.Spec.Template.Spec.SyncPolicy.Interval; iv != nil && iv.Duration > 0 {
		return iv.Duration
	}
	return DefaultResolveInterval
}

// backoff is the delay before the retry after failures failed resolutions in a row.
func backoff(failures int, interval time.Duration) time.Duration {
	d := resolveBackoffBase
	for i := 1; i < failures && d < interval; i++ {
		d *= 2
	}
	return min(d, interval)
}

// source is the set's source for this reconcile, the error of its resolution, when to
// reconcile again for the next one (0: never), and whether it resolved now. It
// resolves when the schedule says so: the first time, once per interval, at backoff
// after a failure, or when the inputs changed.
func (r *Reconciler) source(ctx context.Context, set *v1.ReleaseSet) (src *v1.ReleaseSetSource, err error, after time.Duration, resolved bool) {
	if r.resolver == nil || !resolves(set.Spec.Template) {
		r.schedule.forget(set.UID)
		return nil, nil, 0, false
	}
	key, now := sourceKey(set), r.clock.Now()
	e := r.schedule.get(set.UID)
	if e == nil || e.key != key || !now.Before(e.next) {
		got, rerr := r.resolve(ctx, set)
		e = r.schedule.record(set.UID, key, got, rerr, now, resolveInterval(set))
		resolved = true
		if rerr != nil {
			ctrllog.FromContext(ctx).Info("Cannot resolve the source of the template", "error", rerr.Error())
		}
	}
	return e.good.DeepCopy(), e.err, e.next.Sub(now), resolved
}

func (s *sourceSchedule) get(uid types.UID) *sourceEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.bySet[uid]; e != nil {
		c := *e
		return &c
	}
	return nil
}

// due makes the set resolve its source at its next reconcile, keeping the source it
// resolved last.
func (s *sourceSchedule) due(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.bySet[uid]; e != nil {
		e.next = time.Time{}
	}
}

func (s *sourceSchedule) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.bySet, uid)
}

// record stores the outcome of a resolution at now and returns the entry. A failure
// keeps the last source resolved from the same inputs.
func (s *sourceSchedule) record(uid types.UID, key string, got *v1.ReleaseSetSource, err error, now time.Time, interval time.Duration) *sourceEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bySet == nil {
		s.bySet = map[types.UID]*sourceEntry{}
	}
	e := s.bySet[uid]
	if e == nil || e.key != key {
		e = &sourceEntry{key: key}
		s.bySet[uid] = e
	}
	if err != nil {
		e.err, e.failures = err, e.failures+1
		e.next = now.Add(backoff(e.failures, interval))
	} else {
		e.good, e.err, e.failures = got, nil, 0
		e.next = now.Add(interval)
	}
	c := *e
	return &c
}

// resolve reads the set's source as its Releases would read it: the chart's
// credentials and the valuesFrom objects as the template's service account (else the
// controller's default one) under impersonation, or as convoy itself when neither
// is set. It makes the copies of the valuesFrom objects the Releases will read.
func (r *Reconciler) resolve(ctx context.Context, set *v1.ReleaseSet) (*v1.ReleaseSetSource, error) {
	t := set.Spec.Template.Spec
	reader := client.Reader(r.apiReader)
	if r.hosts != nil {
		// The Release the set would write, as far as its identity goes.
		as := &v1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: set.Namespace, Name: set.Name}, Spec: *t.DeepCopy()}
		host, err := r.hosts.Host(ctx, as)
		if err != nil {
			return nil, err
		}
		if host != nil && !host.Identity.IsZero() {
			reader = host.Client
		}
	}
	src := &v1.ReleaseSetSource{}
	switch {
	case source.Moves(t.Chart):
		creds, err := chartCredentials(ctx, reader, set.Namespace, t.Chart)
		if err != nil {
			return nil, err
		}
		got, err := r.resolver.Resolve(ctx, t.Chart, resolveInterval(set), creds)
		if err != nil {
			return nil, err
		}
		src.ChartVersion, src.Commit = got.ChartVersion, got.Commit
	case t.Chart.Git != nil:
		src.Commit = t.Chart.Git.Ref.Commit
	default:
		src.ChartVersion = strings.TrimSpace(t.Chart.Version)
	}
	if len(t.ValuesFrom) > 0 {
		reads, err := readValues(ctx, reader, set.Namespace, t.ValuesFrom)
		if err != nil {
			return nil, err
		}
		src.ValuesDigest = valuesDigest(reads)
		for i, rd := range reads {
			if err := r.ensureCopy(ctx, set, valuesCopy(set, src.ValuesDigest, i, rd)); err != nil {
				return nil, err
			}
		}
	}
	return src, nil
}

// chartCredentials reads spec.chart.secretRef (spec.chart.git.secretRef for Git), and
// the keys of spec.chart.git.verify.secretRef, with reader, as the release controller
// does for a render.
func chartCredentials(ctx context.Context, reader client.Reader, ns string, chart v1.ChartSource) (*source.Credentials, error) {
	ref, field := chart.SecretRef, "spec.template.spec.chart.secretRef"
	g := chart.Git
	if g != nil {
		ref, field = g.SecretRef, "spec.template.spec.chart.git.secretRef"
	}
	var creds *source.Credentials
	if ref != nil && ref.Name != "" {
		data, err := readChartSecret(ctx, reader, ns, ref.Name, field)
		if err != nil {
			return nil, err
		}
		creds = source.CredentialsFromSecret(data)
	}
	if g != nil && g.Verify != nil && g.Verify.SecretRef.Name != "" {
		data, err := readChartSecret(ctx, reader, ns, g.Verify.SecretRef.Name, "spec.template.spec.chart.git.verify.secretRef")
		if err != nil {
			return nil, err
		}
		if creds == nil {
			creds = &source.Credentials{}
		}
		creds.VerifyKeys = data["keys"]
	}
	return creds, nil
}

// readChartSecret reads the data of the Secret ns/name that field names.
func readChartSecret(ctx context.Context, reader client.Reader, ns, name, field string) (map[string][]byte, error) {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the Secret %s/%s named by %s does not exist: create it: %w", ns, name, field, err)
		}
		return nil, fmt.Errorf("cannot read the Secret %s/%s named by %s: %w", ns, name, field, err)
	}
	return secret.Data, nil
}

// readValues reads the key of each valuesFrom entry with reader. A missing object or
// key of an optional entry reads as nothing; of another entry, it is an error.
func readValues(ctx context.Context, reader client.Reader, ns string, refs []v1.ValuesReference) ([]valuesRead, error) {
	out := make([]valuesRead, 0, len(refs))
	for i, ref := range refs {
		key := render.ValuesKey(ref)
		what := fmt.Sprintf("spec.template.spec.valuesFrom[%d] (%s %s/%s, key %s)", i, ref.Kind, ns, ref.Name, key)
		data, err := targets.ReadValuesSource(ctx, reader, ns, ref.Kind, ref.Name)
		switch {
		case apierrors.IsNotFound(err) && ref.Optional:
			out = append(out, valuesRead{Ref: ref})
			continue
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("%s: the %s does not exist; create it or mark the entry optional", what, ref.Kind)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		raw, ok := data[key]
		switch {
		case !ok && ref.Optional:
			out = append(out, valuesRead{Ref: ref})
		case !ok:
			return nil, fmt.Errorf("%s: the %s has no key %q; add it or mark the entry optional", what, ref.Kind, key)
		default:
			out = append(out, valuesRead{Ref: ref, Found: true, Data: raw})
		}
	}
	return out, nil
}

// ensureCopy creates the copy unless it exists; an object of that name that the set
// does not own is an error.
func (r *Reconciler) ensureCopy(ctx context.Context, set *v1.ReleaseSet, copy client.Object) error {
	kind := "ConfigMap"
	existing := client.Object(&corev1.ConfigMap{})
	if _, ok := copy.(*corev1.Secret); ok {
		kind, existing = "Secret", &corev1.Secret{}
	}
	err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(copy), existing)
	switch {
	case err == nil && ownedCopy(existing, set):
		return nil
	case err == nil:
		return fmt.Errorf("a %s %s/%s exists that ReleaseSet %s does not own: delete or rename it, it is the name of a copy of the set's values",
			kind, copy.GetNamespace(), copy.GetName(), set.Name)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read the values copy %s %s/%s: %w", kind, copy.GetNamespace(), copy.GetName(), err)
	}
	if err := r.client.Create(ctx, copy); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the values copy %s %s/%s: %w", kind, copy.GetNamespace(), copy.GetName(), err)
	}
	ctrllog.FromContext(ctx).Info("Created a copy of the values", "kind", kind, "name", copy.GetName())
	return nil
}

// ownedCopy says whether obj is a values copy of set: labelled with its name and
// owned by it.
func ownedCopy(obj client.Object, set *v1.ReleaseSet) bool {
	return obj.GetLabels()[v1.LabelReleaseSet] == v1.LabelValue(set.Name) &&
		slices.ContainsFunc(obj.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.UID == set.UID })
}

// collectCopies deletes the values copies of set that no Release in use refers to and
// the current source does not name.
func (r *Reconciler) collectCopies(ctx context.Context, set *v1.ReleaseSet, src *v1.ReleaseSetSource, releases []*v1.Release) error {
	keep := map[string]bool{}
	if src != nil && src.ValuesDigest != "" {
		for i := range set.Spec.Template.Spec.ValuesFrom {
			keep[copyName(set.Name, src.ValuesDigest, i)] = true
		}
	}
	for _, rel := range releases {
		for _, ref := range rel.Spec.ValuesFrom {
			keep[ref.Name] = true
		}
	}
	sel := client.MatchingLabels{v1.LabelReleaseSet: v1.LabelValue(set.Name)}
	var stale []client.Object
	cms := &corev1.ConfigMapList{}
	if err := r.apiReader.List(ctx, cms, client.InNamespace(set.Namespace), sel); err != nil {
		return fmt.Errorf("list the values copies of ReleaseSet %s/%s: %w", set.Namespace, set.Name, err)
	}
	for i := range cms.Items {
		stale = append(stale, &cms.Items[i])
	}
	secrets := &corev1.SecretList{}
	if err := r.apiReader.List(ctx, secrets, client.InNamespace(set.Namespace), sel); err != nil {
		return fmt.Errorf("list the values copies of ReleaseSet %s/%s: %w", set.Namespace, set.Name, err)
	}
	for i := range secrets.Items {
		stale = append(stale, &secrets.Items[i])
	}
	var errs []error
	for _, obj := range stale {
		if keep[obj.GetName()] || !ownedCopy(obj, set) {
			continue
		}
		uid := obj.GetUID()
		if err := r.client.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete the values copy %s/%s: %w", obj.GetNamespace(), obj.GetName(), err))
			continue
		}
		ctrllog.FromContext(ctx).Info("Deleted a copy of the values that no Release reads", "name", obj.GetName())
	}
	return errors.Join(errs...)
}
