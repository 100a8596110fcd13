package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/gz"
)

// The compact form of a render is how a process keeps a render in memory to reuse it
// at every reconcile: its objects and then its chart's hooks, in canonical order, one
// JSON document a line, gzip'd. It holds what the canonical stream holds, but reads
// back without a YAML parser: converting the canonical YAML to JSON was 10 % of the
// controller's CPU in a steady state of 10,000 Releases (decision 0134). It is not stored
// anywhere; Render objects keep the canonical stream (NewRenderObject).

// Compact is the compact form of res.
func Compact(res *Result) ([]byte, error) {
	return gz.Compress(gz.Default, func(zw io.Writer) error {
		write := func(u *unstructured.Unstructured) error {
			b, err := json.Marshal(u.Object)
			if err != nil {
				return fmt.Errorf("render %s: %s: %w", res.Ref, describe(u), err)
			}
			if _, err := zw.Write(b); err != nil {
				return err
			}
			_, err = zw.Write([]byte{'\n'})
			return err
		}
		for _, o := range res.Objects {
			if err := write(o.Unstructured); err != nil {
				return err
			}
		}
		for _, h := range res.Hooks {
			if err := write(h.Object); err != nil {
				return err
			}
		}
		return nil
	})
}

// ResultFromCompact is ResultFromObject for a Render object kept in memory without
// its manifests and the compact form of its render (Compact): it reads the objects
// from the compact form. The result has no Canonical: NewRenderObject makes it again
// from the objects, if it is needed.
func ResultFromCompact(obj *v1alpha1.Render, compact []byte) (*Result, error) {
	what := fmt.Sprintf("Render %s/%s", obj.Namespace, obj.Name)
	data, err := gz.Decompress(compact)
	if err != nil {
		return nil, fmt.Errorf("%s: compact form: %w", what, err)
	}
	var us []*unstructured.Unstructured
	lines := bufio.NewScanner(bytes.NewReader(data))
	lines.Buffer(nil, 64<<20)
	for lines.Scan() {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(lines.Bytes()); err != nil {
			return nil, fmt.Errorf("%s: compact form: %w", what, err)
		}
		us = append(us, u)
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("%s: compact form: %w", what, err)
	}
	objs, chartHooks, err := split(us)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return resultOf(obj, objs, chartHooks)
}
