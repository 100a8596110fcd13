// Package manifest is the codec of a Render's manifests: the canonical stream of a
// render (a YAML stream, one "---" line before each object, keys sorted) gzip'd. The
// controller writes it, and the controller, the observer, the CLI, the UI and convoy
// apiserver read it through this package.
//
// It decodes what convoy wrote; it must not import Helm (the observer, the CLI and
// the API server read renders without rendering charts) and it does no I/O. What an
// object's annotations mean beyond its sync wave (Helm hooks) is for its callers.
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/gz"
)

// Object is an object of a render with its sync wave.
type Object struct {
	*unstructured.Unstructured
	// Wave is the object's sync wave (also what WaveOf reads from its annotations).
	Wave int32
}

// Compress gzip's a canonical stream into a Render's manifests (best compression:
// a Render is written once and kept).
func Compress(stream []byte) ([]byte, error) {
	return gz.Compress(gz.Best, func(zw io.Writer) error {
		_, err := zw.Write(stream)
		return err
	})
}

// Decompress returns the canonical stream that a Render's manifests hold.
func Decompress(manifests []byte) ([]byte, error) {
	return gz.Decompress(manifests)
}

// Decode reads a Render's manifests into their objects, in the stream's order
// (chart hooks included).
func Decode(manifests []byte) ([]*unstructured.Unstructured, error) {
	stream, err := Decompress(manifests)
	if err != nil {
		return nil, fmt.Errorf("reading the manifests: %w", err)
	}
	return DecodeStream(stream)
}

// DecodeStream reads a YAML stream of objects, documents separated by "---" lines,
// in order. Empty documents and documents of only comments are skipped; a List is
// expanded into its items.
func DecodeStream(stream []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("YAML parse error: %w", err)
		}
		objs, err := DecodeDocument(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
}

// DecodeDocument reads one YAML document: nothing when it is empty or only comments,
// the items of a List, else the object.
func DecodeDocument(doc []byte) ([]*unstructured.Unstructured, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("YAML parse error: %w", err)
	}
	if s := strings.TrimSpace(string(j)); s == "null" || s == "" {
		return nil, nil // a document of only comments
	}
	obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, j)
	if err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return []*unstructured.Unstructured{o}, nil
	case *unstructured.UnstructuredList:
		out := make([]*unstructured.Unstructured, len(o.Items))
		for i := range o.Items {
			out[i] = &o.Items[i]
		}
		return out, nil
	}
	return nil, nil
}

// WaveOf returns the sync wave of an object: its convoy.kumodo.io/sync-wave
// annotation, else its argocd.argoproj.io/sync-wave annotation, else 0. A value that
// is not an integer is an error naming the annotation.
func WaveOf(u *unstructured.Unstructured) (int32, error) {
	a := u.GetAnnotations()
	key := v1alpha1.AnnotationSyncWave
	v, ok := a[key]
	if !ok {
		key = v1alpha1.AnnotationArgoSyncWave
		if v, ok = a[key]; !ok {
			return 0, nil
		}
	}
	w, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("annotation %s: %q is not an integer sync wave", key, v)
	}
	return int32(w), nil
}
