package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Lookup reads objects of the target cluster for the templates' lookup function, with
// the identity that applies to that cluster. The controller implements it; render
// never talks to a cluster itself, and asks it only for the Release's target namespace
// and for cluster-scoped objects.
type Lookup interface {
	// Namespaced says whether the objects of apiVersion/kind are namespaced; ok is
	// false when the target does not serve that kind.
	Namespaced(ctx context.Context, apiVersion, kind string) (namespaced, ok bool, err error)
	// Get returns the object, nil when it does not exist. namespace is "" for a
	// cluster-scoped kind.
	Get(ctx context.Context, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the objects of apiVersion/kind in namespace ("" for a
	// cluster-scoped kind).
	List(ctx context.Context, apiVersion, kind, namespace string) (*unstructured.UnstructuredList, error)
}

// LookupRead is one read of the templates' lookup and what it found, recorded on the
// render: the render is reused only while every read finds the same.
type LookupRead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Namespace is the namespace asked for; empty for a cluster-scoped kind.
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name; empty for a list.
	Name string `json:"name,omitempty"`
	// Digest is sha256:<hex> of what was found, apart from the fields that change on
	// every write (resourceVersion, managedFields, generation) and status; empty when
	// nothing was found.
	Digest string `json:"digest,omitempty"`
}

// lookups is the templates' lookup function of one render: it asks the Lookup for the
// target namespace and cluster-scoped kinds only, and records every read.
type lookups struct {
	ctx       context.Context
	source    Lookup
	namespace string // the Release's target namespace

	mu       sync.Mutex
	reads    map[LookupRead]LookupRead // by the read without its digest
	answers  map[LookupRead]map[string]any
	warnings []string
}

func newLookups(ctx context.Context, source Lookup, namespace string) *lookups {
	return &lookups{ctx: ctx, source: source, namespace: namespace,
		reads: map[LookupRead]LookupRead{}, answers: map[LookupRead]map[string]any{}}
}

// lookup is the template function: lookup apiVersion kind namespace name. It answers
// an empty map when nothing is found, when the kind is not served, and when the
// object is outside what the Release may read (with a warning). The same read in one
// render gets the same answer.
func (l *lookups) lookup(apiVersion, kind, namespace, name string) (map[string]any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := LookupRead{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
	if answer, ok := l.answers[key]; ok {
		return answer, nil
	}
	read, answer, refused, err := readLookup(l.ctx, l.source, l.namespace, key)
	if err != nil {
		return nil, err
	}
	if refused != "" {
		l.warnings = append(l.warnings, refused)
	} else {
		l.reads[read.withoutDigest()] = read
	}
	l.answers[key] = answer
	return answer, nil
}

// recorded returns the reads, sorted, and the warnings.
func (l *lookups) recorded() ([]LookupRead, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]LookupRead, 0, len(l.reads))
	for _, r := range l.reads {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out, slices.Clone(l.warnings)
}

func (r LookupRead) withoutDigest() LookupRead {
	r.Digest = ""
	return r
}

func (r LookupRead) less(o LookupRead) bool {
	a := []string{r.APIVersion, r.Kind, r.Namespace, r.Name}
	b := []string{o.APIVersion, o.Kind, o.Namespace, o.Name}
	return slices.Compare(a, b) < 0
}

// readLookup carries out one lookup: the read with the digest of what it found, the
// answer for the template, or why it was refused (a read outside the target namespace).
func readLookup(ctx context.Context, source Lookup, targetNS string, key LookupRead) (LookupRead, map[string]any, string, error) {
	what := fmt.Sprintf("lookup %q %q %q %q", key.APIVersion, key.Kind, key.Namespace, key.Name)
	if _, err := schema.ParseGroupVersion(key.APIVersion); err != nil || key.Kind == "" {
		return key, nil, "", unappliable("%s: not an apiVersion and a kind", what)
	}
	namespaced, served, err := source.Namespaced(ctx, key.APIVersion, key.Kind)
	if err != nil {
		return key, nil, "", lookupFailed(what, err)
	}
	if !served {
		return key, map[string]any{}, "", nil // as a read that finds nothing
	}
	if namespaced && key.Namespace != targetNS {
		where := "all namespaces"
		if key.Namespace != "" {
			where = "namespace " + key.Namespace
		}
		return key, map[string]any{}, fmt.Sprintf("The chart's %s was refused: a Release's templates may look up objects "+
			"of its target namespace %s and cluster-scoped objects only, not of %s; the lookup found nothing.", what, targetNS, where), nil
	}
	ns := key.Namespace
	if !namespaced {
		ns, key.Namespace = "", ""
	}
	var found map[string]any
	if key.Name != "" {
		u, err := source.Get(ctx, key.APIVersion, key.Kind, ns, key.Name)
		if err != nil {
			return key, nil, "", lookupFailed(what, err)
		}
		if u != nil {
			found = u.UnstructuredContent()
		}
	} else {
		list, err := source.List(ctx, key.APIVersion, key.Kind, ns)
		if err != nil {
			return key, nil, "", lookupFailed(what, err)
		}
		if list != nil {
			found = list.UnstructuredContent()
		}
	}
	if found == nil {
		return key, map[string]any{}, "", nil
	}
	if key.Digest, err = lookupDigest(found); err != nil {
		return key, nil, "", lookupFailed(what, err)
	}
	return key, found, "", nil
}

// lookupFailed is the error of a lookup that the target did not answer: Unappliable
// (a template error, as in Helm), naming the read.
func lookupFailed(what string, err error) error {
	if apierrors.IsForbidden(err) {
		return unappliable("%s: the identity that applies the Release to its cluster may not read that: "+
			"grant it get and list there, or take the lookup out of the chart: %w", what, err)
	}
	return unappliable("%s on the target cluster failed: %w", what, err)
}

// lookupDigest is the digest of a lookup's answer without the fields that change at
// every write of an object and its status.
func lookupDigest(content map[string]any) (string, error) {
	c := runtimeCopy(content)
	strip := func(obj map[string]any) {
		delete(obj, "status")
		if meta, ok := obj["metadata"].(map[string]any); ok {
			delete(meta, "resourceVersion")
			delete(meta, "managedFields")
			delete(meta, "generation")
		}
	}
	strip(c)
	if items, ok := c["items"].([]any); ok {
		for _, it := range items {
			if obj, ok := it.(map[string]any); ok {
				strip(obj)
			}
		}
	}
	b, err := json.Marshal(c) // sorted keys
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func runtimeCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// lookupsChanged reads again what a render's lookups read, and reports whether any
// finds something else now. Without a Lookup, recorded reads count as changed.
func lookupsChanged(ctx context.Context, source Lookup, targetNS string, reads []LookupRead) (bool, error) {
	if len(reads) == 0 {
		return false, nil
	}
	if source == nil {
		return true, nil
	}
	for _, r := range reads {
		now, _, refused, err := readLookup(ctx, source, targetNS, r.withoutDigest())
		if err != nil {
			return false, err
		}
		if refused != "" || now.Digest != r.Digest {
			return true, nil
		}
	}
	return false, nil
}
