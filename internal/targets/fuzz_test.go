package targets

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigSeeds hold the placeholder TOKEN where the fuzzer's secret goes.
var kubeconfigSeeds = []string{
	`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: c, user: u, namespace: n}}]
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: Y2E=, tls-server-name: x}}]
users: [{name: u, user: {token: TOKEN}}]
`,
	`{"apiVersion":"v1","kind":"Config","current-context":"c","contexts":[{"name":"c","context":{"cluster":"c","user":"u"}}],
"clusters":[{"name":"c","cluster":{"server":"https://h","insecure-skip-tls-verify":true,"proxy-url":"http://p"}}],
"users":[{"name":"u","user":{"username":"a","password":"TOKEN","as":"system:admin","as-groups":["g"]}}]}`,
	`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: https://h, certificate-authority: /etc/ssl/ca.crt}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, TOKEN]}}}]
`,
	`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: https://h}}]
users: [{name: u, user: {auth-provider: {name: oidc, config: {id-token: TOKEN}}, client-certificate: /c, client-key: /k, tokenFile: /t}}]
`,
	"current-context: c\ncontexts: [{name: c, context: {cluster: d, user: v}}]\nusers: [{name: u, user: {token: [TOKEN]}}]\n",
	"apiVersion: v1\nkind: Config\ncurrent-context: TOKEN\n",
	"users: {token: TOKEN",
	"",
}

// Whatever a kubeconfig Secret holds, restConfigFromKubeconfig does not panic; a
// configuration it accepts makes convoy run no program and read no file of its own
// disk (no exec plugin, auth-provider, certificate, key, CA or token file); and a
// refusal says what is wrong without repeating a credential of the kubeconfig (the
// message ends up in the Release's ClusterNotReady condition, which convoy-view reads).
func FuzzKubeconfig(f *testing.F) {
	for _, s := range kubeconfigSeeds {
		f.Add([]byte(s), "c2VjcmV0LXRva2VuLTQ3MTE")
	}
	f.Fuzz(func(t *testing.T, doc []byte, token string) {
		data := bytes.ReplaceAll(doc, []byte("TOKEN"), []byte(token))
		cfg, err := restConfigFromKubeconfig(data)
		if err != nil {
			msg := err.Error()
			if msg == "" {
				t.Fatal("a refusal without a message")
			}
			// The messages name the current context on purpose; anything else of
			// the kubeconfig they repeat may be a credential.
			named := ""
			if parsed, err := clientcmd.Load(data); err == nil {
				named = parsed.CurrentContext
			}
			if len(token) >= 8 && bytes.Contains(doc, []byte("TOKEN")) && strings.Contains(msg, token) && !strings.Contains(named, token) {
				t.Fatalf("the refusal repeats the credential %q: %s", token, msg)
			}
			return
		}
		switch {
		case cfg.ExecProvider != nil:
			t.Fatalf("an accepted kubeconfig runs an exec plugin: %+v", cfg.ExecProvider)
		case cfg.AuthProvider != nil:
			t.Fatalf("an accepted kubeconfig uses an auth-provider: %+v", cfg.AuthProvider)
		case cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.BearerTokenFile != "":
			t.Fatalf("an accepted kubeconfig reads files: ca %q, cert %q, key %q, token %q",
				cfg.CAFile, cfg.CertFile, cfg.KeyFile, cfg.BearerTokenFile)
		case cfg.Host == "":
			t.Fatal("an accepted kubeconfig names no server")
		}
	})
}
