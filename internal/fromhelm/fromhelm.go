package fromhelm

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Options are what ReleaseFrom needs besides the Helm release.
type Options struct {
	// Namespace and Name of the Release; an empty Name is the Helm release's name.
	Namespace, Name string
	// Repository is where the chart comes from: Helm does not record it.
	Repository string
	// Cluster is spec.cluster; empty: the host cluster.
	Cluster string
	// Automatic sets spec.syncPolicy.automatic; else manual mode.
	Automatic bool
}

// Ref is a revision of a Helm release, as AnnotationHelmRelease records it.
type Ref struct {
	Namespace, Name string
	Revision        int
}

// String is "<namespace>/<name>.v<revision>".
func (r Ref) String() string { return fmt.Sprintf("%s/%s.v%d", r.Namespace, r.Name, r.Revision) }

// Key is the name of the Secret that holds the revision: sh.helm.release.v1.<name>.v<revision>.
func (r Ref) Key() string { return fmt.Sprintf("sh.helm.release.v1.%s.v%d", r.Name, r.Revision) }

var refPattern = regexp.MustCompile(`^([^/]+)/(.+)\.v([0-9]+)$`)

// ParseRef reads the value of AnnotationHelmRelease.
func ParseRef(s string) (Ref, error) {
	m := refPattern.FindStringSubmatch(s)
	if m == nil {
		return Ref{}, fmt.Errorf("%s %q is not <namespace>/<name>.v<revision>", v1.AnnotationHelmRelease, s)
	}
	n, err := strconv.Atoi(m[3])
	if err != nil || n < 1 {
		return Ref{}, fmt.Errorf("%s %q: revision %q is not a positive number", v1.AnnotationHelmRelease, s, m[3])
	}
	return Ref{Namespace: m[1], Name: m[2], Revision: n}, nil
}

// RefOf is the Ref of a Helm release record.
func RefOf(h *helmrelease.Release) Ref {
	return Ref{Namespace: h.Namespace, Name: h.Name, Revision: h.Version}
}

// TakenOverBy is the value of LabelTakenOverBy for the Release ns/name: "<namespace>.<name>".
func TakenOverBy(ns, name string) string { return ns + "." + name }

// Pick returns the revision to take over among the records of one Helm release (its
// history, any order): the latest, which must be deployed. A failed, pending,
// uninstalled or already superseded latest revision is refused with what to do.
func Pick(history []*helmrelease.Release) (*helmrelease.Release, error) {
	if len(history) == 0 {
		return nil, fmt.Errorf("no revision recorded")
	}
	latest := history[0]
	var deployed *helmrelease.Release
	for _, h := range history {
		if h.Version > latest.Version {
			latest = h
		}
		if statusOf(h) == common.StatusDeployed && (deployed == nil || h.Version > deployed.Version) {
			deployed = h
		}
	}
	ref := RefOf(latest)
	where := fmt.Sprintf("the Helm release %s/%s", ref.Namespace, ref.Name)
	status := statusOf(latest)
	switch {
	case status == common.StatusDeployed:
		if latest.Chart == nil || latest.Chart.Metadata == nil {
			return nil, fmt.Errorf("%s revision %d records no chart metadata: run helm upgrade with its chart once, then run this again", where, latest.Version)
		}
		return latest, nil
	case status == common.StatusSuperseded && latest.Labels[v1.LabelTakenOverBy] != "":
		return nil, fmt.Errorf("%s was already taken over by the convoy Release %s (revision %d is superseded): nothing to do",
			where, latest.Labels[v1.LabelTakenOverBy], latest.Version)
	case status.IsPending():
		return nil, fmt.Errorf("%s is %s at revision %d: a Helm operation is running or was interrupted; wait for it to finish, or roll back with helm rollback %s -n %s, then run this again",
			where, status, latest.Version, ref.Name, ref.Namespace)
	case status == common.StatusFailed && deployed != nil:
		return nil, fmt.Errorf("%s is failed at revision %d: roll back to the deployed revision %d with helm rollback %s %d -n %s, or fix it with helm upgrade, then run this again",
			where, latest.Version, deployed.Version, ref.Name, deployed.Version, ref.Namespace)
	case status == common.StatusFailed:
		return nil, fmt.Errorf("%s is failed at revision %d and was never deployed: install it with convoy instead (kubectl convoy has nothing to take over)",
			where, latest.Version)
	}
	return nil, fmt.Errorf("%s is %s at revision %d, not deployed: only a deployed Helm release can be taken over; make it deployed with helm upgrade or helm rollback, then run this again",
		where, status, latest.Version)
}

