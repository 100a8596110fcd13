package v1alpha1

import (
	"fmt"
	"net/url"
	"strconv"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// Field selectors, beyond metadata.name and metadata.namespace.
const (
	// FieldReleaseCluster selects Releases by spec.cluster (empty: the host cluster).
	FieldReleaseCluster = "spec.cluster"
	// FieldRenderRelease selects Renders by the Release they belong to.
	FieldRenderRelease = "release"
	// FieldRenderRef selects Renders by render ref.
	FieldRenderRef = "renderRef"
	// FieldReleaseInventoryCluster selects ReleaseInventories by cluster.
	FieldReleaseInventoryCluster = "cluster"
)

// SelectableFields are the field selectors each kind supports, besides metadata.name and
// metadata.namespace.
var SelectableFields = map[string][]string{
	"Release":          {FieldReleaseCluster},
	"Render":           {FieldRenderRelease, FieldRenderRef},
	"ReleaseInventory": {FieldReleaseInventoryCluster},
	"Cluster":          {},
	"ReleaseSet":       {},
	"Alert":            {},
	"Receiver":         {},
}

func addFieldLabelConversions(scheme *runtime.Scheme) error {
	for kind, extra := range SelectableFields {
		allowed := map[string]bool{"metadata.name": true, "metadata.namespace": true}
		for _, f := range extra {
			allowed[f] = true
		}
		err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind(kind),
			func(label, value string) (string, string, error) {
				if !allowed[label] {
					return "", "", fmt.Errorf("field label not supported for %s: %s", kind, label)
				}
				return label, value, nil
			})
		if err != nil {
			return fmt.Errorf("adding field label conversion for %s: %w", kind, err)
		}
	}
	return nil
}

// addSyncOptionsConversion decodes the query parameters of POST releases/<name>/sync.
// A force that is not a boolean is an error, which the server answers with 400.
func addSyncOptionsConversion(scheme *runtime.Scheme) error {
	return scheme.AddConversionFunc((*url.Values)(nil), (*SyncOptions)(nil),
		func(a, b interface{}, _ conversion.Scope) error {
			return convertURLValuesToSyncOptions(a.(*url.Values), b.(*SyncOptions))
		})
}

func convertURLValuesToSyncOptions(in *url.Values, out *SyncOptions) error {
	out.Force, out.Render = false, ""
	if values := (*in)["render"]; len(values) > 0 {
		out.Render = values[len(values)-1]
		if p := RenderRef(out.Render).ShortProblem(); p != "" {
			return fmt.Errorf("render must be a render ref, sha256: and 64 hex digits or its first 10 hex digits, got %q: %s", out.Render, p)
		}
	}
	values, ok := (*in)["force"]
	if !ok || len(values) == 0 {
		return nil
	}
	v := values[len(values)-1]
	if v == "" {
		// ?force alone means force, like kubectl's boolean flags.
		out.Force = true
		return nil
	}
	force, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("force must be a boolean (true or false), got %q", v)
	}
	out.Force = force
	return nil
}
