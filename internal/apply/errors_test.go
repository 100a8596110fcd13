package apply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

func TestIsAuthorizationFailure(t *testing.T) {
	gr := schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}
	rbac := apierrors.NewForbidden(gr, "admin", errors.New(`User "system:serviceaccount:team-a:deployer" cannot patch resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`))
	webhook := apierrors.NewForbidden(gr, "admin", errors.New(`admission webhook "policy.example.com" denied the request: no`))
	ref := v1alpha1.ObjectReference{Kind: "ClusterRoleBinding", Name: "admin"}
	cases := map[string]struct {
		err  error
		want bool
	}{
		"nil":                {nil, false},
		"RBAC forbidden":     {rbac, true},
		"wrapped":            {fmt.Errorf("apply ClusterRoleBinding admin: %w", rbac), true},
		"one of an apply's":  {&Error{reason: v1alpha1.ReasonDeployFailed, Objects: []v1alpha1.ObjectReference{ref, ref}, Errs: []error{errors.New("timeout"), rbac}}, true},
		"admission webhook":  {webhook, false},
		"invalid":            {apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil), false},
		"plain error":        {errors.New("forbidden"), false},
		"unauthorized (401)": {apierrors.NewUnauthorized("expired token"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsAuthorizationFailure(tc.err); got != tc.want {
				t.Errorf("IsAuthorizationFailure(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestIsRejection(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	cases := map[string]struct {
		err  error
		want bool
	}{
		"invalid object":           {apierrors.NewInvalid(gk, "web", field.ErrorList{field.Required(field.NewPath("spec", "selector"), "")}), true},
		"immutable field":          {apierrors.NewInvalid(gk, "web", field.ErrorList{field.Invalid(field.NewPath("spec", "selector"), nil, "field is immutable")}), true},
		"bad request":              {apierrors.NewBadRequest("strict decoding error: unknown field"), true},
		"unknown kind":             {&meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}, SearchedVersions: []string{"v1"}}, true},
		"missing namespace":        {apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "nope"), true},
		"admission webhook denial": {apierrors.NewForbidden(gr, "web", errors.New(`admission webhook "policy.example.com" denied the request: no latest tags`)), true},
		"admission policy denial":  {apierrors.NewForbidden(gr, "web", errors.New(`ValidatingAdmissionPolicy 'p' with binding 'b' denied request: replicas too high`)), true},
		"too large":                {apierrors.NewRequestEntityTooLargeError("limit is 3145728"), true},
		"RBAC forbidden":           {apierrors.NewForbidden(gr, "web", errors.New(`User "convoy" cannot patch resource "deployments" in API group "apps" in the namespace "app"`)), false},
		"conflict":                 {apierrors.NewConflict(gr, "web", errors.New("the object has been modified")), false},
		"server timeout":           {apierrors.NewServerTimeout(gr, "patch", 1), false},
		"internal error":           {apierrors.NewInternalError(errors.New("etcdserver: leader changed")), false},
		"service unavailable":      {apierrors.NewServiceUnavailable("try later"), false},
		"throttled":                {apierrors.NewTooManyRequests("slow down", 1), false},
		"unauthorized":             {apierrors.NewUnauthorized("expired token"), false},
		"deadline":                 {fmt.Errorf("patch: %w", context.DeadlineExceeded), false},
		"connection refused":       {&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false},
		"wrapped invalid":          {fmt.Errorf("dry run of x: %w", apierrors.NewInvalid(gk, "web", nil)), true},
		"nil":                      {nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsRejection(tc.err); got != tc.want {
				t.Errorf("IsRejection(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// *Error is read by reasons.Of, as the controller reads it.
var _ reasons.Carrier = (*Error)(nil)

func TestErrorReasonAndMessage(t *testing.T) {
	ref := deployWeb.ObjectReference
	err := fmt.Errorf("reconcile: %w", newError(v1alpha1.ReasonUnappliable, []objectError{
		{ref: ref, err: fmt.Errorf("dry run of %s rejected: %w", Describe(ref), apierrors.NewBadRequest("bad"))},
		{ref: configApp.ObjectReference, err: errors.New("dry run of ConfigMap app/config failed: timeout")},
	}))
	if got := reasons.Of(err, ""); got != v1alpha1.ReasonUnappliable {
		t.Errorf("Reason = %q, want %q", got, v1alpha1.ReasonUnappliable)
	}
	want := "reconcile: dry run of Deployment.apps app/web rejected: bad; dry run of ConfigMap app/config failed: timeout"
	if got := err.Error(); got != want {
		t.Errorf("message:\n got %q\nwant %q", got, want)
	}
	if !apierrors.IsBadRequest(err) {
		t.Error("the server's error is not reachable with errors.As")
	}
	if reasons.Of(errors.New("other"), "") != "" || newError(v1alpha1.ReasonDeployFailed, nil) != nil {
		t.Error("an error without *Error has a reason, or no failures made an error")
	}
}

// An apply's failure is Unappliable when the server refuses the object as rendered
// (every retry fails the same way), DeployFailed when a retry may succeed.
func TestApplyFailureReason(t *testing.T) {
	gr := schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}
	gk := schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}
	labelValue := field.Invalid(field.NewPath("metadata", "labels"), "web:create-cert",
		"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'")
	invalid := apierrors.NewInvalid(gk, "web:create-cert", field.ErrorList{labelValue})
	conversion := apierrors.NewInternalError(errors.New(typedPatchFailure + " (app/web; /v1, Kind=ConfigMap): .data.n: expected string, got &value.valueUnstructured{Value:3}"))
	ref := v1alpha1.ObjectReference{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Namespace: "app", Name: "web:create-cert"}
	cases := map[string]struct {
		err        error
		wantReason string
		wantMsg    []string
	}{
		"422 Invalid: a label value": {invalid, v1alpha1.ReasonUnappliable, []string{
			"apply of Role.rbac.authorization.k8s.io app/web:create-cert failed: ",
			`metadata.labels: Invalid value: "web:create-cert"`, "no retry of this render can succeed",
		}},
		"422 Invalid, wrapped": {fmt.Errorf("patch: %w", invalid), v1alpha1.ReasonUnappliable, []string{"is invalid"}},
		"400 BadRequest":       {apierrors.NewBadRequest("strict decoding error: unknown field \"spec.x\""), v1alpha1.ReasonUnappliable, []string{"unknown field", "change it in the chart"}},
		"500 conversion":       {conversion, v1alpha1.ReasonUnappliable, []string{".data.n: expected string, got 3", "quote the value"}},
		"404 missing namespace": {apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "app"), v1alpha1.ReasonDeployFailed,
			[]string{`namespaces "app" not found`}},
		"403 RBAC":              {apierrors.NewForbidden(gr, "web", errors.New("cannot patch")), v1alpha1.ReasonDeployFailed, []string{"cannot patch"}},
		"403 admission webhook": {apierrors.NewForbidden(gr, "web", errors.New(`admission webhook "p" denied the request: no`)), v1alpha1.ReasonDeployFailed, nil},
		"409 conflict":          {apierrors.NewConflict(gr, "web", errors.New("modified")), v1alpha1.ReasonDeployFailed, nil},
		"500 internal":          {apierrors.NewInternalError(errors.New("etcdserver: leader changed")), v1alpha1.ReasonDeployFailed, nil},
		"503":                   {apierrors.NewServiceUnavailable("try later"), v1alpha1.ReasonDeployFailed, nil},
		"429":                   {apierrors.NewTooManyRequests("slow down", 1), v1alpha1.ReasonDeployFailed, nil},
		"timeout":               {apierrors.NewServerTimeout(gr, "patch", 1), v1alpha1.ReasonDeployFailed, nil},
		"deadline":              {fmt.Errorf("patch: %w", context.DeadlineExceeded), v1alpha1.ReasonDeployFailed, nil},
		"connection refused":    {&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, v1alpha1.ReasonDeployFailed, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := ApplyFailure(ref, tc.err)
			if got := reasons.Of(err, ""); got != tc.wantReason {
				t.Errorf("Reason = %q, want %q (error %v)", got, tc.wantReason, err)
			}
			if got := IsRefused(tc.err); got != (tc.wantReason == v1alpha1.ReasonUnappliable) {
				t.Errorf("IsRefused = %v", got)
			}
			for _, want := range append(tc.wantMsg, Describe(ref)) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not contain %q", err, want)
				}
			}
			if !errors.Is(err, tc.err) && !errors.As(err, new(apierrors.APIStatus)) {
				t.Error("the server's error is not reachable from the failure")
			}
			ae, _ := errors.AsType[*Error](err)
			if ae == nil || len(ae.Objects) != 1 || ae.Objects[0] != ref {
				t.Errorf("failed objects %v, want [%v]", ae, ref)
			}
		})
	}
}
