package benchenv

import (
	"encoding/json"
	"fmt"
	"runtime"
	"time"
)

// calibrationObject is a Deployment as kube-apiserver answers it, managed fields and
// status included: what the API servers and convoy's processes spend most of their
// CPU decoding and encoding.
var calibrationObject = map[string]any{
	"apiVersion": "apps/v1",
	"kind":       "Deployment",
	"metadata": map[string]any{
		"name": "podinfo-00042", "namespace": "bench-e2e", "uid": "0b5c8a1e-3f7a-4d2b-9c61-5e8f2a7d9b10",
		"resourceVersion": "123456", "generation": 1, "creationTimestamp": "2026-12-05T07:00:00Z",
		"labels": map[string]any{
			"app.kubernetes.io/name": "podinfo", "app.kubernetes.io/instance": "podinfo-00042",
			"app.kubernetes.io/managed-by": "convoy", "convoy.kumodo.io/release": "podinfo-00042",
		},
		"annotations": map[string]any{"deployment.kubernetes.io/revision": "1"},
		"managedFields": []any{
			map[string]any{"manager": "convoy", "operation": "Apply", "apiVersion": "apps/v1", "time": "2026-12-05T07:00:00Z",
				"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{
					"f:app.kubernetes.io/instance": map[string]any{}, "f:app.kubernetes.io/name": map[string]any{}}},
					"f:spec": map[string]any{"f:replicas": map[string]any{}, "f:selector": map[string]any{}, "f:template": map[string]any{
						"f:metadata": map[string]any{"f:labels": map[string]any{"f:app.kubernetes.io/name": map[string]any{}}},
						"f:spec": map[string]any{"f:containers": map[string]any{`k:{"name":"podinfo"}`: map[string]any{
							".": map[string]any{}, "f:image": map[string]any{}, "f:name": map[string]any{}, "f:ports": map[string]any{}}}}}}}},
			map[string]any{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1", "subresource": "status",
				"time": "2026-12-05T07:00:01Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:status": map[string]any{
					"f:availableReplicas": map[string]any{}, "f:conditions": map[string]any{}, "f:observedGeneration": map[string]any{},
					"f:readyReplicas": map[string]any{}, "f:replicas": map[string]any{}, "f:updatedReplicas": map[string]any{}}}},
		},
	},
	"spec": map[string]any{
		"replicas":             int64(1),
		"revisionHistoryLimit": int64(10),
		"selector":             map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "podinfo"}},
		"strategy":             map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "podinfo"}},
			"spec": map[string]any{
				"containers": []any{map[string]any{
					"name": "podinfo", "image": "ghcr.io/stefanprodan/podinfo:6.7.0", "imagePullPolicy": "IfNotPresent",
					"ports":     []any{map[string]any{"containerPort": int64(9898), "name": "http", "protocol": "TCP"}},
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}},
				}},
				"restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
				"terminationGracePeriodSeconds": int64(30),
			},
		},
	},
	"status": map[string]any{
		"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1), "readyReplicas": int64(1),
		"availableReplicas": int64(1),
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
				"message": "Deployment has minimum availability.", "lastUpdateTime": "2026-12-05T07:00:01Z", "lastTransitionTime": "2026-12-05T07:00:01Z"},
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
				"message": `ReplicaSet "podinfo-00042-5d4f8b7c9" has successfully progressed.`, "lastUpdateTime": "2026-12-05T07:00:01Z",
				"lastTransitionTime": "2026-12-05T07:00:00Z"},
		},
	},
}

// calibrationRounds is how often one calibration encodes and decodes the object:
// about 0.1 s on this machine.
const calibrationRounds = 2000

// Calibrate times a fixed CPU workload on one goroutine — encoding and decoding a
// Deployment as JSON calibrationRounds times, from a collected heap — and returns the
// fastest of tries: how fast the machine is at that moment. The processes of a run
// share a machine whose speed drifts between runs, hours and days (notes/performance-log.md,
// seventh to ninth rounds) by more than many changes save, so a run's figures are to
// be read with the calibration taken before and after it. On the idle 2-CPU machine
// it repeats within ~1 % (110 ms) over minutes; a hash of a buffer that fits the
// caches repeats within 0.5 % (the CPU's clock is steady), so a drift it shows is in
// work that, like JSON and the API servers', goes through memory.
func Calibrate(tries int) (time.Duration, error) {
	runtime.GC()
	best := time.Duration(0)
	for range max(tries, 1) {
		start := time.Now()
		for range calibrationRounds {
			b, err := json.Marshal(calibrationObject)
			if err != nil {
				return 0, fmt.Errorf("calibration: %w", err)
			}
			var out map[string]any
			if err := json.Unmarshal(b, &out); err != nil {
				return 0, fmt.Errorf("calibration: %w", err)
			}
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}
