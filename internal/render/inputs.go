package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"kumodo.io/convoy/api/v1alpha1"
)

// inputsFormat is part of every inputs digest. Bump it when the same templates'
// output becomes a different render (a change of the assembly, the labels, the
// canonical form), so that every Release is rendered anew by the new convoy instead
// of reusing a Render that the old one made. Format 2 took the target's capabilities
// out of the inputs (the render records what its templates read of them,
// CapabilityReads); a Render of format 1 is still reused while the target's whole list
// of API versions and its Kubernetes version stay (ReuseKey.Legacy).
const inputsFormat = 2

// Inputs are what a render is a function of, apart from what the templates read of
// the target (the objects that lookup read, Lookups, and the capabilities,
// CapabilityReads) and .Release.Revision: the same inputs give the same templates'
// input, so an earlier render of them is reused rather than templated again (a
// template's randAlphaNum, uuidv4, now or genCA would give a new render each time).
type Inputs struct {
	// ChartDigest identifies the chart archive (Result.ChartDigest).
	ChartDigest string
	// ValuesDigest is the digest of the merged values (Result.ValuesDigest).
	ValuesDigest string
	// Mutations are the Release's mutations, in order.
	Mutations []v1alpha1.Mutation
	// ReleaseName and Namespace are .Release.Name and .Release.Namespace.
	ReleaseName string
	Namespace   string
	// IsUpgrade is .Release.IsUpgrade (and not .Release.IsInstall).
	IsUpgrade bool
	// Verify is spec.chart.verify: a render made before the chart had to be verified
	// is not one of the same inputs as a render of a verified chart. Unset, it leaves
	// the digest as it was before chart verification existed.
	Verify *v1alpha1.ChartVerify
}

// inputsEncoding is the canonical encoding of Inputs: a JSON object with fixed
// field order.
type inputsEncoding struct {
	Format       int                   `json:"format"`
	ChartDigest  string                `json:"chartDigest"`
	ValuesDigest string                `json:"valuesDigest"`
	Mutations    []v1alpha1.Mutation   `json:"mutations"`
	ReleaseName  string                `json:"releaseName"`
	Namespace    string                `json:"namespace"`
	IsUpgrade    bool                  `json:"isUpgrade"`
	Verify       *v1alpha1.ChartVerify `json:"verify,omitempty"`
}

// inputsEncodingV1 is the encoding of format 1, which held the target's Kubernetes
// version and API versions (sorted, without duplicates).
type inputsEncodingV1 struct {
	Format       int                 `json:"format"`
	ChartDigest  string              `json:"chartDigest"`
	ValuesDigest string              `json:"valuesDigest"`
	Mutations    []v1alpha1.Mutation `json:"mutations"`
	KubeVersion  string              `json:"kubeVersion"`
	APIVersions  []string            `json:"apiVersions"`
	ReleaseName  string              `json:"releaseName"`
	Namespace    string              `json:"namespace"`
	IsUpgrade    bool                `json:"isUpgrade"`
}

// Digest is sha256:<hex> of the inputs' canonical encoding: independent of map keys
// (mutations' values are JSON, whose objects encoding/json writes with sorted keys
// once decoded; raw JSON values are compacted).
func (in Inputs) Digest() (string, error) {
	muts, err := canonicalMutations(in.Mutations)
	if err != nil {
		return "", err
	}
	return digestOf(inputsEncoding{
		Format: inputsFormat, ChartDigest: in.ChartDigest, ValuesDigest: in.ValuesDigest, Mutations: muts,
		ReleaseName: in.ReleaseName, Namespace: in.Namespace, IsUpgrade: in.IsUpgrade, Verify: in.Verify,
	})
}

// legacyDigest is the digest that convoy gave the same inputs in format 1, for the
// target's capabilities caps.
func (in Inputs) legacyDigest(caps Capabilities) (string, error) {
	versions := slices.Clone(caps.APIVersions)
	slices.Sort(versions)
	versions = slices.Compact(versions)
	muts, err := canonicalMutations(in.Mutations)
	if err != nil {
		return "", err
	}
	return digestOf(inputsEncodingV1{
		Format: 1, ChartDigest: in.ChartDigest, ValuesDigest: in.ValuesDigest, Mutations: muts,
		KubeVersion: caps.KubeVersion, APIVersions: versions, ReleaseName: in.ReleaseName, Namespace: in.Namespace,
		IsUpgrade: in.IsUpgrade,
	})
}

func digestOf(encoding any) (string, error) {
	b, err := json.Marshal(encoding)
	if err != nil {
		return "", fmt.Errorf("the digest of the render's inputs: %w", err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// canonicalMutations copies mutations with each JSON patch value re-encoded with
// sorted keys, so that {"a":1,"b":2} and {"b":2,"a":1} are the same input.
func canonicalMutations(muts []v1alpha1.Mutation) ([]v1alpha1.Mutation, error) {
	out := make([]v1alpha1.Mutation, 0, len(muts))
	for i, m := range muts {
		c := *m.DeepCopy()
		for j, op := range c.JSONPatch {
			if op.Value == nil || len(op.Value.Raw) == 0 {
				continue
			}
			var v any
			if err := json.Unmarshal(op.Value.Raw, &v); err != nil {
				return nil, unappliable("mutations[%d].jsonPatch[%d].value is not JSON: %w", i, j, err)
			}
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			c.JSONPatch[j].Value.Raw = raw
		}
		out = append(out, c)
	}
	return out, nil
}

// inputsLabelLength is how many hex digits of an inputs digest LabelInputs holds.
const inputsLabelLength = 32

// InputsLabel is the value of LabelInputs for an inputs digest.
func InputsLabel(digest string) string {
	hex := strings.TrimPrefix(digest, "sha256:")
	if len(hex) > inputsLabelLength {
		hex = hex[:inputsLabelLength]
	}
	return hex
}
