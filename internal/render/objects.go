package render

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
)

// Object is a rendered object with its sync wave.
type Object struct {
	*unstructured.Unstructured
	// Wave is the object's sync wave (also what WaveOf reads from its annotations).
	Wave int32
}

// Hook is a lifecycle hook taken from a Helm hook Job of the chart.
type Hook struct {
	// Hook is the lifecycle hook: the Job's name, PreApply for pre-install and
	// pre-upgrade, PostApply for post-install and post-upgrade, batch = hook weight.
	v1alpha1.Hook
	// Object is the Job as rendered (labels and annotations included).
	Object *unstructured.Unstructured
}

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
		doc := docs[k]
		if strings.TrimSpace(doc) == "" {
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, unappliable("%s: YAML parse error: %w", file, err)
		}
		if s := strings.TrimSpace(string(j)); s == "null" || s == "" {
			continue // a document of only comments
		}
		obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, j)
		if err != nil {
			return nil, unappliable("%s: not a Kubernetes object: %w", file, err)
		}
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			out = append(out, o)
		case *unstructured.UnstructuredList:
			for i := range o.Items {
				out = append(out, &o.Items[i])
			}
		}
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

// hookClass is what a Helm hook annotation makes of an object.
type hookClass int

const (
	notHook       hookClass = iota // an ordinary object
	hookFirstWave                  // an install/upgrade hook that is not a Job: applied in the first wave
	hookJob                        // a Job with install/upgrade hooks: a lifecycle hook
	hookDropped                    // test, delete, rollback or unknown hooks: left out
)

// classifyHook reads the helm.sh/hook annotation of u. For hookJob it returns the
// phase; warnings say what convoy leaves out.
func classifyHook(u *unstructured.Unstructured) (hookClass, v1alpha1.HookPhase, []string) {
	value, ok := u.GetAnnotations()[release.HookAnnotation]
	if !ok {
		return notHook, "", nil
	}
	var pre, post bool
	var ignored, unknown []string
	for ev := range strings.SplitSeq(value, ",") {
		ev = strings.ToLower(strings.TrimSpace(ev))
		switch release.HookEvent(ev) {
		case release.HookPreInstall, release.HookPreUpgrade:
			pre = true
		case release.HookPostInstall, release.HookPostUpgrade:
			post = true
		case release.HookTest, release.HookPreDelete, release.HookPostDelete, release.HookPreRollback, release.HookPostRollback:
			ignored = append(ignored, ev)
		case "test-success":
			ignored = append(ignored, ev)
		default:
			unknown = append(unknown, ev)
		}
	}
	what := describe(u)
	switch {
	case len(unknown) > 0:
		return hookDropped, "", []string{fmt.Sprintf("%s is left out: unknown Helm hook %q", what, strings.Join(unknown, ","))}
	case !pre && !post:
		return hookDropped, "", []string{fmt.Sprintf("%s is left out: convoy does not run Helm %s hooks", what, strings.Join(ignored, ","))}
	}
	var warnings []string
	if len(ignored) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: convoy does not run its Helm %s hooks", what, strings.Join(ignored, ",")))
	}
	if !isJob(u) {
		return hookFirstWave, "", warnings
	}
	if pre && post {
		warnings = append(warnings, fmt.Sprintf("%s is both a pre and a post hook: convoy runs it once, as a PreApply hook", what))
	}
	if pre {
		return hookJob, v1alpha1.HookPreApply, warnings
	}
	return hookJob, v1alpha1.HookPostApply, warnings
}

func isJob(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "batch" && gvk.Kind == "Job"
}

// toHook makes a lifecycle hook of a Helm hook Job.
func toHook(u *unstructured.Unstructured, phase v1alpha1.HookPhase) (Hook, error) {
	var job batchv1.Job
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &job); err != nil {
		return Hook{}, unappliable("hook %s: not a valid Job: %w", describe(u), err)
	}
	// Helm's rule: a weight that is not an integer is 0.
	weight, err := strconv.ParseInt(strings.TrimSpace(u.GetAnnotations()[release.HookWeightAnnotation]), 10, 32)
	if err != nil {
		weight = 0
	}
	return Hook{
		Hook: v1alpha1.Hook{
			Name:  u.GetName(),
			Phase: phase,
			Batch: int32(weight),
			Job:   &job.Spec,
		},
		Object: u,
	}, nil
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

// setLabels sets the convoy labels that name the Release.
func setLabels(u *unstructured.Unstructured, rel *v1alpha1.Release) {
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[v1alpha1.LabelReleaseName] = rel.Name
	l[v1alpha1.LabelReleaseNamespace] = rel.Namespace
	u.SetLabels(l)
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
