package render

import (
	"fmt"
	"sort"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/manifest"
)

// Object is a rendered object with its sync wave (manifest.Object).
type Object = manifest.Object

// decodeManifests parses a multi-document YAML file into objects; List kinds are
// expanded. Empty documents are skipped.
func decodeManifests(file, content string) ([]*unstructured.Unstructured, error) {
	docs := releaseutil.SplitManifests(content)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var out []*unstructured.Unstructured
	for _, k := range keys {
		objs, err := manifest.DecodeDocument([]byte(docs[k]))
		if err != nil {
			return nil, unappliable("%s: %w", file, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// describe names an object for messages: "apps/v1 Deployment team-a/web".
func describe(u *unstructured.Unstructured) string {
	name := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s %s", u.GetAPIVersion(), u.GetKind(), name)
}

// parseHook reads the Helm hook annotations of u (hooks.Parse); a hook Job must be a
// valid Job.
func parseHook(u *unstructured.Unstructured) (hooks.Chart, bool, []string, error) {
	c, ok, warnings := hooks.Parse(u, describe(u))
	if ok && hooks.IsJob(u) {
		var job batchv1.Job
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &job); err != nil {
			return hooks.Chart{}, false, nil, unappliable("hook %s: not a valid Job: %w", describe(u), err)
		}
	}
	return c, ok, warnings, nil
}

// scopes decides whether a kind is namespaced: from the target's discovery, then
// from the CRDs of the render, then from the built-in cluster-scoped kinds.
type scopes struct {
	discovered map[schema.GroupKind]bool
	crds       map[schema.GroupKind]bool
}

func newScopes(caps Capabilities, objs []*unstructured.Unstructured) scopes {
	s := scopes{discovered: caps.Namespaced, crds: map[schema.GroupKind]bool{}}
	for _, u := range objs {
		if !isCRD(u) {
			continue
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
		if kind != "" {
			s.crds[schema.GroupKind{Group: group, Kind: kind}] = scope != "Cluster"
		}
	}
	return s
}

func (s scopes) namespaced(gk schema.GroupKind) bool {
	if n, ok := s.discovered[gk]; ok {
		return n
	}
	if n, ok := s.crds[gk]; ok {
		return n
	}
	return !builtinClusterScoped[gk]
}

func isCRD(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// setNamespace gives a namespaced object without a namespace the target namespace,
// and removes the namespace of a cluster-scoped object (the API server ignores it).
func (s scopes) setNamespace(u *unstructured.Unstructured, target string) {
	if s.namespaced(u.GroupVersionKind().GroupKind()) {
		if u.GetNamespace() == "" {
			u.SetNamespace(target)
		}
		return
	}
	if u.GetNamespace() != "" {
		u.SetNamespace("")
	}
}

// setLabels sets the convoy labels that name the Release (v1alpha1.SetReleaseLabels).
func setLabels(u *unstructured.Unstructured, rel *v1alpha1.Release) {
	v1alpha1.SetReleaseLabels(u, rel.Name, rel.Namespace)
}

// checkIdentity rejects an object that cannot be applied for lack of a name.
func checkIdentity(u *unstructured.Unstructured) error {
	switch {
	case u.GetAPIVersion() == "" || u.GetKind() == "":
		return unappliable("object %q has no apiVersion or kind", u.GetName())
	case u.GetName() == "":
		if u.GetGenerateName() != "" {
			return unappliable("%s uses metadata.generateName, which server-side apply cannot handle; give it a name", describe(u))
		}
		return unappliable("%s %s has no metadata.name", u.GetAPIVersion(), u.GetKind())
	}
	return nil
}
