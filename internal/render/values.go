package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kumodo.io/convoy/api/v1alpha1"
)

// ErrNotFound is what a ValuesReader returns (or wraps) for a missing ConfigMap or
// Secret. An error for which apierrors.IsNotFound is true counts the same.
var ErrNotFound = errors.New("not found")

// ValuesReader reads the ConfigMaps and Secrets that valuesFrom names, on the host
// cluster. The controller implements it; render never talks to a cluster itself.
type ValuesReader interface {
	// ReadValuesSource returns the data of the ConfigMap (data and binaryData) or
	// Secret (data) kind/name in namespace. A missing object is ErrNotFound or an
	// error for which apierrors.IsNotFound is true.
	ReadValuesSource(ctx context.Context, namespace string, kind v1alpha1.ValuesSourceKind, name string) (map[string][]byte, error)
}

// ValuesReaderFunc is a function that is a ValuesReader.
type ValuesReaderFunc func(ctx context.Context, namespace string, kind v1alpha1.ValuesSourceKind, name string) (map[string][]byte, error)

// ReadValuesSource calls f.
func (f ValuesReaderFunc) ReadValuesSource(ctx context.Context, namespace string, kind v1alpha1.ValuesSourceKind, name string) (map[string][]byte, error) {
	return f(ctx, namespace, kind, name)
}

// defaultValuesKey is the key read when a valuesFrom entry names none.
const defaultValuesKey = "values.yaml"

// Values are a Release's values, merged (MergeValues).
type Values struct {
	merged map[string]any
	// Digest is sha256:<hex> of the merged values' canonical JSON
	// (Result.ValuesDigest).
	Digest string
}

// MergeValues reads the ConfigMaps and Secrets of the Release's valuesFrom with
// reader (nil: the Release may have no valuesFrom) and merges them with spec.values,
// as a render takes them. Errors are *Error (ValuesNotReady, Unsupported,
// Unappliable) naming the Release, except a cancelled context.
func MergeValues(ctx context.Context, rel *v1alpha1.Release, reader ValuesReader) (*Values, error) {
	what := releaseWhat(rel)
	vals, err := mergeValues(ctx, rel, reader)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	digest, err := valuesDigest(vals)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &Values{merged: vals, Digest: digest}, nil
}

// mergeValues returns the Release's values: each valuesFrom entry in order, then
// spec.values, each merged over the previous as Helm merges several --values files
// (maps merge recursively, anything else is replaced; a null removes a chart default).
func mergeValues(ctx context.Context, rel *v1alpha1.Release, reader ValuesReader) (map[string]any, error) {
	merged := map[string]any{}
	for i, ref := range rel.Spec.ValuesFrom {
		vals, err := readValuesFrom(ctx, rel.Namespace, i, ref, reader)
		if err != nil {
			return nil, err
		}
		merged = loader.MergeMaps(merged, vals)
	}
	if v := rel.Spec.Values; v != nil && len(bytes.TrimSpace(v.Raw)) > 0 && !bytes.Equal(bytes.TrimSpace(v.Raw), []byte("null")) {
		var vals map[string]any
		if err := json.Unmarshal(v.Raw, &vals); err != nil {
			return nil, unappliable("spec.values is not an object of values: %w", err)
		}
		merged = loader.MergeMaps(merged, vals)
	}
	return merged, nil
}

// ValuesKey is the key that a valuesFrom entry reads: its key, or values.yaml.
func ValuesKey(ref v1alpha1.ValuesReference) string {
	if ref.Key == "" {
		return defaultValuesKey
	}
	return ref.Key
}

func readValuesFrom(ctx context.Context, namespace string, i int, ref v1alpha1.ValuesReference, reader ValuesReader) (map[string]any, error) {
	key := ValuesKey(ref)
	what := fmt.Sprintf("spec.valuesFrom[%d] (%s %s/%s, key %s)", i, ref.Kind, namespace, ref.Name, key)
	switch ref.Kind {
	case v1alpha1.ValuesSourceConfigMap, v1alpha1.ValuesSourceSecret:
	default:
		return nil, unsupported("%s: kind %q is not supported; use ConfigMap or Secret", what, ref.Kind)
	}
	if reader == nil {
		return nil, valuesNotReady("%s: no reader of ConfigMaps and Secrets was given", what)
	}
	data, err := reader.ReadValuesSource(ctx, namespace, ref.Kind, ref.Name)
	switch {
	case err != nil && (errors.Is(err, ErrNotFound) || apierrors.IsNotFound(err)):
		if ref.Optional {
			return nil, nil
		}
		return nil, valuesNotReady("%s: the %s does not exist; create it or mark the entry optional: %w", what, ref.Kind, err)
	case err != nil:
		return nil, valuesNotReady("%s: reading it failed: %w", what, err)
	}
	raw, ok := data[key]
	if !ok {
		if ref.Optional {
			return nil, nil
		}
		return nil, valuesNotReady("%s: the %s has no key %q; add it or mark the entry optional", what, ref.Kind, key)
	}
	vals, err := loader.LoadValues(bytes.NewReader(raw))
	if err != nil {
		if ref.Kind == v1alpha1.ValuesSourceSecret {
			// The parser's message may quote the data (an anchor's name, a token), and
			// the message reaches the Release's condition, events and logs, which
			// people without access to the Secret read: keep only where it failed.
			return nil, valuesNotReady("%s: not YAML values%s; the parser's message is left out because it may quote the Secret's data", what, lineOf(err))
		}
		return nil, valuesNotReady("%s: not YAML values: %w", what, err)
	}
	return vals, nil
}

// yamlLine finds the line number in a YAML parser's message.
var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// lineOf is " (line N)" for the first line number err's message names, else "".
func lineOf(err error) string {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return " (line " + m[1] + ")"
	}
	return ""
}

// valuesDigest is the sha256 of the values' canonical JSON (sorted keys).
func valuesDigest(vals map[string]any) (string, error) {
	b, err := json.Marshal(vals)
	if err != nil {
		return "", unappliable("values cannot be serialised: %w", err)
	}
	return "sha256:" + sha256Hex(b), nil
}
