package receiver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// TestDesiredStatus: the path follows the token, Ready says whether the server answers
// it, observedGeneration follows the generation and lastCall stays as it is.
func TestDesiredStatus(t *testing.T) {
	token := []byte("tok")
	path := v1.ReceiverWebhookPath(token, "gh", "team")
	last := &v1.ReceiverCall{Result: "push: refreshing 1 Release and 0 ReleaseSets"}
	rcv := func(status v1.ReceiverStatus) *v1.Receiver {
		return &v1.Receiver{
			ObjectMeta: metav1.ObjectMeta{Name: "gh", Namespace: "team", Generation: 3},
			Spec:       v1.ReceiverSpec{Type: v1.ReceiverGitHub, SecretRef: v1.LocalObjectReference{Name: "gh-token"}},
			Status:     status,
		}
	}
	type want struct {
		path, status, reason string
	}
	for _, tc := range []struct {
		name                string
		old                 v1.ReceiverStatus
		secret, key, server bool
		token               []byte
		want                want
	}{
		{"serving", v1.ReceiverStatus{}, true, true, true, token, want{path, "True", v1.ReasonServing}},
		{"no server", v1.ReceiverStatus{}, true, true, false, token, want{path, "False", v1.ReasonReceiverServerDisabled}},
		{"no Secret", v1.ReceiverStatus{WebhookPath: path}, false, false, true, nil, want{"", "False", v1.ReasonSecretNotFound}},
		{"no key", v1.ReceiverStatus{WebhookPath: path}, true, false, true, nil, want{"", "False", v1.ReasonSecretNotFound}},
		{"empty token", v1.ReceiverStatus{}, true, true, true, []byte{}, want{"", "False", v1.ReasonSecretNotFound}},
		{"token changed", v1.ReceiverStatus{WebhookPath: v1.ReceiverWebhookPath([]byte("old"), "gh", "team"), LastCall: last},
			true, true, true, token, want{path, "True", v1.ReasonServing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rcv(tc.old)
			got := DesiredStatus(r, tc.secret, tc.key, tc.token, tc.server)
			ready := got.Conditions[0]
			gotWant := want{got.WebhookPath, string(ready.Status), ready.Reason}
			if diff := cmp.Diff(tc.want, gotWant, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.ObservedGeneration != 3 || ready.ObservedGeneration != 3 || ready.Message == "" {
				t.Errorf("observedGeneration %d, Ready %+v: want generation 3 and a message", got.ObservedGeneration, ready)
			}
			if diff := cmp.Diff(tc.old.LastCall, got.LastCall); diff != "" {
				t.Errorf("lastCall changed (-old +new):\n%s", diff)
			}
			// Nothing to write when the status is already this.
			if !statusEqual(got, DesiredStatus(rcv(got), tc.secret, tc.key, tc.token, tc.server)) {
				t.Error("a second reconcile would write again")
			}
			if statusEqual(tc.old, got) {
				t.Error("statusEqual finds no change from the old status")
			}
		})
	}
}
