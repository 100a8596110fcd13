package cli

import (
	"context"
	"os"
	"testing"
	"time"

	"kumodo.io/convoy/internal/localcluster"
)

// On a cluster that does not serve convoy's API (a plain control plane: no convoy
// apiserver, no APIService), every command says that convoy is not installed, how to
// install it and which APIService to check, and exits 1 (cli.md: "API not
// installed (says how to install it)"; exit 1 for an API error).
func TestAPINotInstalledSaysHowToInstall(t *testing.T) {
	needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	plain, err := localcluster.Start(ctx, localcluster.Options{Progress: os.Stderr})
	if err != nil {
		t.Fatalf("starting a plain control plane: %v", err)
	}
	t.Cleanup(func() { _ = plain.Stop() })

	want := "error: " + installHint + "\n"
	for name, args := range map[string][]string{
		"sync":            {"release", "sync", "podinfo", "-n", "default"},
		"sync --wait":     {"release", "sync", "podinfo", "--wait", "--timeout", "30s", "-n", "default"},
		"list":            {"release", "list", "-A"},
		"status":          {"release", "status", "podinfo", "-n", "default"},
		"cluster list":    {"cluster", "list"},
		"pin":             {"release", "pin", "podinfo", "-n", "default"},
		"history -o yaml": {"release", "history", "podinfo", "-n", "default", "-o", "yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			res := plugin(t, nil, append([]string{"--kubeconfig", plain.KubeconfigPath()}, args...)...)
			if res.code != ExitFailure {
				t.Errorf("exit %d, want %d (stdout %q)", res.code, ExitFailure, res.stdout)
			}
			if res.stderr != want {
				t.Errorf("stderr:\n%q\nwant:\n%q", res.stderr, want)
			}
			if res.stdout != "" {
				t.Errorf("stdout %q, want nothing", res.stdout)
			}
		})
	}
}
