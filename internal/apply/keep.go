package apply

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
)

// Helm's resource policy: an object annotated helm.sh/resource-policy: keep is
// never deleted by Helm, neither when an upgrade drops it nor when the release is
// uninstalled. These are helm.sh/helm/v4/pkg/kube's ResourcePolicyAnno and
// KeepPolicy, written out rather than imported: that package's init adds the
// apiextensions types to client-go's global scheme, which no client of convoy's
// should see change under it.
const (
	resourcePolicyAnnotation = "helm.sh/resource-policy"
	keepPolicy               = "keep"
)

// saysKeep reports whether u is annotated helm.sh/resource-policy: keep. Like
// Helm's uninstall, the value is compared without case and surrounding blanks.
func saysKeep(u *unstructured.Unstructured) bool {
	v, ok := u.GetAnnotations()[resourcePolicyAnnotation]
	return ok && strings.EqualFold(strings.TrimSpace(v), keepPolicy)
}

// Kept returns the objects of a render that are annotated
// helm.sh/resource-policy: keep, for PruneInput.Keep and DeleteInput.Keep.
func Kept(objects []Object) []v1alpha1.ObjectReference {
	var out []v1alpha1.ObjectReference
	for _, o := range objects {
		if o.Object != nil && saysKeep(o.Object) {
			out = append(out, o.Entry().ObjectReference)
		}
	}
	return out
}

// keepSet indexes references by identity (the version does not count).
func keepSet(refs []v1alpha1.ObjectReference) map[identity]bool {
	set := make(map[identity]bool, len(refs))
	for _, r := range refs {
		set[identityOf(r)] = true
	}
	return set
}
