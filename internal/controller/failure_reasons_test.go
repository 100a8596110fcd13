package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/targets"
)

// The reason of a step's failure is the one its error carries (reasons.Of), else
// the step's fallback.
func TestStepFailureReasons(t *testing.T) {
	ref := v1.ObjectReference{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "app", Name: "web"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
		field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be >= 0")})
	for name, tc := range map[string]struct {
		err      error
		fallback string
		want     string
	}{
		"refused apply":           {err: apply.ApplyFailure(ref, invalid), fallback: v1.ReasonDeployFailed, want: v1.ReasonUnappliable},
		"failed apply":            {err: apply.ApplyFailure(ref, errors.New("timeout")), fallback: v1.ReasonPruneFailed, want: v1.ReasonDeployFailed},
		"wrapped hook failure":    {err: &apply.HookError{Err: apply.ApplyFailure(ref, invalid)}, fallback: v1.ReasonDeployFailed, want: v1.ReasonUnappliable},
		"no reason: the fallback": {err: fmt.Errorf("read: %w", errors.New("timeout")), fallback: v1.ReasonPruneFailed, want: v1.ReasonPruneFailed},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := failed(context.Background(), tc.err, tc.fallback, "The apply")
			if err != nil {
				t.Fatalf("failed: %v", err)
			}
			if diff := cmp.Diff(tc.want, res.Reason); diff != "" {
				t.Errorf("reason (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotReadyReasons(t *testing.T) {
	for name, tc := range map[string]struct {
		err         error
		wantReason  string
		wantMessage string
	}{
		"unreachable": {
			err:        &targets.NotReadyError{Kind: targets.Unreachable, Message: "cannot reach edge", Err: errors.New("refused")},
			wantReason: v1.ReasonClusterNotReady, wantMessage: "Cannot reach edge: refused.",
		},
		"no ServiceAccount": {
			err:        fmt.Errorf("resolve: %w", &targets.NotReadyError{Kind: targets.ServiceAccountMissing, Message: "no ServiceAccount deployer"}),
			wantReason: v1.ReasonServiceAccountNotFound, wantMessage: "No ServiceAccount deployer.",
		},
		"not a NotReadyError": {
			err:        errors.New("host down"),
			wantReason: v1.ReasonClusterNotReady, wantMessage: "Host down.",
		},
	} {
		t.Run(name, func(t *testing.T) {
			res := notReady(tc.err)
			if diff := cmp.Diff([2]string{tc.wantReason, tc.wantMessage}, [2]string{res.Reason, res.Message}); diff != "" {
				t.Errorf("reason, message (-want +got):\n%s", diff)
			}
		})
	}
}
