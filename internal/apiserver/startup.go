package apiserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"kumodo.io/convoy/internal/startup"
)

// The ConfigMap in which kube-apiserver publishes the delegated authentication
// configuration (its client CA and front-proxy settings) for aggregated API servers.
const (
	authenticationConfigMapNamespace = metav1.NamespaceSystem
	authenticationConfigMapName      = "extension-apiserver-authentication"
)

// probeTimeout bounds each read of the authentication ConfigMap during the wait.
const probeTimeout = 10 * time.Second

// startServer validates the options, makes the serving certificate, then waits for the
// host's kube-apiserver (startup.Wait, at most StartupTimeout): each attempt reads the
// authentication ConfigMap as k8s.io/apiserver will, then builds the configuration,
// which reads it again. Started while kube-apiserver is away (restarting, or not yet up
// at an installation), convoy apiserver so waits, logging what it waits for, instead of
// exiting with "unable to load configmap based request-header-client-ca-file". Errors
// of the options themselves end it at once.
func (o *Options) startServer(ctx context.Context) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := o.serving(); err != nil {
		return nil, err
	}
	probe, host, err := o.authenticationProbe()
	if err != nil {
		return nil, err
	}
	kubeAPIServer := "the host's kube-apiserver"
	if host != "" {
		kubeAPIServer = "kube-apiserver at " + host
	}
	w := startup.Wait{
		Process: "convoy apiserver",
		For: fmt.Sprintf("%s to serve the delegated authentication configuration (ConfigMap %s/%s)",
			kubeAPIServer, authenticationConfigMapNamespace, authenticationConfigMapName),
		Check: fmt.Sprintf("that %s answers and that convoy apiserver's identity (--authentication-kubeconfig, "+
			"else its ServiceAccount) may read that ConfigMap (a RoleBinding to extension-apiserver-authentication-reader in %s)",
			kubeAPIServer, authenticationConfigMapNamespace),
		Timeout: o.StartupTimeout,
		Log:     klog.Background().WithName("startup"),
	}
	var cfg *genericapiserver.RecommendedConfig
	err = w.Until(ctx, func(ctx context.Context) error {
		if probe != nil {
			if err := probe(ctx); err != nil {
				return err
			}
		}
		c, err := o.config()
		if err != nil {
			return err
		}
		cfg = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return o.newServer(cfg)
}

// authenticationProbe returns a read of the authentication ConfigMap with the client
// that k8s.io/apiserver's delegated authentication uses, and the host it reads from;
// a nil probe when the options need no such read (--authentication-skip-lookup,
// --authentication-tolerate-lookup-failure, --requestheader-client-ca-file given, or no
// authentication kubeconfig outside a cluster).
func (o *Options) authenticationProbe() (func(context.Context) error, string, error) {
	a := o.RecommendedOptions.Authentication
	if a == nil || a.SkipInClusterLookup || a.TolerateInClusterLookupFailure || a.RequestHeader.ClientCAFile != "" {
		return nil, "", nil
	}
	var cfg *rest.Config
	var err error
	if a.RemoteKubeConfigFile != "" {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: a.RemoteKubeConfigFile}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, "", fmt.Errorf("load the authentication kubeconfig %s: %w", a.RemoteKubeConfigFile, err)
		}
	} else {
		cfg, err = rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) && a.RemoteKubeConfigFileOptional {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("the in-cluster configuration for delegated authentication: %w", err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = probeTimeout
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	probe := func(ctx context.Context) error {
		_, err := kube.CoreV1().ConfigMaps(authenticationConfigMapNamespace).Get(ctx, authenticationConfigMapName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read ConfigMap %s/%s: %w", authenticationConfigMapNamespace, authenticationConfigMapName, err)
		}
		return nil
	}
	return probe, cfg.Host, nil
}
