package controller

import (
	"context"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/targets"
)

// forbiddenReason is ReasonForbidden when err is a refusal by the authorization of
// target while its client acts as a Release's ServiceAccount (the message of err,
// from the API server, names the object and the missing permission), else reason.
// Acting as convoy itself, a refusal means the installation's RBAC is short, which
// an operator fixes: it keeps its reason (transient for a failed apply).
func forbiddenReason(target *targets.Target, reason string, err error) string {
	if target == nil || target.Identity.IsZero() || !apply.IsAuthorizationFailure(err) {
		return reason
	}
	return v1.ReasonForbidden
}

// hostValues reads valuesFrom sources on the host as host's identity: the Release's
// ServiceAccount under impersonation, else convoy itself through reader (uncached).
func (r *Reconciler) hostValues(host *targets.Target) render.ValuesReaderFunc {
	if host == nil || host.Identity.IsZero() {
		return r.readValuesSource
	}
	return func(ctx context.Context, namespace string, kind v1.ValuesSourceKind, name string) (map[string][]byte, error) {
		return targets.ReadValuesSource(ctx, host.Client, namespace, kind, name)
	}
}
