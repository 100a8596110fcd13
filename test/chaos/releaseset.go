package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/releaseset"
	"kumodo.io/convoy/internal/testenv"
)

// The ReleaseSet of a run (docs/fleets.md): one set over two Clusters, "host" (the host
// control plane, registered as a Cluster too) in the stage canary and the remote
// Cluster in the stage rest, its chart version a range (fleetVersionRange). It is
// created before the faults and rolls its first revision; while the faults run a new
// template revision is written (two in a long run), a chart version in its range is
// published, and it is paused for a while (fleetgates.go); the check: no Release of a
// later stage got a revision before every Release of the earlier stages was Ready at
// it (checkStageOrder), whether the revision came from the template or the source.
const (
	fleetNamespace  = "chaos-fleet"
	fleetSetName    = "fleet"
	hostClusterName = "host"
	labelFleet      = "chaos.kumodo.io/fleet"
	labelRing       = "chaos.kumodo.io/ring"
	// fleetBakeTime is the canary stage's bakeTime: long enough that a rest stage
	// started without it shows, short beside a run.
	fleetBakeTime = 3 * time.Second
	// fleetResolveInterval is the template's syncPolicy.interval.
	fleetResolveInterval = 20 * time.Second
	// longFleetPhase: a fault phase this long writes a second template revision.
	longFleetPhase = 3 * time.Minute
)

// fleetStages are the stages of the set's Releases, by key (namespace/name).
func fleetStages() map[string]int {
	return map[string]int{
		fleetNamespace + "/" + releaseset.ReleaseName(fleetSetName, hostClusterName):   0,
		fleetNamespace + "/" + releaseset.ReleaseName(fleetSetName, remoteClusterName): 1,
	}
}

// fleetBakeTimes are the bake times of the set's stages, by stage index
// (checkStageOrder).
func fleetBakeTimes() map[int]time.Duration {
	out := map[int]time.Duration{}
	for i, st := range fleetStrategy().Stages {
		if st.BakeTime != nil {
			out[i] = st.BakeTime.Duration
		}
	}
	return out
}

// fleetStrategy is the set's strategy: the host Cluster in the stage canary, baked
// for a few seconds before the rest starts, the remote Cluster in the stage rest; one
// removal allowed (fleetMaxRemovals). maxUnavailable is left at 0: with one Cluster a
// stage, a canary that is not Ready holds the rest, which checkStageOrder checks.
func fleetStrategy() v1alpha1.ReleaseSetStrategy {
	return v1alpha1.ReleaseSetStrategy{
		Stages: []v1alpha1.Stage{
			{Name: "canary", ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelRing: "canary"}},
				BakeTime: &metav1.Duration{Duration: fleetBakeTime}},
			{Name: restStage},
		},
		MaxRemovals: ptr.To(intstr.FromInt32(fleetMaxRemovals)),
	}
}

// fleetReleases are the set's Releases as the orphan check knows Releases.
func fleetReleases() []*release {
	return []*release{
		{ns: fleetNamespace, name: releaseset.ReleaseName(fleetSetName, hostClusterName), exists: true},
		{ns: fleetNamespace, name: releaseset.ReleaseName(fleetSetName, remoteClusterName), cluster: remoteClusterName, exists: true},
	}
}

