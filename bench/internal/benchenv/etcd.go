package benchenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"kumodo.io/convoy/internal/localcluster"
)

// StartEtcd starts one more etcd member beside the control plane, as name, with its
// data in <Dir>/<name> and the extra flags, waits until its /health answers, and
// returns its client URL.
func (e *Env) StartEtcd(ctx context.Context, name string, extra []string) (string, error) {
	ports := make([]int, 2)
	for i := range ports {
		p, err := FreePort()
		if err != nil {
			return "", err
		}
		ports[i] = p
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	args := append([]string{
		"--name=" + name,
		"--data-dir=" + filepath.Join(e.Cluster.Dir(), name),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=" + name + "=" + peer,
		"--log-level=warn",
	}, extra...)
	hc := &http.Client{Timeout: time.Second}
	healthy := func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
		if err != nil {
			return false
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"health":"true"`)
	}
	if err := e.Cluster.Run(ctx, localcluster.Process{Name: name, Path: filepath.Join(e.Cluster.BinDir(), "etcd"), Args: args, Ready: healthy}); err != nil {
		return "", fmt.Errorf("starting %s (log: %s/%s.log): %w", name, e.Cluster.LogDir(), name, err)
	}
	e.Track(name, e.Cluster.PID(name))
	return client, nil
}
