package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestExitCode(t *testing.T) {
	tests := map[string]struct {
		err  error
		want int
	}{
		"ok":              {nil, ExitOK},
		"usage":           {usageErrorf("bad"), ExitUsage},
		"wrapped usage":   {fmt.Errorf("x: %w", usageErrorf("bad")), ExitUsage},
		"request failure": {&RequestError{Err: errors.New("boom")}, ExitFailure},
		"wait failure":    {fmt.Errorf("r: %w", errWaitFailed), ExitFailure},
		"anything else":   {errors.New("boom"), ExitFailure},
	}
	for name, tc := range tests {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("%s: ExitCode(%v) = %d, want %d", name, tc.err, got, tc.want)
		}
	}
}

func TestRequestErrorMessages(t *testing.T) {
	gr := schema.GroupResource{Group: v1.GroupName, Resource: "releases"}
	tests := map[string]struct {
		err  *RequestError
		want []string
	}{
		"not found with suggestions": {
			err:  &RequestError{Verb: "get", Resource: "releases", Namespace: "team-a", Name: "podinf", Err: apierrors.NewNotFound(gr, "podinf"), Suggestions: []string{"podinfo", "podinfo-canary"}},
			want: []string{`Release "podinf" not found in namespace "team-a"`, `did you mean "podinfo" or "podinfo-canary"?`},
		},
		"not found without suggestions": {
			err:  &RequestError{Verb: "get", Resource: "releases", Namespace: "team-a", Name: "kafka", Err: apierrors.NewNotFound(gr, "kafka")},
			want: []string{`Release "kafka" not found`, "kubectl convoy release list"},
		},
		"forbidden sync": {
			err: &RequestError{Verb: "create", Resource: "releases", Subresource: "sync", Namespace: "team-a", Name: "podinfo",
				Err: apierrors.NewForbidden(schema.GroupResource{Group: v1.GroupName, Resource: "releases/sync"}, "podinfo", errors.New(`User "dev" cannot create resource`))},
			want: []string{"apiGroups: [convoy.kumodo.io], resources: [releases/sync], verbs: [create]", "convoy-sync", `User "dev"`},
		},
		"forbidden pin": {
			err: &RequestError{Verb: "patch", Resource: "releases", Subresource: "pin", Namespace: "team-a", Name: "podinfo",
				Err: apierrors.NewForbidden(gr, "podinfo", errors.New("no"))},
			want: []string{"resources: [releases/pin], verbs: [patch]"},
		},
		"api missing": {
			err:  &RequestError{Verb: "get", Resource: "releases", Namespace: "team-a", Name: "podinfo", Err: apierrors.NewNotFound(schema.GroupResource{}, ""), APIMissing: true},
			want: []string{"convoy is not installed", "kubectl apply -k deploy/ ", "kubectl get apiservice v1alpha1.convoy.kumodo.io"},
		},
		"unavailable": {
			err:  &RequestError{Verb: "get", Resource: "releases", Namespace: "team-a", Name: "podinfo", Err: apierrors.NewServiceUnavailable("down")},
			want: []string{"convoy API server is not available"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			msg := tc.err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if ExitCode(tc.err) != ExitFailure {
				t.Errorf("exit code %d, want 1", ExitCode(tc.err))
			}
		})
	}
}