// startFleet registers the host control plane as the Cluster host (ring canary),
// labels both Clusters into the fleet, makes the set's namespace on both clusters and
// creates the set, token set-1.
func (e *env) startFleet(ctx context.Context) error {
	kubeconfig, err := testenv.Kubeconfig(e.cluster, "")
	if err != nil {
		return err
	}
	secretName := hostClusterName + "-kubeconfig"
	if _, err := e.kube.CoreV1().Secrets(systemNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: systemNamespace, Name: secretName},
		Data:       map[string][]byte{"value": kubeconfig},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the host Cluster's kubeconfig Secret: %w", err)
	}
	cl := &v1alpha1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: hostClusterName, Labels: map[string]string{labelFleet: "true", labelRing: "canary"}},
		Spec: v1alpha1.ClusterSpec{Kubeconfig: v1alpha1.KubeconfigSource{
			SecretRef: v1alpha1.SecretKeyReference{Namespace: systemNamespace, Name: secretName},
		}},
	}
	if err := e.convoy.Post().Resource(v1alpha1.ResourceClusters).Body(cl).Do(ctx).Error(); err != nil {
		return fmt.Errorf("create the Cluster %s: %w", hostClusterName, err)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{labelFleet: "true", labelRing: "rest"}}})
	if err := e.convoy.Patch(types.MergePatchType).Resource(v1alpha1.ResourceClusters).Name(remoteClusterName).Body(patch).Do(ctx).Error(); err != nil {
		return fmt.Errorf("label the Cluster %s: %w", remoteClusterName, err)
	}
	for _, kube := range []kubernetes.Interface{e.kube, e.remoteKube} {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleetNamespace}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	set := &v1alpha1.ReleaseSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ReleaseSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: fleetNamespace, Name: fleetSetName},
		Spec: v1alpha1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelFleet: "true"}},
			Template: v1alpha1.ReleaseTemplate{Spec: v1alpha1.ReleaseSpec{
				Chart:  v1alpha1.ChartSource{Repository: e.proxy.url(), Name: chartName, Version: fleetVersionRange},
				Values: valuesOf("set-1"),
				SyncPolicy: v1alpha1.SyncPolicy{
					Automatic: ptr.To(true),
					// The set resolves its chart version range once per interval: a version
					// published during the faults is resolved during them. Its Releases
					// reconcile and check drift at the same interval, which at rest writes
					// nothing (the quiet window).
					Interval: &metav1.Duration{Duration: fleetResolveInterval},
					RetryBackoff: &v1alpha1.RetryBackoff{
						Initial: &metav1.Duration{Duration: 2 * time.Second},
						Max:     &metav1.Duration{Duration: 20 * time.Second},
					},
				},
			}},
			Strategy: fleetStrategy(),
		},
	}
	if err := e.convoy.Post().Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleaseSets).Body(set).Do(ctx).Error(); err != nil {
		return fmt.Errorf("create the ReleaseSet %s/%s: %w", fleetNamespace, fleetSetName, err)
	}
	e.log.printf("ReleaseSet %s/%s over the Clusters %s (stage canary) and %s (stage rest)", fleetNamespace, fleetSetName, hostClusterName, remoteClusterName)
	return nil
}

// newFleetRevision writes a new revision of the set's template (values token token)
// after wait, while the faults run, retrying until phase ends; it says whether the
// write went through.
func (e *env) newFleetRevision(phase context.Context, wait time.Duration, token string) bool {
	select {
	case <-phase.Done():
		return false
	case <-time.After(wait):
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"values": map[string]string{"token": token}}}}})
	tokens := e.fleetTokens()
	e.fleet.mu.Lock()
	e.fleet.tokens = []string{tokens[0], token} // the last one written, and this one: its answer may be lost
	e.fleet.mu.Unlock()
	err := retry(phase, time.Hour, func(ctx context.Context) error {
		return e.convoy.Patch(types.MergePatchType).Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleaseSets).
			Name(fleetSetName).Body(patch).Do(ctx).Error()
	})
	if err != nil {
		e.log.printf("ReleaseSet %s/%s: the new revision was not written during the faults: %v", fleetNamespace, fleetSetName, err)
		return false
	}
	e.fleet.mu.Lock()
	e.fleet.tokens = []string{token}
	e.fleet.mu.Unlock()
	e.log.printf("ReleaseSet %s/%s: new revision written (token %s)", fleetNamespace, fleetSetName, token)
	return true
}

