package apply

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/testenv"
)

// serverError is an error as client-go returns kube-apiserver's answer: the
// Status the server sent, as a *StatusError.
func serverError(code int32, reason metav1.StatusReason, message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: code, Reason: reason, Message: message,
	}}
}

// Errors captured from kube-apiserver v1.37.2 answering a server-side apply
// (dry run or not) of objects it cannot convert to the schema of their kind:
// code 500, reason "" (Unknown), no details. Only the namespace is changed.
var (
	// A ConfigMap with data: {replicas: 3}.
	unquotedNumber = serverError(500, metav1.StatusReasonUnknown,
		"failed to create typed patch object (app/settings; /v1, Kind=ConfigMap): .data.replicas: expected string, got &value.valueUnstructured{Value:3}")
	// A ConfigMap with data: {replicas: 3, debug: true, f: 1.5}; the server lists
	// the fields in another order at each request.
	threeFields = serverError(500, metav1.StatusReasonUnknown,
		"failed to create typed patch object (app/settings; /v1, Kind=ConfigMap): errors:\n  .data.replicas: expected string, got &value.valueUnstructured{Value:3}\n  .data.debug: expected string, got &value.valueUnstructured{Value:true}\n  .data.f: expected string, got &value.valueUnstructured{Value:1.5}")
	// A ConfigMap with data: {m: {a: b}}.
	nestedMap = serverError(500, metav1.StatusReasonUnknown,
		`failed to create typed patch object (app/nested; /v1, Kind=ConfigMap): .data.m: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"a":"b"}}`)
	// A Deployment with replicas: "3".
	quotedNumber = serverError(500, metav1.StatusReasonUnknown,
		"failed to create typed patch object (app/web; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string")
	// A Deployment whose container lists the environment variable A twice.
	duplicateEntry = serverError(500, metav1.StatusReasonUnknown,
		`failed to create typed patch object (app/dup; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="web"].env: duplicate entries for key [name="A"]`)
	// Any other internal error of the server.
	otherInternal = serverError(500, metav1.StatusReasonInternalError, "Internal error occurred: etcdserver: leader changed")
)

func TestIsConversionFailure(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"unquoted number":           {unquotedNumber, true},
		"three fields":              {threeFields, true},
		"nested map":                {nestedMap, true},
		"quoted number":             {quotedNumber, true},
		"duplicate list entry":      {duplicateEntry, true},
		"wrapped":                   {fmt.Errorf("dry run of x: %w", unquotedNumber), true},
		"another internal error":    {otherInternal, false},
		"the message, not a status": {errors.New(unquotedNumber.Error()), false},
		"nil":                       {nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsConversionFailure(tc.err); got != tc.want {
				t.Errorf("IsConversionFailure(%v) = %v, want %v", tc.err, got, tc.want)
			}
			if got := IsRejection(tc.err); got != tc.want {
				t.Errorf("IsRejection(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestExplainConversionFailure(t *testing.T) {
	cases := map[string]struct {
		err  error
		want string
	}{
		"unquoted number": {unquotedNumber, "the API server cannot convert it to the schema of its kind: " +
			".data.replicas: expected string, got 3; quote the value in the chart's template or values " +
			"(the field takes a string, not a number, boolean, list or map; in a template, use | quote)"},
		"three fields, sorted": {threeFields, "the API server cannot convert it to the schema of its kind: " +
			".data.debug: expected string, got true; .data.f: expected string, got 1.5; .data.replicas: expected string, got 3; " +
			"quote the value in the chart's template or values " +
			"(the field takes a string, not a number, boolean, list or map; in a template, use | quote)"},
		"nested map": {nestedMap, "the API server cannot convert it to the schema of its kind: " +
			`.data.m: expected string, got map[string]interface {}{"a":"b"}; quote the value in the chart's template or values ` +
			"(the field takes a string, not a number, boolean, list or map; in a template, use | quote)"},
		"quoted number": {quotedNumber, "the API server cannot convert it to the schema of its kind: " +
			".spec.replicas: expected numeric (int or float), got string; remove the quotes around the value in the chart's template or values " +
			"(the field takes a number or a boolean)"},
		"duplicate list entry": {duplicateEntry, "the API server cannot convert it to the schema of its kind: " +
			`.spec.template.spec.containers[name="web"].env: duplicate entries for key [name="A"]; ` +
			"remove the duplicate entry from the list in the chart's template or values"},
		"another error": {otherInternal, otherInternal.Error()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := explain(tc.err)
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tc.err) {
				t.Error("the server's error is not wrapped")
			}
		})
	}
}

// An object that the server cannot convert to the schema of its kind is
// Unappliable, whether the dry run or the apply finds out, with a message that
// names the object and the field and says what to do.
func TestConversionFailureIsUnappliable(t *testing.T) {
	e := integration(t)
	unquoted := func(name string) *unstructured.Unstructured {
		u := configMap(e.ns, name, nil)
		u.Object["data"] = map[string]any{"replicas": int64(3), "name": "web"}
		return u
	}
	group := testenv.DNSName(t.Name()) + ".example.com"
	definition := crd(group, "Widget")
	definition.Object["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"] = map[string]any{
		"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer"}}},
		}},
	}
	widget := obj(group+"/v1", "Widget", e.ns, "w")
	widget.Object["spec"] = map[string]any{"size": "3"}
	existing := configMap(e.ns, "existing", map[string]string{"replicas": "3"})
	e.create(t, existing)

	cases := map[string]struct {
		objects   []Object
		applied   []v1alpha1.InventoryObject
		force     bool // no dry run
		wantField string
	}{
		"dry run of a new object":          {objects: []Object{{Object: unquoted("new")}}, wantField: ".data.replicas: expected string, got 3"},
		"dry run of an object it applied":  {objects: []Object{{Object: unquoted("existing")}}, applied: Entries([]Object{{Object: existing}}), wantField: ".data.replicas: expected string, got 3"},
		"apply without a dry run (forced)": {objects: []Object{{Object: unquoted("forced")}}, force: true, wantField: ".data.replicas: expected string, got 3"},
		"apply of a custom resource of a CRD of the render": {
			objects:   []Object{{Object: definition}, {Object: widget}},
			wantField: ".spec.size: expected numeric (int or float), got string",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			bad := tc.objects[len(tc.objects)-1].Object
			plan, err := NewPlan(tc.objects)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.force {
				plan, err = e.applier.DryRun(e.ctx, tc.objects, nil, tc.applied...)
			}
			if err == nil {
				for _, w := range plan.Waves() {
					if _, err = e.applier.ApplyWave(e.ctx, plan, w); err != nil {
						break
					}
				}
			}
			if got := reasons.Of(err, ""); got != v1alpha1.ReasonUnappliable {
				t.Fatalf("Reason = %q (error %v), want %q", got, err, v1alpha1.ReasonUnappliable)
			}
			for _, want := range []string{describeObject(bad) + " ", tc.wantField, "the API server cannot convert it"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not contain %q", err, want)
				}
			}
			if !IsConversionFailure(err) {
				t.Error("the server's error is not reachable with errors.As")
			}
			ae, _ := errors.AsType[*Error](err)
			if diff := cmp.Diff([]v1alpha1.ObjectReference{Object{Object: bad}.Entry().ObjectReference}, ae.Objects); diff != "" {
				t.Errorf("failed objects (-want +got):\n%s", diff)
			}
		})
	}
	live, _ := e.get(t, existing)
	if got, _, _ := unstructured.NestedString(live.Object, "data", "replicas"); got != "3" {
		t.Errorf("the existing ConfigMap changed: data.replicas = %q", got)
	}
}
