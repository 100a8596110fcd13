package apply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kumodo.io/convoy/api/v1alpha1"
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
		"one of an apply's":  {&Error{Reason: v1alpha1.ReasonDeployFailed, Objects: []v1alpha1.ObjectReference{ref, ref}, Errs: []error{errors.New("timeout"), rbac}}, true},
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

func TestErrorReasonAndMessage(t *testing.T) {
	ref := deployWeb.ObjectReference
	err := fmt.Errorf("reconcile: %w", newError(v1alpha1.ReasonUnappliable, []objectError{
		{ref: ref, err: fmt.Errorf("dry run of %s rejected: %w", Describe(ref), apierrors.NewBadRequest("bad"))},
		{ref: configApp.ObjectReference, err: errors.New("dry run of ConfigMap app/config failed: timeout")},
	}))
	if got := Reason(err); got != v1alpha1.ReasonUnappliable {
		t.Errorf("Reason = %q, want %q", got, v1alpha1.ReasonUnappliable)
	}
	want := "reconcile: dry run of Deployment.apps app/web rejected: bad; dry run of ConfigMap app/config failed: timeout"
	if got := err.Error(); got != want {
		t.Errorf("message:\n got %q\nwant %q", got, want)
	}
	if !apierrors.IsBadRequest(err) {
		t.Error("the server's error is not reachable with errors.As")
	}
	if Reason(errors.New("other")) != "" || newError(v1alpha1.ReasonDeployFailed, nil) != nil {
		t.Error("an error without *Error has a reason, or no failures made an error")
	}
}
