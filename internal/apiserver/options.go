package apiserver

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/utils/clock"
	netutils "k8s.io/utils/net"

	convoyopenapi "kumodo.io/convoy/api/openapi"
	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/startup"
)

// DefaultEtcdPrefix is where convoy's objects live in etcd unless --etcd-prefix says otherwise.
const DefaultEtcdPrefix = "/registry/" + convoyv1alpha1.GroupName

// Options configure convoy apiserver: the standard options of an aggregated API server
// (etcd, serving, delegated authentication and authorization, admission, ...) plus a
// clock and the extra names of the self-signed serving certificate.
type Options struct {
	// RecommendedOptions are k8s.io/apiserver's: --etcd-servers, --etcd-prefix,
	// --secure-port, --tls-cert-file, --authentication-kubeconfig, --kubeconfig, ...
	RecommendedOptions *genericoptions.RecommendedOptions
	// Clock is what "now" is for sync times and pinnedAt; tests inject a fake one.
	Clock clock.PassiveClock
	// AlternateDNS are extra DNS names for the self-signed serving certificate, such as
	// the name the aggregator dials (<service>.<namespace>.svc).
	AlternateDNS []string
	// StartupTimeout bounds Run's wait at start for the host's kube-apiserver
	// (--startup-timeout; 0: startup.DefaultTimeout).
	StartupTimeout time.Duration
	// AllowGitFileURLs accepts file:// URLs in spec.chart.git.url (--allow-git-file-urls).
	AllowGitFileURLs bool
}

// NewOptions returns the defaults: etcd prefix DefaultEtcdPrefix, port 443 on all
// interfaces, a self-signed certificate kept in memory when no --tls-cert-file is
// given, and the real clock.
func NewOptions() *Options {
	o := &Options{
		RecommendedOptions: genericoptions.NewRecommendedOptions(DefaultEtcdPrefix,
			Codecs.LegacyCodec(convoyv1alpha1.SchemeGroupVersion)),
		Clock:          clock.RealClock{},
		StartupTimeout: startup.DefaultTimeout,
	}
	o.RecommendedOptions.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(
		convoyv1alpha1.SchemeGroupVersion, schema.GroupKind{Group: convoyv1alpha1.GroupName})
	// Generated certificates stay in memory instead of a directory under the working directory.
	o.RecommendedOptions.SecureServing.ServerCert.CertDirectory = ""
	return o
}

// AddFlags adds the options' flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.RecommendedOptions.AddFlags(fs)
	fs.StringSliceVar(&o.AlternateDNS, "tls-alternate-dns", o.AlternateDNS,
		"Extra DNS names of the self-signed serving certificate (used when --tls-cert-file is not set), "+
			"such as convoy-apiserver.convoy-system.svc.")
	fs.DurationVar(&o.StartupTimeout, startup.FlagName, o.StartupTimeout,
		"How long the server waits at start for the host's kube-apiserver (the delegated authentication "+
			"configuration it reads there) before it exits; it retries with a back-off up to 10 s and logs what it waits for.")
	fs.BoolVar(&o.AllowGitFileURLs, "allow-git-file-urls", o.AllowGitFileURLs,
		"Accept file:// URLs in spec.chart.git.url: Git repositories on the controller's disk (tests, air-gapped mirrors). "+
			"The controller needs the same flag.")
}

// Validate checks the options.
func (o *Options) Validate() error {
	errs := o.RecommendedOptions.Validate()
	if o.Clock == nil {
		errs = append(errs, fmt.Errorf("a clock is required"))
	}
	return utilerrors.NewAggregate(errs)
}

// serving makes the self-signed serving certificate when no --tls-cert-file is given
// (written to --cert-dir when set, and read back from there by later runs).
func (o *Options) serving() error {
	if err := o.RecommendedOptions.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", o.AlternateDNS,
		[]net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return fmt.Errorf("creating a self-signed serving certificate: %w", err)
	}
	return nil
}

// config turns the options into the generic server's configuration. It reads the
// delegated authentication configuration from the host's kube-apiserver (the
// ConfigMap kube-system/extension-apiserver-authentication), so it fails while that
// is away; Run retries it (startup.go).
func (o *Options) config() (*genericapiserver.RecommendedConfig, error) {
	cfg := genericapiserver.NewRecommendedConfig(Codecs)
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()

	namer := openapi.NewDefinitionNamer(namerScheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(convoyopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title = "convoy"
	cfg.OpenAPIConfig.Info.Version = convoyv1alpha1.Version
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(convoyopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title = "convoy"
	cfg.OpenAPIV3Config.Info.Version = convoyv1alpha1.Version

	if err := o.RecommendedOptions.ApplyTo(cfg); err != nil {
		return nil, fmt.Errorf("applying the server options: %w", err)
	}
	if cfg.Authorization.Authorizer != nil {
		// One SubjectAccessReview per user, verb, resource and namespace, not per object (authz.go).
		cfg.Authorization.Authorizer = anyNameFirst{cfg.Authorization.Authorizer}
	}
	return cfg, nil
}
