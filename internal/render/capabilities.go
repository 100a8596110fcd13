package render

import (
	"fmt"
	"sort"

	"helm.sh/helm/v4/pkg/chart/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Capabilities describe the target cluster to the chart's templates and to the
// namespace defaulting. The caller takes them from the target's discovery (see
// CapabilitiesFromDiscovery).
type Capabilities struct {
	// KubeVersion is the target's Kubernetes version ("v1.37.2"). Empty: the version
	// of the Kubernetes libraries convoy is built with.
	KubeVersion string
	// APIVersions are the group versions ("apps/v1") and group version kinds
	// ("apps/v1/Deployment") the target serves, for .Capabilities.APIVersions.Has.
	// Nil: Helm's default list of built-in API versions.
	APIVersions []string
	// Namespaced says for each kind the target serves whether it is namespaced.
	// Kinds missing here are looked up in the CRDs of the render itself, then in a
	// list of built-in cluster-scoped kinds; anything else counts as namespaced.
	Namespaced map[schema.GroupKind]bool
}

// CapabilitiesFromDiscovery builds Capabilities from a target's server version
// (its gitVersion) and preferred or full server resources.
func CapabilitiesFromDiscovery(kubeVersion string, resources []*metav1.APIResourceList) Capabilities {
	caps := Capabilities{KubeVersion: kubeVersion, Namespaced: map[schema.GroupKind]bool{}}
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			caps.APIVersions = append(caps.APIVersions, s)
		}
	}
	for _, list := range resources {
		if list == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		add(gv.String())
		for _, r := range list.APIResources {
			if r.Kind == "" || containsSlash(r.Name) { // subresources
				continue
			}
			add(gv.String() + "/" + r.Kind)
			caps.Namespaced[schema.GroupKind{Group: gv.Group, Kind: r.Kind}] = r.Namespaced
		}
	}
	sort.Strings(caps.APIVersions)
	return caps
}

func containsSlash(s string) bool {
	for i := range len(s) {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

// helmCapabilities turns Capabilities into Helm's.
func (c Capabilities) helmCapabilities() (*common.Capabilities, error) {
	kv, err := c.kubeVersion()
	if err != nil {
		return nil, err
	}
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	if c.APIVersions != nil {
		caps.APIVersions = append(common.VersionSet(nil), c.APIVersions...)
	}
	return caps, nil
}

// kubeVersion is Helm's KubeVersion of c.
func (c Capabilities) kubeVersion() (*common.KubeVersion, error) {
	if c.KubeVersion == "" {
		kv := common.DefaultCapabilities.KubeVersion
		return &kv, nil
	}
	kv, err := common.ParseKubeVersion(c.KubeVersion)
	if err != nil {
		return nil, fmt.Errorf("kubernetes version %q: %w", c.KubeVersion, err)
	}
	return kv, nil
}

// builtinClusterScoped are the built-in kinds that are not namespaced, for when the
// caller's discovery does not cover a kind.
var builtinClusterScoped = map[schema.GroupKind]bool{
	{Group: "", Kind: "Namespace"}:                                                    true,
	{Group: "", Kind: "Node"}:                                                         true,
	{Group: "", Kind: "PersistentVolume"}:                                             true,
	{Group: "", Kind: "ComponentStatus"}:                                              true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                      true,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:                             true,
	{Group: "authentication.k8s.io", Kind: "SelfSubjectReview"}:                       true,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:                      true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:                  true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectRulesReview"}:                   true,
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}:               true,
}
