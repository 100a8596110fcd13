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
		"forbidden promote": {
			err: &RequestError{Verb: "create", Resource: "releasesets", Subresource: "promote", Namespace: "team-a", Name: "podinfo",
				Err: apierrors.NewForbidden(schema.GroupResource{Group: v1.GroupName, Resource: "releasesets/promote"}, "podinfo", errors.New(`User "dev" cannot create resource`))},
			want: []string{"apiGroups: [convoy.kumodo.io], resources: [releasesets/promote], verbs: [create]", "its own permission", `User "dev"`},
		},
		"promote conflict": {
			err: &RequestError{Verb: "create", Resource: "releasesets", Subresource: "promote", Namespace: "team-a", Name: "podinfo",
				Err: apierrors.NewConflict(schema.GroupResource{Group: v1.GroupName, Resource: "releasesets"}, "podinfo", errors.New("no stage waits for approval"))},
			want: []string{`cannot promote ReleaseSet "podinfo" in namespace "team-a"`, "no stage waits for approval", "WaitingForApproval",
				"kubectl convoy releaseset status podinfo", "Halted", "spec.template"},
		},
		"releaseset not found": {
			err:  &RequestError{Verb: "get", Resource: "releasesets", Namespace: "team-a", Name: "kafka", Err: apierrors.NewNotFound(schema.GroupResource{Group: v1.GroupName, Resource: "releasesets"}, "kafka")},
			want: []string{`ReleaseSet "kafka" not found in namespace "team-a"`, "kubectl convoy releaseset list"},
		},
		"an older convoy without the resource": {
			err:  &RequestError{Verb: "list", Resource: "releasesets", Namespace: "team-a", Err: apierrors.NewNotFound(schema.GroupResource{}, ""), ResourceMissing: true},
			want: []string{"does not serve releasesets.convoy.kumodo.io (ReleaseSet)", "upgrade convoy"},
		},
		"alert not found": {
			err:  &RequestError{Verb: "get", Resource: "alerts", Namespace: "shop", Name: "pager", Err: apierrors.NewNotFound(schema.GroupResource{Group: v1.GroupName, Resource: "alerts"}, "pager")},
			want: []string{`Alert "pager" not found in namespace "shop"`, "kubectl convoy alert list"},
		},
		"receiver not found": {
			err:  &RequestError{Verb: "get", Resource: "receivers", Namespace: "shop", Name: "gitlab", Err: apierrors.NewNotFound(schema.GroupResource{Group: v1.GroupName, Resource: "receivers"}, "gitlab")},
			want: []string{`Receiver "gitlab" not found in namespace "shop"`, "kubectl convoy receiver list"},
		},
		"an older convoy without Alerts": {
			err:  &RequestError{Verb: "list", Resource: "alerts", Namespace: "shop", Err: apierrors.NewNotFound(schema.GroupResource{}, ""), ResourceMissing: true},
			want: []string{"does not serve alerts.convoy.kumodo.io (Alert)", "older than that kind", "upgrade convoy"},
		},
		"an older convoy without Receivers": {
			err:  &RequestError{Verb: "get", Resource: "receivers", Namespace: "shop", Name: "github", Err: apierrors.NewNotFound(schema.GroupResource{}, ""), ResourceMissing: true},
			want: []string{"does not serve receivers.convoy.kumodo.io (Receiver)", "upgrade convoy"},
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
