package apiserver_test

import (
	"net/url"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// Seeds: one object of each kind, with every field the validation looks at.
var decodeSeeds = []string{
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"podinfo","namespace":"team-a",
	  "annotations":{"convoy.kumodo.io/sync-requested-at":"2026-12-02T10:04:05Z","convoy.kumodo.io/sync-force-requested-at":"2026-12-02T10:04:05.5+01:00"}},
	 "spec":{"cluster":"prod-eu","clusterWave":1,"targetNamespace":"podinfo",
	  "chart":{"repository":"oci://ghcr.io/stefanprodan/charts","name":"podinfo","version":">=6.0.0 <7.0.0","secretRef":{"name":"creds"}},
	  "values":{"replicaCount":2,"a":{"b":[1,"x",null]}},
	  "valuesFrom":[{"kind":"ConfigMap","name":"v","key":"values.yaml","optional":true},{"kind":"Secret","name":"s"}],
	  "syncPolicy":{"automatic":true,"interval":"5m","retryBackoff":{"initial":"10s","factor":1.5,"max":"10m"}},
	  "failurePolicy":{"healthTimeout":"5m","action":"Halt"},"prune":false,"deletionPolicy":"Orphan"},
	 "mutations":[{"target":{"group":"apps","kind":"Deployment","name":"podinfo","labelSelector":"app in (a,b)"},"patch":"spec: {replicas: 5}"},
	  {"target":{"kind":"Service","name":"podinfo"},"jsonPatch":[{"op":"add","path":"/metadata/labels/tier","value":"web"},{"op":"move","from":"/a","path":"/b"}]}],
	 "lifecycle":{"hooks":[{"name":"migrate","phase":"PreApply","batch":0,"timeout":"10m","job":{"template":{"spec":{"containers":[{"name":"m","image":"busybox"}],"restartPolicy":"Never"}}}}]},
	 "pin":{"renderRef":"sha256:4f1c000000000000000000000000000000000000000000000000000000000000","reason":"incident 4711"}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"x","namespace":"n"},"spec":{"chart":{"repository":"ftp://x","name":""},"syncPolicy":{"interval":"-1s","retryBackoff":{"initial":"0s","max":"-1m","factor":"0.5"}},"failurePolicy":{"action":"Explode"},"valuesFrom":[{"kind":"Pod"}]},"mutations":[{"patch":"a: b","jsonPatch":[{"op":"nope","path":"x"}]},{}],"lifecycle":{"hooks":[{"name":"A_b","phase":"Later","batch":-1,"timeout":"0s"},{"name":"A_b"}]}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Cluster","metadata":{"name":"prod-eu"},"spec":{"kubeconfig":{"secretRef":{"namespace":"convoy-system","name":"prod-eu-kubeconfig","key":"value"}},"namespaceSelector":{"matchLabels":{"team":"a"},"matchExpressions":[{"key":"env","operator":"In","values":["prod"]}]}}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Cluster","metadata":{"name":"c"},"spec":{"kubeconfig":{"secretRef":{}},"namespaceSelector":{"matchExpressions":[{"key":"","operator":"Foo"}]}}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"ReleaseInventory","metadata":{"name":"podinfo","namespace":"team-a"},"cluster":"prod-eu","renderRef":"sha256:9a2b000000000000000000000000000000000000000000000000000000000000",
	 "objects":[{"group":"apps","version":"v1","kind":"Deployment","namespace":"podinfo","name":"podinfo","wave":1},{"version":"","kind":"","name":""}],
	 "status":{"renderRef":"sha256:9a2b000000000000000000000000000000000000000000000000000000000000","health":"Healthy","objects":[{"version":"v1","kind":"Service","name":"s","health":"Degraded","message":"m"}]}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Render","metadata":{"name":"podinfo-9a2b0c1d2e","namespace":"team-a"},"renderRef":"sha256:9a2b000000000000000000000000000000000000000000000000000000000000","release":"podinfo","chart":{"name":"podinfo","version":"6.7.1"},"valuesDigest":"sha256:00","objectCount":7,"waves":[0,1],"manifests":"H4sIAAAAAAAA/w=="}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"ReleaseSet","metadata":{"name":"podinfo","namespace":"team-a"},
	 "spec":{"clusterSelector":{"matchLabels":{"env":"prod"}},
	  "template":{"metadata":{"labels":{"team":"a"},"annotations":{"note":"x"}},"spec":{"chart":{"repository":"https://c","name":"podinfo"},"failurePolicy":{"action":"Rollback"}}},
	  "strategy":{"stages":[{"name":"canary","clusterSelector":{"matchExpressions":[{"key":"ring","operator":"In","values":["canary"]}]},"maxParallel":1},
	   {"name":"eu","clusterSelector":{"matchLabels":{"region":"eu"}},"maxParallel":"50%","approval":"Manual"},{"name":"rest","approval":"Automatic"}]}},
	 "approvals":[{"stage":"eu","revision":"sha256:00","approvedBy":"alice"}]}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"ReleaseSet","metadata":{"name":"s","namespace":"n"},"spec":{"template":{"metadata":{"labels":{"convoy.kumodo.io/cluster":"x"}},"spec":{"cluster":"c","chart":{}}},"strategy":{"stages":[{"name":"rest"},{"name":"rest","maxParallel":"0%","approval":"Never"},{"name":"A","maxParallel":0}]}}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Alert","metadata":{"name":"on-call","namespace":"team-a"},
	 "spec":{"selector":{"matchLabels":{"tier":"web"}},"events":["Applied","RolledBack","Halted"],"provider":{"type":"slack","secretRef":{"name":"slack-url"}},"uiURL":"https://convoy.example.com/ui/"}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Alert","metadata":{"name":"a","namespace":"n"},"spec":{"events":["Applied","Applied","Nope"],"provider":{"type":"pager","secretRef":{"name":"A_b"}},"uiURL":"ftp://x"}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Receiver","metadata":{"name":"github","namespace":"team-a"},"spec":{"type":"github","secretRef":{"name":"github-token"},"selector":{"matchExpressions":[{"key":"repo","operator":"In","values":["podinfo"]}]}}}`,
	`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Receiver","metadata":{"name":"r","namespace":"n"},"spec":{"type":"svn","secretRef":{},"selector":{"matchExpressions":[{"key":"","operator":"Foo"}]}}}`,
	"apiVersion: convoy.kumodo.io/v1alpha1\nkind: Release\nmetadata: {name: y, namespace: n}\nspec:\n  chart: {repository: 'https://c', name: c}\n",
}

