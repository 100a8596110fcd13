package apiserver

import (
	"context"
	"fmt"
	"net"

	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/registry/alert"
	"kumodo.io/convoy/internal/apiserver/registry/cluster"
	"kumodo.io/convoy/internal/apiserver/registry/receiver"
	"kumodo.io/convoy/internal/apiserver/registry/release"
	"kumodo.io/convoy/internal/apiserver/registry/releaseinventory"
	"kumodo.io/convoy/internal/apiserver/registry/releaseset"
	"kumodo.io/convoy/internal/apiserver/registry/render"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// Server is a configured convoy apiserver, ready to run.
type Server struct {
	generic  *genericapiserver.GenericAPIServer
	caBundle []byte
	port     int
}

// NewServer validates the options and builds the server. It does not listen yet
// unless the options carry a listener.
func (o *Options) NewServer() (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := o.serving(); err != nil {
		return nil, err
	}
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	return o.newServer(cfg)
}

// newServer builds the server from its configuration.
func (o *Options) newServer(cfg *genericapiserver.RecommendedConfig) (*Server, error) {
	if err := withEtcdQuorum(cfg, o.RecommendedOptions.Etcd); err != nil { // 503 while etcd has no quorum (quorum.go)
		return nil, err
	}
	generic, err := cfg.Complete().New("convoy-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("creating the server: %w", err)
	}
	if err := installAPIGroup(generic, cfg, o); err != nil {
		return nil, err
	}
	s := &Server{generic: generic}
	if cert := o.RecommendedOptions.SecureServing.ServerCert.GeneratedCert; cert != nil {
		s.caBundle, _ = cert.CurrentCertKeyContent()
	}
	if ln := o.RecommendedOptions.SecureServing.Listener; ln != nil {
		if addr, ok := ln.Addr().(*net.TCPAddr); ok {
			s.port = addr.Port
		}
	}
	if s.port == 0 {
		s.port = o.RecommendedOptions.SecureServing.BindPort
	}
	return s, nil
}

func installAPIGroup(generic *genericapiserver.GenericAPIServer, cfg *genericapiserver.RecommendedConfig, o *Options) error {
	group := genericapiserver.NewDefaultAPIGroupInfo(convoyv1alpha1.GroupName, Scheme, ParameterCodec, Codecs)
	group.NegotiatedSerializer = withoutProtobuf{group.NegotiatedSerializer}
	storage := map[string]rest.Storage{}
	getter := cfg.RESTOptionsGetter

	namespaces, err := hostNamespaces(cfg)
	if err != nil {
		return err
	}
	releases, err := release.NewStorage(Scheme, getter, o.Clock, validation.ReleaseOptions{AllowGitFileURLs: o.AllowGitFileURLs}, namespaces)
	if err != nil {
		return err
	}
	renders, err := render.NewStorage(Scheme, getter, render.AuthorizerAccess{Authorizer: cfg.Authorization.Authorizer})
	if err != nil {
		return err
	}
	inventories, err := releaseinventory.NewStorage(Scheme, getter)
	if err != nil {
		return err
	}
	clusters, err := cluster.NewStorage(Scheme, getter)
	if err != nil {
		return err
	}
	sets, err := releaseset.NewStorage(Scheme, getter, o.Clock, releaseset.AuthorizerAccess{Authorizer: cfg.Authorization.Authorizer},
		validation.ReleaseOptions{AllowGitFileURLs: o.AllowGitFileURLs}, namespaces)
	if err != nil {
		return err
	}
	alerts, err := alert.NewStorage(Scheme, getter)
	if err != nil {
		return err
	}
	receivers, err := receiver.NewStorage(Scheme, getter)
	if err != nil {
		return err
	}
	for _, m := range []map[string]rest.Storage{releases, renders, inventories, clusters, sets, alerts, receivers} {
		for k, v := range m {
			storage[k] = v
		}
	}
	group.VersionedResourcesStorageMap[convoyv1alpha1.Version] = storage
	if err := generic.InstallAPIGroup(&group); err != nil {
		return fmt.Errorf("installing %s: %w", convoyv1alpha1.SchemeGroupVersion, err)
	}
	return nil
}

// hostNamespaces reads the host's namespaces whose UIDs Releases and ReleaseSets
// record (registry.RecordNamespaceUID), with a client of its own: one read per create,
// which a ReleaseSet makes by the hundred, beyond client-go's default rate (5/s).
// nil when the server has no client of the host cluster (no --kubeconfig outside a
// cluster): nothing is recorded then.
func hostNamespaces(cfg *genericapiserver.RecommendedConfig) (registry.Namespaces, error) {
	if cfg.ClientConfig == nil {
		return nil, nil
	}
	c := restclient.CopyConfig(cfg.ClientConfig)
	c.QPS, c.Burst = 100, 200
	kube, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("a client of the host for its namespaces: %w", err)
	}
	return registry.LiveNamespaces{Client: kube}, nil
}

// Run serves until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	return s.generic.PrepareRun().RunWithContext(ctx)
}

// CABundle is the PEM of the self-signed serving certificate and its CA, for an
// APIService's caBundle; nil when the certificate came from --tls-cert-file.
func (s *Server) CABundle() []byte { return s.caBundle }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.port }

// Run builds the server from the options and serves until ctx is done. Started while
// the host's kube-apiserver is away, it waits for it (startup.go) rather than exiting.
func (o *Options) Run(ctx context.Context) error {
	s, err := o.startServer(ctx)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}
