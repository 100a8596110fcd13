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

// Revision is the digest of a ReleaseSet's template, as status.revision shows it:
// "sha256:" and the first 16 hex digits of the sha256 of the canonical JSON of the
// defaulted template. Two templates that differ only in defaulted fields, in the order
// of map keys or in the formatting of values have the same revision.
func Revision(template v1.ReleaseTemplate) string {
	set := &v1.ReleaseSet{Spec: v1.ReleaseSetSpec{Template: *template.DeepCopy()}}
	v1.SetObjectDefaults_ReleaseSet(set)
	data, err := canonicalJSON(set.Spec.Template)
	if err != nil {
		// A template decoded from the API always encodes; values that do not are
		// hashed as they are, so that the revision still changes with them.
		data, _ = json.Marshal(set.Spec.Template.Spec.Chart)
		if v := set.Spec.Template.Spec.Values; v != nil {
			data = append(data, v.Raw...)
		}
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])[:revisionHex]
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
