package registry

import (
	"bytes"
	"encoding/json"
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	forkedreflect "k8s.io/apimachinery/third_party/forked/golang/reflect"
)

// Semantic is apimachinery's semantic equality, plus free-form JSON (RawExtension)
// compared by value: {"a":1, "b":2} equals {"b":2,"a":1}, so that re-sending the same
// values in another key order or formatting does not bump the generation.
var Semantic = func() conversion.Equalities {
	eq := conversion.Equalities{Equalities: forkedreflect.Equalities{}}
	for t, f := range apiequality.Semantic.Equalities {
		eq.Equalities[t] = f
	}
	if err := eq.AddFunc(rawExtensionEqual); err != nil {
		panic(err)
	}
	return eq
}()

func rawExtensionEqual(a, b runtime.RawExtension) bool {
	if bytes.Equal(a.Raw, b.Raw) {
		return true
	}
	var av, bv interface{}
	if json.Unmarshal(a.Raw, &av) != nil || json.Unmarshal(b.Raw, &bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}