// waitFleetReady waits up to timeout until the set is Ready at the revision of its
// current spec, the last token written and the newest chart version in its range,
// with a Release of each Cluster at it (fleetReadyAt); a violation when it is not.
func (e *env) waitFleetReady(ctx context.Context, timeout time.Duration, log *eventLog) []violation {
	var last string
	tokens, version := e.fleetTokens(), e.fleetVersion()
	err := retry(ctx, timeout, func(ctx context.Context) error {
		s := &v1alpha1.ReleaseSet{}
		if err := e.convoy.Get().Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleaseSets).Name(fleetSetName).Do(ctx).Into(s); err != nil {
			last = err.Error()
			return err
		}
		rels := &v1alpha1.ReleaseList{}
		if err := e.convoy.Get().Namespace(fleetNamespace).Resource(v1alpha1.ResourceReleases).Do(ctx).Into(rels); err != nil {
			last = err.Error()
			return err
		}
		if last = fleetReadyAt(s, rels.Items, tokens, version); last != "" {
			last = fmt.Sprintf("revision %s: %s", s.Status.Revision, last)
			return fmt.Errorf("%s", last)
		}
		return nil
	})
	if err != nil {
		return []violation{{"releaseset", fleetNamespace + "/" + fleetSetName, fmt.Sprintf("not Ready at its last revision (token %v, chart version %s) %s after the faults stopped: %s", tokens, version, timeout, last)}}
	}
	log.printf("ReleaseSet %s/%s Ready at its last revision (chart version %s)", fleetNamespace, fleetSetName, version)
	return nil
}

// checkStageOrder checks the order of a set's rollouts in h: a Release of a later
// stage (stages: Release key → stage index) that the watch saw at a new revision
// (created with it, or updated to it) at resourceVersion rv must have had, at rv,
// every Release of the earlier stages Ready at that revision, as their last states
// seen before rv say, and Ready for at least the bake time of their stage (bake:
// stage index → bakeTime): the harness saw the later Release at the revision (at) no
// sooner than bake after the earlier one's Ready lastTransitionTime. (The controller
// counts the bake from that time or later, and the harness sees a write after it is
// made, so a shorter gap is a stage started before its earlier stages baked; the
// check misses a bake counted from too early a time after a Ready that did not flap.)
// A state that a relist may have hidden makes a case unverified, not a violation. It
// returns the violations, how many revisions of later-stage Releases it judged and how
// many it could not.
func checkStageOrder(h history, stages map[string]int, bake map[int]time.Duration) (out []violation, judged, unverified int) {
	keys := make([]string, 0, len(stages))
	for k := range stages {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	byRV := map[string][]relState{}
	for _, k := range keys {
		states := slices.Clone(h.states[k])
		slices.SortStableFunc(states, func(a, b relState) int { return int(a.rv - b.rv) })
		byRV[k] = states
	}
	first := slices.Min(slices.Collect(maps.Values(stages)))
	for _, later := range keys {
		if stages[later] == first {
			continue
		}
		prev := ""
		for _, s := range byRV[later] {
			if s.revision == "" || s.revision == prev || s.gone {
				prev = s.revision
				continue
			}
			prev = s.revision
			judged++
			ok, hidden := true, false
			var why string
			for _, earlier := range keys {
				if stages[earlier] >= stages[later] {
					continue
				}
				var last *relState
				for i := range byRV[earlier] {
					if byRV[earlier][i].rv < s.rv {
						last = &byRV[earlier][i]
					}
				}
				if last != nil && last.revision == s.revision && last.setReady {
					if d := bake[stages[earlier]]; d > 0 && s.at.Sub(last.readySince) < d {
						ok = false
						why = fmt.Sprintf("Release %s of an earlier stage was Ready at it since %s, %s before, less than its stage's bake time %s",
							earlier, last.readySince.Format(time.RFC3339), s.at.Sub(last.readySince).Round(time.Millisecond), d)
					}
					continue
				}
				lo := int64(0)
				if last != nil {
					lo = last.rv
				}
				if h.gaps.straddles(releaseStream, lo, s.rv, false) {
					hidden = true
					continue
				}
				ok = false
				if last == nil {
					why = fmt.Sprintf("Release %s of an earlier stage did not exist yet", earlier)
				} else {
					why = fmt.Sprintf("Release %s of an earlier stage was at revision %q, Ready %t (resourceVersion %d)", earlier, last.revision, last.setReady, last.rv)
				}
			}
			switch {
			case !ok:
				out = append(out, violation{"stages", later, fmt.Sprintf("got revision %s at resourceVersion %d while %s", s.revision, s.rv, why)})
			case hidden:
				unverified++
			}
		}
	}
	return out, judged, unverified
}
