package chaos

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"kumodo.io/convoy/api/v1alpha1"
)

// The chart versions of testdata/charts: two good ones and one whose Deployment
// never becomes Available.
const (
	versionA       = "1.0.0"
	versionB       = "1.1.0"
	versionFailing = "2.0.0"
	chartName      = "app"
)

// Annotations the chart puts on every object, from the values and the chart.
const (
	annotationToken   = "chaos.kumodo.io/token"
	annotationVersion = "chaos.kumodo.io/version"
)

// release is the driver's model of one Release: what it was asked to be. Its mutex
// orders the driver's actions on it.
type release struct {
	mu sync.Mutex

	ns, name string
	cluster  string // spec.cluster: "" (the host) or remoteClusterName
	wave     int32  // spec.clusterWave
	manual   bool
	policy   v1alpha1.FailureAction // "" for none
	hooks    bool
	mayFail  bool // the driver may pick the failing chart version
	health   time.Duration

	exists  bool
	version string
	token   string
	pinned  bool
	unsure  bool // a write's outcome is unknown and reading it back failed: settle reads it
	// the latest sync requests convoy acknowledged (the annotation values it wrote).
	ackSync, ackForce time.Time
	syncsSent         int
}

func (r *release) key() string { return r.ns + "/" + r.name }

// inputs is the token@version that identifies what the Release asks for now.
func (r *release) inputs() string { return inputsKey(r.token, r.version) }

func inputsKey(token, version string) string { return token + "@" + version }

// expectFailure says whether the Release's inputs deserve a failure.
func (r *release) expectFailure() bool { return r.version == versionFailing }

// newWorkload makes n Release models in the namespaces, mixing modes and policies
// from rng: a third manual, a third with a failurePolicy (Rollback or Halt), a
// quarter with hooks, a fifth that may take the failing version, a third on the
// remote Cluster. Cluster waves: a Release that may fail is in wave 2, the last (one
// of a lower wave would hold every higher one on its Cluster for ever, as designed);
// of the others a third are in wave 1, the rest in wave 0. healthTimeout is
// the failurePolicy's: longer than any fault lasts, so that a good render fails its
// rollout only through a bug.
func newWorkload(rng *rand.Rand, n int, namespaces []string, healthTimeout time.Duration) []*release {
	out := make([]*release, n)
	for i := range out {
		r := &release{
			ns:      namespaces[i%len(namespaces)],
			name:    fmt.Sprintf("r%03d", i),
			manual:  rng.IntN(3) == 0,
			hooks:   rng.IntN(4) == 0,
			mayFail: rng.IntN(5) == 0,
			version: versionA,
			health:  healthTimeout,
		}
		switch rng.IntN(6) {
		case 0:
			r.policy = v1alpha1.FailureActionRollback
		case 1:
			r.policy = v1alpha1.FailureActionHalt
		}
		if rng.IntN(3) == 0 {
			r.cluster = remoteClusterName
		}
		switch {
		case r.mayFail:
			r.wave = 2
		case rng.IntN(3) == 0:
			r.wave = 1
		}
		out[i] = r
	}
	return out
}

// object is the Release as the driver creates it.
func (r *release) object(repoURL string) *v1alpha1.Release {
	rel := &v1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.ns},
		Spec: v1alpha1.ReleaseSpec{
			Cluster:     r.cluster,
			ClusterWave: r.wave,
			Chart:       v1alpha1.ChartSource{Repository: repoURL, Name: chartName, Version: r.version},
			Values:      valuesOf(r.token),
			SyncPolicy: v1alpha1.SyncPolicy{
				Automatic: ptr.To(!r.manual),
				RetryBackoff: &v1alpha1.RetryBackoff{
					Initial: &metav1.Duration{Duration: 2 * time.Second},
					Max:     &metav1.Duration{Duration: 20 * time.Second},
				},
			},
		},
	}
	if r.policy != "" {
		rel.Spec.FailurePolicy = &v1alpha1.FailurePolicy{Action: r.policy, HealthTimeout: &metav1.Duration{Duration: r.health}}
	}
	return rel
}

func valuesOf(token string) *runtime.RawExtension {
	b, _ := json.Marshal(map[string]string{"token": token})
	return &runtime.RawExtension{Raw: b}
}

// tokenOf reads the token of a Release's values; "" when there is none.
func tokenOf(values *runtime.RawExtension) string {
	if values == nil {
		return ""
	}
	var v struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(values.Raw, &v)
	return v.Token
}

// lifecycle is the body of a /lifecycle write: a PreApply and a PostApply hook Job.
func lifecycle() []byte {
	job := func() *batchv1.JobSpec {
		return &batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "hook", Image: "registry.invalid/chaos-hook:1"}},
			}},
		}
	}
	b, _ := json.Marshal(map[string]any{"lifecycle": v1alpha1.Lifecycle{Hooks: []v1alpha1.Hook{
		{Name: "pre", Phase: v1alpha1.HookPreApply, Timeout: &metav1.Duration{Duration: time.Minute}, Job: job()},
		{Name: "post", Phase: v1alpha1.HookPostApply, Timeout: &metav1.Duration{Duration: time.Minute}, Job: job()},
	}}})
	return b
}
