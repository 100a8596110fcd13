package targets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// ReadValuesSource reads the data of a ConfigMap (data and binaryData) or a Secret that
// a valuesFrom entry names, with reader: for a Release (the release controller) and
// for a ReleaseSet resolving its template's valuesFrom, with the identity the Release
// would use. A missing object is reader's NotFound error.
func ReadValuesSource(ctx context.Context, reader client.Reader, namespace string, kind v1.ValuesSourceKind, name string) (map[string][]byte, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	switch kind {
	case v1.ValuesSourceConfigMap:
		cm := &corev1.ConfigMap{}
		if err := reader.Get(ctx, key, cm); err != nil {
			return nil, err
		}
		out := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
		for k, v := range cm.BinaryData {
			out[k] = v
		}
		for k, v := range cm.Data {
			out[k] = []byte(v)
		}
		return out, nil
	case v1.ValuesSourceSecret:
		s := &corev1.Secret{}
		if err := reader.Get(ctx, key, s); err != nil {
			return nil, err
		}
		return s.Data, nil
	}
	return nil, fmt.Errorf("valuesFrom kind %q is not supported; use ConfigMap or Secret", kind)
}
