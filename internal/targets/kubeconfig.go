package targets

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restConfigFromKubeconfig builds the configuration of a kubeconfig's current
// context. Only inline credentials are accepted: a kubeconfig stored in a
// Secret by a tenant must not make convoy run a program (exec, auth-provider)
// or read files on convoy's own disk.
func restConfigFromKubeconfig(data []byte) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("parse the kubeconfig: %w", err)
	}
	if err := checkInline(cfg); err != nil {
		return nil, err
	}
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
}

func checkInline(cfg *clientcmdapi.Config) error {
	if cfg.CurrentContext == "" {
		return errors.New("the kubeconfig has no current-context")
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return fmt.Errorf("the kubeconfig has no context %q", cfg.CurrentContext)
	}
	if cl, ok := cfg.Clusters[ctx.Cluster]; ok && cl.CertificateAuthority != "" {
		return errors.New("the kubeconfig's cluster reads certificate-authority from a file: use certificate-authority-data")
	}
	if auth, ok := cfg.AuthInfos[ctx.AuthInfo]; ok {
		switch {
		case auth.Exec != nil:
			return errors.New("the kubeconfig's user runs an exec plugin, which convoy does not allow: use a token or a client certificate")
		case auth.AuthProvider != nil:
			return errors.New("the kubeconfig's user uses an auth-provider, which convoy does not allow: use a token or a client certificate")
		case auth.ClientCertificate != "" || auth.ClientKey != "":
			return errors.New("the kubeconfig's user reads its client certificate from a file: use client-certificate-data and client-key-data")
		case auth.TokenFile != "":
			return errors.New("the kubeconfig's user reads its token from a file: use token")
		}
	}
	return nil
}
