package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// kubectlCreate writes n manifests of s's Release into a folder and times one
// `kubectl create -f <folder>` of them as the user (kubeconfig), with a warm
// discovery cache: the measurement.
func (e *env) kubectlCreate(ctx context.Context, s *side, kubeconfig, ns, prefix string, n int) (*result, error) {
	dir, err := os.MkdirTemp("", "apivscrd-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	files := filepath.Join(dir, "objects")
	if err := os.Mkdir(files, 0o755); err != nil {
		return nil, err
	}
	for i := range n {
		b, err := yaml.Marshal(s.obj(ns, name(prefix, i)).Object)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(files, name(prefix, i)+".yaml"), b, 0o644); err != nil {
			return nil, err
		}
	}
	kubectl := filepath.Join(os.Getenv("CONVOY_KUBE_BIN_DIR"), "kubectl")
	cache := filepath.Join(dir, "cache")
	warm := exec.CommandContext(ctx, kubectl, "--kubeconfig="+kubeconfig, "--cache-dir="+cache, "get", s.gvr.Resource+"."+s.gvr.Group, "-n", ns, "bench-no-such-object", "--ignore-not-found")
	if out, err := warm.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl get: %w: %s", err, out)
	}
	r := &result{n: n}
	sar0, tr0 := e.reviews(ctx)
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig="+kubeconfig, "--cache-dir="+cache, "create", "-f", files, "-o", "name")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r.total = time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("kubectl create -f: %w: %.2000s", err, out)
	}
	sar1, tr1 := e.reviews(ctx)
	r.sars, r.trs = sar1-sar0, tr1-tr0
	r.lat = []time.Duration{r.total / time.Duration(n)}
	return r, nil
}