// Any body the API server decodes as a convoy object either passes validation or is
// rejected with errors that each name a field path (the server answers 422 with
// them as causes); a body it cannot decode is a decode error (400). Nothing panics,
// and an accepted object encodes and decodes to an object that is accepted again.
func FuzzDecodeAndValidate(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	gv := convoyv1alpha1.SchemeGroupVersion
	decoder := apiserver.Codecs.UniversalDecoder(gv)
	encoder := apiserver.Codecs.LegacyCodec(gv)
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := runtime.Decode(decoder, data)
		if err != nil {
			return // 400 Bad Request
		}
		errs := validate(obj)
		checkFieldErrors(t, errs)
		if len(errs) > 0 {
			return
		}
		encoded, err := runtime.Encode(encoder, obj)
		if err != nil {
			t.Fatalf("an accepted %T does not encode: %v", obj, err)
		}
		again, err := runtime.Decode(decoder, encoded)
		if err != nil {
			t.Fatalf("an accepted %T does not decode again: %v\n%s", obj, err, encoded)
		}
		if errs := validate(again); len(errs) > 0 {
			t.Fatalf("an accepted %T is rejected after a round trip: %v\n%s", obj, errs, encoded)
		}
		if !equality.Semantic.DeepEqual(obj, again) {
			t.Fatalf("an accepted %T changes in a round trip:\n%s", obj, encoded)
		}
	})
}

// validate is what the create strategies validate (and the update ones, against the
// object itself as stored).
func validate(obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *convoyv1alpha1.Release:
		return append(validation.Release(o, validation.ReleaseOptions{}), validation.ReleaseUpdate(o, o.DeepCopy(), validation.ReleaseOptions{})...)
	case *convoyv1alpha1.Cluster:
		return append(validation.Cluster(o), validation.ClusterUpdate(o, o.DeepCopy())...)
	case *convoyv1alpha1.ReleaseInventory:
		return append(validation.ReleaseInventory(o), validation.ReleaseInventoryUpdate(o, o.DeepCopy())...)
	case *convoyv1alpha1.Render:
		return append(validation.Render(o), validation.RenderUpdate(o, o.DeepCopy())...)
	case *convoyv1alpha1.ReleaseSet:
		return append(validation.ReleaseSet(o, validation.ReleaseOptions{}), validation.ReleaseSetUpdate(o, o.DeepCopy(), validation.ReleaseOptions{})...)
	case *convoyv1alpha1.Alert:
		return append(validation.Alert(o), validation.AlertUpdate(o, o.DeepCopy())...)
	case *convoyv1alpha1.Receiver:
		return append(validation.Receiver(o), validation.ReceiverUpdate(o, o.DeepCopy())...)
	}
	return nil
}

// checkFieldErrors fails t unless every error names a field path, a type and says
// something.
func checkFieldErrors(t *testing.T, errs field.ErrorList) {
	t.Helper()
	for _, e := range errs {
		if e.Field == "" || e.Type == "" || e.Error() == "" {
			t.Fatalf("a validation error without a field path or type: %#v", e)
		}
	}
}

// The force parameter of POST releases/<name>/sync decodes to a bool or is an error
// (400); nothing panics, and every spelling strconv.ParseBool accepts is accepted.
func FuzzSyncOptions(f *testing.F) {
	for _, s := range []string{"", "true", "false", "1", "0", "T", "yes", "true,false", "%00"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, force string, twice bool) {
		values := url.Values{"force": {force}}
		if twice {
			values.Add("force", force)
		}
		var opts convoyv1alpha1.SyncOptions
		err := apiserver.ParameterCodec.DecodeParameters(values, convoyv1alpha1.SchemeGroupVersion, &opts)
		want, perr := strconv.ParseBool(force)
		switch {
		case force == "":
			// ?force alone means force, as kubectl's boolean flags.
			if err != nil || !opts.Force {
				t.Fatalf("force=%q: %v, forced %v; want forced", force, err, opts.Force)
			}
		case perr != nil && err == nil:
			t.Fatalf("force=%q is accepted as %v; want an error", force, opts.Force)
		case perr == nil && err != nil:
			t.Fatalf("force=%q is rejected: %v", force, err)
		case perr == nil && opts.Force != want:
			t.Fatalf("force=%q decodes to %v, want %v", force, opts.Force, want)
		}
	})
}
