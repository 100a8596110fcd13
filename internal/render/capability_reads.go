package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A render depends on the target's capabilities only through what its templates ask
// of them: .Capabilities.APIVersions.Has questions and parts of
// .Capabilities.KubeVersion. The templates see Helm's Capabilities through a view that
// records each answer (CapabilityReads); the render is reused while the target gives
// the same answers, so a cluster that gains an API version no template asked about
// keeps its renders. As Helm installs crds/ before it renders the templates, the
// API versions of the chart's own CRDs count as served.

// CapabilityReads are the answers about the target's capabilities that a render's
// templates used, recorded on the render (v1alpha1.AnnotationCapabilities): it is
// reused only while the target gives the same answers.
type CapabilityReads struct {
	// KubeVersion maps each part of .Capabilities.KubeVersion that the templates read
	// (Version, also for GitVersion; Major; Minor; String, also for the chart's
	// kubeVersion constraint) to what they read.
	KubeVersion map[string]string `json:"kubeVersion,omitempty"`
	// APIVersions maps each .Capabilities.APIVersions.Has question that the target
	// answered to its answer. A question that the chart's own CRDs answer (crds/ of
	// the chart and of its enabled subcharts) is not recorded: its answer holds while
	// the chart, an input, does.
	APIVersions map[string]bool `json:"apiVersions,omitempty"`
	// AllAPIVersions is set when the templates used the list of API versions otherwise
	// than through Has (range, toYaml, a variable): sha256 of the list they saw, as a
	// sorted set. ChartAPIVersions are then the chart's CRDs' API versions in it.
	AllAPIVersions   string   `json:"allAPIVersions,omitempty"`
	ChartAPIVersions []string `json:"chartAPIVersions,omitempty"`
}

// IsZero reports whether the templates used nothing of the capabilities.
func (r CapabilityReads) IsZero() bool {
	return len(r.KubeVersion) == 0 && len(r.APIVersions) == 0 && r.AllAPIVersions == ""
}

// Changed reports whether caps answers one of the reads otherwise than when they were
// recorded.
func (r CapabilityReads) Changed(caps Capabilities) (bool, error) {
	if len(r.KubeVersion) > 0 {
		kv, err := caps.kubeVersion()
		if err != nil {
			return false, err
		}
		for part, was := range r.KubeVersion {
			now, ok := kubeVersionPart(kv, part)
			if !ok || now != was {
				return true, nil
			}
		}
	}
	if len(r.APIVersions) == 0 && r.AllAPIVersions == "" {
		return false, nil
	}
	served := caps.targetAPIVersions()
	for question, was := range r.APIVersions {
		if slices.Contains(served, question) != was {
			return true, nil
		}
	}
	return r.AllAPIVersions != "" && apiVersionsDigest(served, r.ChartAPIVersions) != r.AllAPIVersions, nil
}

// legacyCapabilityReads are the reads of a render made before convoy recorded them,
// whose inputs held the target's whole list of API versions and its Kubernetes
// version: it stays reusable while both do.
func legacyCapabilityReads(caps Capabilities) (CapabilityReads, error) {
	kv, err := caps.kubeVersion()
	if err != nil {
		return CapabilityReads{}, err
	}
	return CapabilityReads{
		KubeVersion:    map[string]string{"Version": kv.Version},
		AllAPIVersions: apiVersionsDigest(caps.targetAPIVersions(), nil),
	}, nil
}

// CapabilitiesAnnotation is the value of AnnotationCapabilities for the reads of a
// render; "" when there are none.
func CapabilitiesAnnotation(r CapabilityReads) (string, error) {
	if r.IsZero() {
		return "", nil
	}
	b, err := json.Marshal(r) // maps with sorted keys
	if err != nil {
		return "", fmt.Errorf("the capabilities a render read: %w", err)
	}
	return string(b), nil
}

// kubeVersionPart is what the templates read as part of kv.
func kubeVersionPart(kv *common.KubeVersion, part string) (string, bool) {
	switch part {
	case "Version":
		return kv.Version, true
	case "Major":
		return kv.Major, true
	case "Minor":
		return kv.Minor, true
	case "String":
		return kv.String(), true
	}
	return "", false
}

// targetAPIVersions is the list of API versions of the target: Helm's default list
// when the caller gave none.
func (c Capabilities) targetAPIVersions() []string {
	if c.APIVersions == nil {
		return common.DefaultVersionSet
	}
	return c.APIVersions
}

