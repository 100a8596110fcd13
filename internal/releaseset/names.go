package releaseset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

const (
	// maxNameLength is the longest Release name that ReleaseName returns (a label
	// value's length, so that the name also fits in labels).
	maxNameLength = 63
	// nameHashHex is the number of hex digits of the hash that a shortened name ends with.
	nameHashHex = 10
	// revisionHex is the number of hex digits of a revision's digest.
	revisionHex = 16
)

// ReleaseName is the name of the Release that the ReleaseSet set writes for cluster:
// "<set>-<cluster>"; past 63 characters, its first part cut and "-<10 hex of
// sha256(set/cluster)>" appended, so that distinct pairs keep distinct names.
func ReleaseName(set, cluster string) string {
	name := set + "-" + cluster
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(set + "/" + cluster))
	head := strings.TrimRight(name[:maxNameLength-nameHashHex-1], "-.")
	return head + "-" + hex.EncodeToString(sum[:])[:nameHashHex]
}

// Revision is the digest of what a ReleaseSet's rollout delivers, as status.revision
// shows it: "sha256:" and the first 16 hex digits of the sha256 of a canonical JSON
// (keys sorted, numbers as written) of the defaulted template, the clusterOverrides
// and the source the set resolved (status.source). Two inputs that differ only in
// defaulted fields, in the order of map keys or in the formatting of values have the
// same revision.
//
// Without overrides and source (nil or empty) the JSON is the template's alone, as it
// was before the set had overrides and a source: the revision of such a set does not
// change on an upgrade, so that its Releases are not rolled out again. With either,
// it is the JSON of {"template", "clusterOverrides", "source"} (each left out when
// empty), which no template's JSON is.
func Revision(template v1.ReleaseTemplate, overrides []v1.ClusterOverride, source *v1.ReleaseSetSource) string {
	set := &v1.ReleaseSet{Spec: v1.ReleaseSetSpec{Template: *template.DeepCopy()}}
	v1.SetObjectDefaults_ReleaseSet(set)
	if source != nil && *source == (v1.ReleaseSetSource{}) {
		source = nil
	}
	var what any = set.Spec.Template
	if len(overrides) > 0 || source != nil {
		what = revisionInputs{Template: set.Spec.Template, ClusterOverrides: overrides, Source: source}
	}
	data, err := canonicalJSON(what)
	if err != nil {
		// A template decoded from the API always encodes; values that do not are
		// hashed as they are, so that the revision still changes with them.
		data, _ = json.Marshal(set.Spec.Template.Spec.Chart)
		if v := set.Spec.Template.Spec.Values; v != nil {
			data = append(data, v.Raw...)
		}
		for _, o := range overrides {
			sel, _ := json.Marshal(o.ClusterSelector)
			data = append(data, sel...)
			if o.Values != nil {
				data = append(data, o.Values.Raw...)
			}
		}
		src, _ := json.Marshal(source)
		data = append(data, src...)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])[:revisionHex]
}

// revisionInputs is what a revision covers when the set has overrides or a source.
type revisionInputs struct {
	Template         v1.ReleaseTemplate   `json:"template"`
	ClusterOverrides []v1.ClusterOverride `json:"clusterOverrides,omitempty"`
	Source           *v1.ReleaseSetSource `json:"source,omitempty"`
}

// canonicalJSON encodes v as JSON with the keys of every object sorted, free-form
// values (runtime.RawExtension) included, and numbers kept as written.
func canonicalJSON(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}
