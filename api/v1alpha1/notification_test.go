package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReceiverWebhookPath(t *testing.T) {
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return "/hooks/" + hex.EncodeToString(h[:]) }
	cases := map[string]struct {
		token           string
		name, namespace string
		want            string
	}{
		"joined with slashes":               {token: "s3cret", name: "github", namespace: "team-a", want: sum("s3cret/github/team-a")},
		"the token byte for byte":           {token: "s3cret\n", name: "github", namespace: "team-a", want: sum("s3cret\n/github/team-a")},
		"empty token":                       {token: "", name: "a", namespace: "b", want: sum("/a/b")},
		"a token with slashes is the token": {token: "x/y", name: "z", namespace: "n", want: sum("x/y/z/n")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ReceiverWebhookPath([]byte(tc.token), tc.name, tc.namespace)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReceiverWebhookPath (-want +got):\n%s", diff)
			}
			if !IsReceiverWebhookPath(got) {
				t.Errorf("IsReceiverWebhookPath(%q) = false", got)
			}
		})
	}
	// The parts are not concatenated bare: moving a character from the name into the
	// namespace (or the token) changes the path.
	if ReceiverWebhookPath([]byte("t"), "ab", "c") == ReceiverWebhookPath([]byte("t"), "a", "bc") ||
		ReceiverWebhookPath([]byte("ta"), "b", "c") == ReceiverWebhookPath([]byte("t"), "ab", "c") {
		t.Error("two different Receivers share a webhook path")
	}
}

func TestIsReceiverWebhookPath(t *testing.T) {
	hex64 := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := map[string]bool{
		"/hooks/" + hex64:             true,
		"":                            false,
		"/hooks/":                     false,
		"hooks/" + hex64:              false,
		"/hooks/" + hex64[:63]:        false,
		"/hooks/" + hex64 + "0":       false,
		"/hooks/" + hex64[:63] + "A":  false,
		"/hooks/" + hex64[:63] + "g":  false,
		"/hook/" + hex64:              false,
		"/hooks/" + hex64[:62] + "/x": false,
	}
	for path, want := range cases {
		if got := IsReceiverWebhookPath(path); got != want {
			t.Errorf("IsReceiverWebhookPath(%q) = %v, want %v", path, got, want)
		}
	}
}