// apiVersionsDigest is sha256 of the sorted set of the API versions of lists.
func apiVersionsDigest(lists ...[]string) string {
	all := slices.Concat(lists...)
	slices.Sort(all)
	all = slices.Compact(all)
	sum := sha256.Sum256([]byte(strings.Join(all, "\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// chartAPIVersions are the group versions and group version kinds that the CRDs in
// crds/ of c and of its enabled subcharts serve (as the target's discovery lists
// them once they are installed), sorted. Only apiextensions.k8s.io/v1 CRDs count:
// no supported Kubernetes serves another version.
func chartAPIVersions(c *chart.Chart) ([]string, error) {
	var out []string
	for _, f := range c.CRDObjects() {
		us, err := decodeManifests(f.Filename, string(f.File.Data))
		if err != nil {
			return nil, err
		}
		for _, u := range us {
			if !isCRD(u) || u.GetAPIVersion() != apiextensionsv1.SchemeGroupVersion.String() {
				continue
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
				return nil, unappliable("%s: CustomResourceDefinition %s: %w", f.Filename, u.GetName(), err)
			}
			for _, v := range crd.Spec.Versions {
				if !v.Served || crd.Spec.Group == "" || v.Name == "" || crd.Spec.Names.Kind == "" {
					continue
				}
				gv := crd.Spec.Group + "/" + v.Name
				out = append(out, gv, gv+"/"+crd.Spec.Names.Kind)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// usesAPIVersionsWhole reports whether a template of c or of its enabled subcharts
// names APIVersions otherwise than as APIVersions.Has: the list itself (range, has,
// toYaml, a variable), whose every entry the render may then depend on.
func usesAPIVersionsWhole(c *chart.Chart) bool {
	for _, t := range c.Templates {
		rest := string(t.Data)
		for {
			i := strings.Index(rest, "APIVersions")
			if i < 0 {
				break
			}
			rest = rest[i+len("APIVersions"):]
			if !strings.HasPrefix(rest, ".Has") {
				return true
			}
		}
	}
	return slices.ContainsFunc(c.Dependencies(), usesAPIVersionsWhole)
}

// capabilityRecorder records what one render's templates read of its capabilities.
type capabilityRecorder struct {
	// chart are the API versions of the chart's CRDs, served whatever the target.
	chart []string

	mu    sync.Mutex
	reads CapabilityReads
	// seen is the list the templates see, for a whole use.
	seen []string
}

func newCapabilityRecorder(chartVersions []string) *capabilityRecorder {
	return &capabilityRecorder{chart: chartVersions}
}

// kube records that the templates read part of the Kubernetes version, and returns it.
func (r *capabilityRecorder) kube(part, answer string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reads.KubeVersion == nil {
		r.reads.KubeVersion = map[string]string{}
	}
	r.reads.KubeVersion[part] = answer
	return answer
}

// has records a Has question and its answer, unless the chart's CRDs answer it.
func (r *capabilityRecorder) has(question string, answer bool) {
	if slices.Contains(r.chart, question) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reads.APIVersions == nil {
		r.reads.APIVersions = map[string]bool{}
	}
	r.reads.APIVersions[question] = answer
}

// whole records that the templates used the whole list of API versions.
func (r *capabilityRecorder) whole() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads.AllAPIVersions = apiVersionsDigest(r.seen)
	r.reads.ChartAPIVersions = slices.Clone(r.chart)
	if len(r.reads.ChartAPIVersions) == 0 {
		r.reads.ChartAPIVersions = nil
	}
}

// recorded returns the reads.
func (r *capabilityRecorder) recorded() CapabilityReads {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

// recorders finds the recorder of a versionSet by the first element of its array:
// Has is a method of a slice type, so that the templates can range over the list,
// index it and marshal it as Helm's VersionSet, and a slice carries nothing else.
var recorders sync.Map // *string → *capabilityRecorder

// view returns what the templates see as .Capabilities: hc, with the chart's API
// versions served, whose reads rec records; done forgets the view once the
// templates have run.
func (r *capabilityRecorder) view(hc *common.Capabilities, wholeUse bool) (view *capabilitiesView, done func()) {
	list := hc.APIVersions
	var added []string
	for _, v := range r.chart {
		if !slices.Contains(list, v) {
			added = append(added, v)
		}
	}
	if len(added) > 0 {
		list = slices.Concat(list, added)
		slices.Sort(list)
		hc = hc.Copy()
		hc.APIVersions = list
	}
	// One spare element, so that an empty list has an array to be found by.
	set := make(versionSet, len(list), len(list)+1)
	copy(set, list)
	r.seen = slices.Clone(list)
	key := &set[:cap(set)][0]
	recorders.Store(key, r)
	if wholeUse {
		r.whole()
	}
	view = &capabilitiesView{
		KubeVersion: kubeVersionView{kv: hc.KubeVersion, rec: r},
		APIVersions: set,
		HelmVersion: hc.HelmVersion,
		helm:        hc,
		rec:         r,
	}
	return view, func() { recorders.Delete(key) }
}

// capabilitiesView is .Capabilities as the templates see it: Helm's Capabilities
// (KubeVersion, APIVersions, HelmVersion), each read recorded.
type capabilitiesView struct {
	KubeVersion kubeVersionView
	APIVersions versionSet
	HelmVersion any
	helm        *common.Capabilities
	rec         *capabilityRecorder
}

// MarshalJSON (toYaml, toJson) reads it all.
func (c *capabilitiesView) MarshalJSON() ([]byte, error) {
	c.rec.whole()
	c.rec.kube("Version", c.helm.KubeVersion.Version)
	return json.Marshal(c.helm)
}

// versionSet is Helm's VersionSet whose Has questions are recorded.
type versionSet []string

// Has returns true if the version string is in the set.
func (s versionSet) Has(apiVersion string) bool {
	has := slices.Contains(s, apiVersion)
	if cap(s) > 0 {
		if rec, ok := recorders.Load(&s[:cap(s)][0]); ok {
			rec.(*capabilityRecorder).has(apiVersion, has)
		}
	}
	return has
}

// kubeVersionView is Helm's KubeVersion whose reads are recorded: its fields are
// methods here.
type kubeVersionView struct {
	kv  common.KubeVersion
	rec *capabilityRecorder
}

func (k kubeVersionView) Version() string    { return k.rec.kube("Version", k.kv.Version) }
func (k kubeVersionView) GitVersion() string { return k.rec.kube("Version", k.kv.Version) }
func (k kubeVersionView) Major() string      { return k.rec.kube("Major", k.kv.Major) }
func (k kubeVersionView) Minor() string      { return k.rec.kube("Minor", k.kv.Minor) }
func (k kubeVersionView) String() string     { return k.rec.kube("String", k.kv.String()) }

// MarshalJSON (toYaml, toJson) reads it all.
func (k kubeVersionView) MarshalJSON() ([]byte, error) {
	k.rec.kube("Version", k.kv.Version)
	return json.Marshal(k.kv)
}
