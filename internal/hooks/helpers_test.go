package hooks

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time {
	t := metav1.NewTime(t0.Add(d))
	return &t
}
