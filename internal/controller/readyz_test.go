package controller

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hostmanager"
	"kumodo.io/convoy/internal/testenv"
)

// TestReadyzWaitsForTheInformers: the controller's /readyz says ready only once the
// informers of what it watches have synced, not when the manager has merely started.
// Its user may not list ReleaseInventories at first: that informer cannot sync, and
// /readyz answers 503 naming it, however long the manager runs; once the permission
// is granted the informer syncs and /readyz answers 200.
func TestReadyzWaitsForTheInformers(t *testing.T) {
	e := newEnv(t, envOptions{})
	user := "readyz-" + e.ns
	read := []string{"get", "list", "watch"}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1.GroupName}, Resources: []string{v1.ResourceReleases, v1.ResourceClusters, v1.ResourceRenders, v1.ResourceReleaseSets, v1.ResourceAlerts, v1.ResourceReceivers}, Verbs: read},
			{APIGroups: []string{""}, Resources: []string{"secrets", "namespaces", "configmaps"}, Verbs: read},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := e.client.Create(e.ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj) })
	}
	cfg, err := controlPlane.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}

	port := freeTCPPort(t)
	mgr, err := NewManager(cfg, ManagerOptions{
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "127.0.0.1:" + strconv.Itoa(port),
		Namespaces:             []string{e.ns},
	})
	if err != nil {
		t.Fatal(err)
	}
	fetcher := testenv.Fetcher(t)
	if _, err := Setup(e.ctx, mgr, Options{Source: fetcher, Metrics: prometheus.NewRegistry(), SkipNameValidation: true}); err != nil {
		t.Fatal(err)
	}
	startManager(t, e.ctx, mgr)

	readyz := func() (int, string) {
		req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/readyz?verbose", port), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// The probe answers, and says not ready.
	e.eventually("/readyz answers", func() (bool, string) {
		code, body := readyz()
		return code != 0, body
	})
	e.consistently("/readyz not ready while ReleaseInventories cannot be listed", 3*time.Second, func() (bool, string) {
		code, body := readyz()
		return code == http.StatusInternalServerError || code == http.StatusServiceUnavailable, fmt.Sprintf("%d: %s", code, body)
	})
	if code, body := readyz(); !strings.Contains(body, "[-]"+hostmanager.ReadyzInformers+" failed") {
		t.Errorf("/readyz %d %q, want it to name the failing check", code, body)
	}
	// The check's reason (logged; /readyz withholds it) names the informer.
	req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, "/readyz", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := informersSynced(mgr.GetCache(), watchedKinds()...)(req); err == nil || !strings.Contains(err.Error(), "ReleaseInventory") {
		t.Errorf("check: %v, want it to name the ReleaseInventory informer", err)
	}

	current := &rbacv1.ClusterRole{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Name: role.Name}, current); err != nil {
		t.Fatal(err)
	}
	current.Rules = append(current.Rules, rbacv1.PolicyRule{APIGroups: []string{v1.GroupName}, Resources: []string{v1.ResourceReleaseInventories}, Verbs: read})
	if err := e.client.Update(e.ctx, current); err != nil {
		t.Fatal(err)
	}
	e.eventually("/readyz ready once every informer synced", func() (bool, string) {
		code, body := readyz()
		return code == http.StatusOK, fmt.Sprintf("%d: %s", code, body)
	})
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
