package targets

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

func TestRestConfigFromKubeconfig(t *testing.T) {
	const cluster = `apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:6443
%s
users:
- name: u
  user:
%s
`
	cases := map[string]struct {
		cluster, user string
		wantErr       string // empty: accepted
	}{
		"inline token":               {cluster: "    insecure-skip-tls-verify: true", user: "    token: abc"},
		"inline client certificate":  {cluster: "    certificate-authority-data: " + b64("ca"), user: "    client-certificate-data: " + b64("c") + "\n    client-key-data: " + b64("k")},
		"exec plugin":                {user: "    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, id]}", wantErr: "exec plugin"},
		"auth provider":              {user: "    auth-provider: {name: gcp}", wantErr: "auth-provider"},
		"client certificate file":    {user: "    client-certificate: /etc/passwd\n    client-key: /etc/shadow", wantErr: "from a file"},
		"token file":                 {user: "    tokenFile: /var/run/secrets/token", wantErr: "from a file"},
		"certificate authority file": {cluster: "    certificate-authority: /etc/ssl/ca.crt", user: "    token: abc", wantErr: "certificate-authority from a file"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := restConfigFromKubeconfig(fmt.Appendf(nil, cluster, tc.cluster, tc.user))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("got error %v, want none", err)
				}
				if cfg.Host != "https://10.0.0.1:6443" {
					t.Errorf("Host = %q", cfg.Host)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := restConfigFromKubeconfig([]byte("not: [a kubeconfig")); err == nil {
		t.Error("a broken kubeconfig: got no error")
	}
	if _, err := restConfigFromKubeconfig([]byte("apiVersion: v1\nkind: Config\n")); err == nil {
		t.Error("a kubeconfig without current-context: got no error")
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
