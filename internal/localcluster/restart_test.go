package localcluster_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"kumodo.io/convoy/internal/localcluster"
)

// TestRestartKeepsPortsAndData kills etcd and kube-apiserver, starts them again
// with Restart, and reads back an object written before: same address, same data.
func TestRestartKeepsPortsAndData(t *testing.T) {
	c := start(t, localcluster.Options{})
	cs := clientset(t, c)
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-restart", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pids := c.PIDs()
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if err := c.Restart(name); err != nil {
			t.Fatalf("restart %s: %v", name, err)
		}
	}
	if err := c.Restart("kube-scheduler"); err == nil {
		t.Error("Restart of a process that does not run: want an error naming it, got none")
	}
	var got *corev1.ConfigMap
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = cs.CoreV1().ConfigMaps("default").Get(ctx, "before-restart", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the ConfigMap written before the restart is not readable at %s after it: %v", c.Host(), err)
	}
	if got.Data["k"] != "v" {
		t.Errorf("data after restart = %v, want k=v", got.Data)
	}
	if after := c.PIDs(); len(after) != len(pids)+2 {
		t.Errorf("processes after two restarts = %v, want the %d before and 2 new", after, len(pids))
	}
}
