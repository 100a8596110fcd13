package apiserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

var (
	// Scheme knows the convoy types under v1alpha1 and, as the same Go types, under the
	// internal version: convoy has a single version, so the server stores and serves
	// v1alpha1 objects directly and needs no conversion code.
	Scheme = runtime.NewScheme()
	// Codecs encodes and decodes with Scheme.
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec decodes query parameters, including the /sync options.
	ParameterCodec = runtime.NewParameterCodec(Scheme)

	// namerScheme knows only the external types; it names OpenAPI definitions, so
	// that they carry only the v1alpha1 group-version-kinds.
	namerScheme = runtime.NewScheme()
)

// internalVersion is the hub version of the group.
var internalVersion = schema.GroupVersion{Group: convoyv1alpha1.GroupName, Version: runtime.APIVersionInternal}

func init() {
	utilruntime.Must(convoyv1alpha1.AddToScheme(Scheme))
	Scheme.AddKnownTypes(internalVersion, convoyv1alpha1.KnownTypes()...)
	utilruntime.Must(Scheme.SetVersionPriority(convoyv1alpha1.SchemeGroupVersion))

	// The meta types every API server needs (Status, APIGroup, ...), unversioned.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)

	utilruntime.Must(convoyv1alpha1.AddToScheme(namerScheme))
	metav1.AddToGroupVersion(namerScheme, schema.GroupVersion{Version: "v1"})
}

// withoutProtobuf is a NegotiatedSerializer that does not offer protobuf. It serves
// the convoy resources, whose types have no protobuf encoding (as CRDs have none): a
// client that asks for protobuf first and JSON after, as kube-controller-manager's
// do, gets JSON instead of a failed encoding; one that accepts protobuf only gets
// 406 Not Acceptable.
type withoutProtobuf struct {
	runtime.NegotiatedSerializer
}

func (s withoutProtobuf) SupportedMediaTypes() []runtime.SerializerInfo {
	var infos []runtime.SerializerInfo
	for _, info := range s.NegotiatedSerializer.SupportedMediaTypes() {
		if info.MediaType != runtime.ContentTypeProtobuf {
			infos = append(infos, info)
		}
	}
	return infos
}