func statusOf(h *helmrelease.Release) common.Status {
	if h.Info == nil {
		return common.StatusUnknown
	}
	return h.Info.Status
}

// ReleaseFrom is the Release equivalent to the deployed Helm release h: its chart
// from opts.Repository with the name and version h records, the values the user gave
// Helm (h.Config, not the chart's defaults), the target namespace when h's namespace
// is not the Release's, manual mode unless opts.Automatic, and AnnotationHelmRelease.
func ReleaseFrom(h *helmrelease.Release, opts Options) (*v1.Release, error) {
	if h.Chart == nil || h.Chart.Metadata == nil {
		return nil, fmt.Errorf("the Helm release %s records no chart metadata", RefOf(h))
	}
	name := opts.Name
	if name == "" {
		name = h.Name
	}
	rel := &v1.Release{
		TypeMeta: metav1.TypeMeta{APIVersion: v1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: name,
			Annotations: map[string]string{v1.AnnotationHelmRelease: RefOf(h).String()}},
		Spec: v1.ReleaseSpec{
			Cluster: opts.Cluster,
			Chart:   v1.ChartSource{Repository: opts.Repository, Name: h.Chart.Metadata.Name, Version: h.Chart.Metadata.Version},
		},
	}
	if h.Namespace != opts.Namespace {
		rel.Spec.TargetNamespace = h.Namespace
	}
	if len(h.Config) > 0 {
		raw, err := json.Marshal(h.Config)
		if err != nil {
			return nil, fmt.Errorf("the values of Helm release %s: %w", RefOf(h), err)
		}
		rel.Spec.Values = &runtime.RawExtension{Raw: raw}
	}
	if opts.Automatic {
		t := true
		rel.Spec.SyncPolicy.Automatic = &t
	}
	return rel, nil
}

// CheckSupersede decides whether the Helm release record h may be marked superseded
// for the Release rel: rel took it over (AnnotationHelmRelease names h's revision),
// rel was applied successfully, and h is still deployed (Helm made no revision since).
func CheckSupersede(rel *v1.Release, h *helmrelease.Release) error {
	what := fmt.Sprintf("Release %s/%s", rel.Namespace, rel.Name)
	value, ok := rel.Annotations[v1.AnnotationHelmRelease]
	if !ok {
		return fmt.Errorf("%s has no annotation %s: it did not take over a Helm release", what, v1.AnnotationHelmRelease)
	}
	ref, err := ParseRef(value)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if rel.Status.LastSuccessful == nil || rel.Status.LastSuccessful.RenderRef == "" {
		return fmt.Errorf("%s was not applied successfully yet (no status.lastSuccessful): sync it first (kubectl convoy release sync %s --wait), then run this again", what, rel.Name)
	}
	if got := RefOf(h); got != ref {
		return fmt.Errorf("%s took over %s, but Helm's latest record is %s: Helm changed the release since; compare them, then take it over again", what, ref, got)
	}
	switch statusOf(h) {
	case common.StatusDeployed:
		return nil
	case common.StatusSuperseded:
		if by := h.Labels[v1.LabelTakenOverBy]; by == TakenOverBy(rel.Namespace, rel.Name) {
			return ErrAlreadySuperseded
		}
	}
	return fmt.Errorf("the Helm release %s is %s, not deployed: leave Helm's records as they are", ref, statusOf(h))
}

// ErrAlreadySuperseded: the record is already marked superseded for this Release.
var ErrAlreadySuperseded = errors.New("already marked superseded")
