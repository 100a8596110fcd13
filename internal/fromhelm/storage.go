package fromhelm

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Storage reads and marks the records of Helm releases in one namespace, in Helm's
// Secrets storage (Secrets sh.helm.release.v1.<name>.v<revision>), through Helm's
// own driver.
type Storage struct {
	namespace string
	secrets   *driver.Secrets
}

// NewStorage returns the Storage of namespace ns through secrets (the Secrets of ns).
func NewStorage(ns string, secrets corev1client.SecretInterface) *Storage {
	return &Storage{namespace: ns, secrets: driver.NewSecrets(secrets)}
}

// History reads every revision of the Helm release name; an error that says what to
// check when there is none.
func (s *Storage) History(_ context.Context, name string) ([]*helmrelease.Release, error) {
	found, err := s.secrets.Query(map[string]string{"name": name, "owner": "helm"})
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(found) == 0) {
		return nil, fmt.Errorf("no Helm release %q in namespace %s (no Secret sh.helm.release.v1.%s.v<revision>): check the name and namespace with helm list -n %s; only Helm's default Secrets storage is read",
			name, s.namespace, name, s.namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the records of Helm release %s/%s: %w", s.namespace, name, err)
	}
	out := make([]*helmrelease.Release, 0, len(found))
	for _, f := range found {
		h, ok := f.(*helmrelease.Release)
		if !ok {
			return nil, fmt.Errorf("reading the records of Helm release %s/%s: a record of type %T", s.namespace, name, f)
		}
		out = append(out, h)
	}
	return out, nil
}

// Latest is the record of the latest revision of the Helm release name.
func (s *Storage) Latest(ctx context.Context, name string) (*helmrelease.Release, error) {
	history, err := s.History(ctx, name)
	if err != nil {
		return nil, err
	}
	latest := history[0]
	for _, h := range history {
		if h.Version > latest.Version {
			latest = h
		}
	}
	return latest, nil
}

// Supersede marks the record h superseded, labelled LabelTakenOverBy by (TakenOverBy),
// so that helm list no longer shows the release deployed while helm history keeps
// every revision. It deletes nothing.
func (s *Storage) Supersede(_ context.Context, h *helmrelease.Release, by string) error {
	ref := RefOf(h)
	if h.Labels == nil {
		h.Labels = map[string]string{}
	}
	h.Labels[v1.LabelTakenOverBy] = by
	h.SetStatus(common.StatusSuperseded, "Superseded: taken over by the convoy Release "+by)
	if err := s.secrets.Update(ref.Key(), h); err != nil {
		return fmt.Errorf("marking Helm release %s superseded (Secret %s/%s): %w", ref, s.namespace, ref.Key(), err)
	}
	return nil
}
