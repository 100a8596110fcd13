package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// conditionLog records every Applied condition a Release showed, as a watch of its
// namespace delivers them: one entry per resourceVersion.
type conditionLog struct {
	mu      sync.Mutex
	entries []string
	stop    context.CancelFunc
	done    chan struct{}
}

// watchApplied starts recording the Applied condition of name; stop it with
// conditionLog.close, which returns every entry seen.
func (e *env) watchApplied(name string) *conditionLog {
	e.t.Helper()
	ctx, stop := context.WithCancel(e.ctx)
	w, err := e.client.Watch(ctx, &v1.ReleaseList{}, client.InNamespace(e.ns))
	if err != nil {
		stop()
		e.t.Fatalf("watch Releases: %v", err)
	}
	l := &conditionLog{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			rel, ok := ev.Object.(*v1.Release)
			if !ok || rel.Name != name || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			entry := rel.ResourceVersion + " Applied=none"
			if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied); c != nil {
				entry = fmt.Sprintf("%s Applied=%s/%s", rel.ResourceVersion, c.Status, c.Reason)
			}
			l.mu.Lock()
			l.entries = append(l.entries, entry)
			l.mu.Unlock()
		}
	}()
	e.t.Cleanup(func() { l.close() })
	return l
}

// close stops the watch and returns what it recorded.
func (l *conditionLog) close() []string {
	l.stop()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

// healthyReason is the reason of the Healthy condition of rel; "" when it has none.
func healthyReason(rel *v1.Release) string {
	if c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionHealthy); c != nil {
		return string(c.Status) + "/" + c.Reason
	}
	return ""
}

// TestHigherWaveKeepsAppliedWhileLowerReassesses: two automatic Releases on the same
// Cluster, db of cluster wave 0 (a Deployment) and web of wave 1, both Applied and
// Healthy. Someone scales db's Deployment; db's next reconcile puts the drift back,
// which leaves the observer's assessment of db's render behind: db reports
// Healthy=Unknown/Reassessing until the observer assesses it again. web, reconciled
// meanwhile, keeps Applied=True: it never reports WaitingForClusterWave. On the host
// cluster, and on a remote Cluster.
func TestHigherWaveKeepsAppliedWhileLowerReassesses(t *testing.T) {
	for name, remote := range map[string]bool{"host": false, "remote Cluster": true} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			target := ""
			if remote {
				secret := e.kubeconfigSecret("remote-kubeconfig")
				target = e.createCluster("remote-"+e.ns, secret.Name)
			}
			e.createRelease("db", automatic(), cluster(target), chartName("schema"))
			e.waitApplied("db", "True", v1.ReasonApplied)
			e.writeAssessment("db", v1.HealthHealthy)
			e.waitReady("db", "True", "Ready")
			e.createRelease("web", automatic(), cluster(target), clusterWave(1))
			e.waitApplied("web", "True", v1.ReasonApplied)
			e.writeAssessment("web", v1.HealthHealthy)
			e.waitReady("web", "True", "Ready")
			e.settle("web")

			log := e.watchApplied("web")
			n := e.reconciles("web")
			// The drift: db's Deployment scaled by someone else; the observer's
			// /sync starts db's reconcile, which scales it back.
			deploy := &appsv1.Deployment{}
			if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "db-api"}, deploy); err != nil {
				t.Fatal(err)
			}
			generation := deploy.Generation
			if err := e.client.Patch(e.ctx, deploy, client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"replicas":3}}`))); err != nil {
				t.Fatal(err)
			}
			e.sync("db", false)
			e.eventually("db's drift put back and its render re-assessed", func() (bool, string) {
				d := &appsv1.Deployment{}
				if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "db-api"}, d); err != nil {
					return false, err.Error()
				}
				h := healthyReason(e.release("db"))
				return d.Generation > generation+1 && *d.Spec.Replicas == 1 && h == "Unknown/"+v1.ReasonReassessing,
					fmt.Sprintf("db-api generation %d, replicas %d; db Healthy %s", d.Generation, *d.Spec.Replicas, h)
			})
			// db's Healthy change reconciles web (the cluster-wave watch).
			e.waitReconciled("web", n)
			n = e.reconciles("web")

			e.writeAssessment("db", v1.HealthHealthy)
			e.waitReady("db", "True", "Ready")
			e.waitReconciled("web", n)
			e.settle("web")

			entries := log.close()
			if len(entries) == 0 {
				t.Fatal("the watch saw nothing of web")
			}
			for _, entry := range entries {
				if entry[len(entry)-len("Applied=True/Applied"):] != "Applied=True/Applied" {
					t.Errorf("web showed %s while db was re-assessed; want Applied=True throughout (all: %v)", entry, entries)
				}
			}
			if c := apimeta.FindStatusCondition(e.release("web").Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
				t.Errorf("web Ready = %+v, want True", c)
			}
		})
	}
}
