package registry

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReadyCell(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: "Other", Status: metav1.ConditionFalse, Reason: "X"}, {Type: "Ready", Status: status, Reason: reason}}
	}
	cases := map[string]struct {
		conditions []metav1.Condition
		want       string
	}{
		"no conditions":              {want: ""},
		"no Ready":                   {conditions: []metav1.Condition{{Type: "Other", Status: metav1.ConditionTrue, Reason: "X"}}, want: ""},
		"True shows True":            {conditions: ready(metav1.ConditionTrue, "Delivered"), want: "True"},
		"False shows the reason":     {conditions: ready(metav1.ConditionFalse, "DeliveryFailed"), want: "DeliveryFailed"},
		"Unknown shows the reason":   {conditions: ready(metav1.ConditionUnknown, "SecretNotFound"), want: "SecretNotFound"},
		"no reason shows the status": {conditions: ready(metav1.ConditionFalse, ""), want: "False"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ReadyCell(tc.conditions); got != tc.want {
				t.Errorf("ReadyCell = %q, want %q", got, tc.want)
			}
		})
	}
}
