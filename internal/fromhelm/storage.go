package fromhelm

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v4/pkg/release/common"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Driver is a storage driver of Helm's that Storage reads: where Helm keeps the
// records of its releases.
type Driver string

const (
	// DriverSecret is Helm's default: Secrets sh.helm.release.v1.<name>.v<revision>.
	DriverSecret Driver = "secret"
	// DriverConfigMap is HELM_DRIVER=configmap: ConfigMaps of the same names and labels.
	DriverConfigMap Driver = "configmap"
)

// ParseDriver is the Driver that name selects, as Helm reads HELM_DRIVER: "secret",
// "secrets" or "" (Helm's default) for DriverSecret, "configmap" or "configmaps" for
// DriverConfigMap. Helm's other drivers (memory, sql) are not read: an error.
func ParseDriver(name string) (Driver, error) {
	switch name {
	case "secret", "secrets", "":
		return DriverSecret, nil
	case "configmap", "configmaps":
		return DriverConfigMap, nil
	default:
		return "", fmt.Errorf("storage driver %q: only Helm's secret and configmap drivers are read", name)
	}
}

// kind is the kind of object the driver keeps a record in.
func (d Driver) kind() string {
	if d == DriverConfigMap {
		return "ConfigMap"
	}
	return "Secret"
}

// Storage reads and marks the records of Helm releases in one namespace, in Helm's
// Secrets storage (Secrets sh.helm.release.v1.<name>.v<revision>, Helm's default) or
// its ConfigMaps storage (ConfigMaps of the same names), through Helm's own driver.
type Storage struct {
	namespace string
	driver    Driver
	records   driver.Driver
}

// NewStorage returns the Storage of namespace ns in Helm's storage d, through kube.
func NewStorage(ns string, d Driver, kube kubernetes.Interface) *Storage {
	s := &Storage{namespace: ns, driver: d}
	if d == DriverConfigMap {
		s.records = driver.NewConfigMaps(kube.CoreV1().ConfigMaps(ns))
	} else {
		s.driver, s.records = DriverSecret, driver.NewSecrets(kube.CoreV1().Secrets(ns))
	}
	return s
}

// History reads every revision of the Helm release name; an error that says what to
// check when there is none.
func (s *Storage) History(_ context.Context, name string) ([]*helmrelease.Release, error) {
	found, err := s.records.Query(map[string]string{"name": name, "owner": "helm"})
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(found) == 0) {
		return nil, fmt.Errorf("no Helm release %q in namespace %s (no %s sh.helm.release.v1.%s.v<revision>): check the name and namespace with helm list -n %s; %s",
			name, s.namespace, s.driver.kind(), name, s.namespace, s.otherDriver())
	}
	if err != nil {
		return nil, fmt.Errorf("reading the records of Helm release %s/%s (%ss): %w", s.namespace, name, s.driver.kind(), err)
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

// otherDriver says which storage was read and how to read the other.
func (s *Storage) otherDriver() string {
	if s.driver == DriverConfigMap {
		return "Helm's configmap storage was read: if helm stores its records in Secrets (its default), give --helm-driver secret"
	}
	return "Helm's secret storage was read: if helm stores its records in ConfigMaps (HELM_DRIVER=configmap), give --helm-driver configmap"
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
	if err := s.records.Update(ref.Key(), h); err != nil {
		return fmt.Errorf("marking Helm release %s superseded (%s %s/%s): %w", ref, s.driver.kind(), s.namespace, ref.Key(), err)
	}
	return nil
}
