package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

// The host API servers are asked for uncompressed answers unless
// --kube-api-compression says otherwise, and a kubeconfig that turns compression off
// keeps it off (defaultKubeAPICompression).
func TestHostConfigCompression(t *testing.T) {
	for _, tc := range []struct {
		name            string
		flags           []string
		kubeconfigOff   bool
		wantCompression bool
	}{
		{name: "default", wantCompression: false},
		{name: "--kube-api-compression", flags: []string{"--kube-api-compression"}, wantCompression: true},
		{name: "--kube-api-compression=false", flags: []string{"--kube-api-compression=false"}, wantCompression: false},
		{name: "the kubeconfig's disable-compression wins", flags: []string{"--kube-api-compression"}, kubeconfigOff: true, wantCompression: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubeconfig")
			cluster := "    server: https://127.0.0.1:6443\n"
			if tc.kubeconfigOff {
				cluster += "    disable-compression: true\n"
			}
			kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- name: host\n  cluster:\n" + cluster +
				"users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context:\n    cluster: host\n    user: u\ncurrent-context: c\n"
			if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
				t.Fatal(err)
			}
			f := newHostFlags(0, "", "")
			fs := pflag.NewFlagSet("host", pflag.ContinueOnError)
			f.bind(fs, hostFlagHelp{})
			if err := fs.Parse(append([]string{"--kubeconfig=" + path}, tc.flags...)); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.restConfig()
			if err != nil {
				t.Fatal(err)
			}
			if got := !cfg.DisableCompression; got != tc.wantCompression {
				t.Errorf("compression: got %v, want %v", got, tc.wantCompression)
			}
		})
	}
}
