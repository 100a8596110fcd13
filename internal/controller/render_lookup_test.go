package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/testenv"
)

// Decision 0062, lookup against the target cluster: a password generated once and
// kept through lookup (the pattern of widely used database charts) stays the same
// over reconciles and over an upgrade, with one render; a lookup of a Secret in
// another namespace finds nothing, with a Warning event, although the identity that
// applies could read it.
func TestLookupKeepsThePasswordAndStaysInItsNamespace(t *testing.T) {
	e := newEnv(t, envOptions{resync: time.Second})
	other := testenv.Namespace(t, e.ctx, e.client, "other", nil)
	theirs := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "their-secret"},
		Data:       map[string][]byte{"password": []byte("not-yours")},
	}
	if err := e.client.Create(e.ctx, theirs); err != nil {
		t.Fatal(err)
	}
	e.createRelease("db", chartName("lookup"), automatic(), interval(time.Second),
		values(fmt.Sprintf(`{"otherNamespace":%q,"otherSecret":"their-secret"}`, other)))
	first := e.waitApplied("db", "True", v1.ReasonApplied).Status.Render.Ref
	password := string(e.secret("db-auth").Data["password"])
	if len(password) != 20 {
		t.Fatalf("password %q, want a generated one", password)
	}
	settings := e.configMap("db-settings")
	if settings.Data["otherFound"] != "false" || settings.Data["otherPassword"] != "" || settings.Data["namespaceFound"] != "true" {
		t.Errorf("ConfigMap db-settings %v: want the other namespace's Secret not found, the target namespace found", settings.Data)
	}
	e.eventually("a RenderWarning about the refused lookup", func() (bool, string) {
		got := e.renderWarnings("db", "was refused")
		return len(got) == 1 && strings.Contains(got[0], other), fmt.Sprintf("%q", got)
	})

	// The Secret the first render created is what its lookup reads now: the chart is
	// rendered again, keeps the password, and so gives the same render.
	e.eventually("the Render to record that its lookup found the Secret", func() (bool, string) {
		rs := e.renders("db")
		if len(rs) != 1 {
			return false, fmt.Sprintf("%d Renders", len(rs))
		}
		var reads []render.LookupRead
		_ = json.Unmarshal([]byte(rs[0].Annotations[v1.AnnotationLookups]), &reads)
		for _, r := range reads {
			if r.Kind == "Secret" && r.Name == "db-auth" && r.Digest != "" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("lookups %v", rs[0].Annotations[v1.AnnotationLookups])
	})
	e.waitReconciled("db", e.reconciles("db")+3)
	if got := e.release("db").Status.Render.Ref; got != first {
		t.Errorf("render %s, want %s still", got, first)
	}
	if got := string(e.secret("db-auth").Data["password"]); got != password {
		t.Errorf("password %q after reconciles, want %q", got, password)
	}

	e.update("db", values(fmt.Sprintf(`{"greeting":"hi","otherNamespace":%q,"otherSecret":"their-secret"}`, other)))
	e.waitConfigMap("db-settings", "greeting", "hi")
	if got := string(e.secret("db-auth").Data["password"]); got != password {
		t.Errorf("password %q after an upgrade, want %q kept", got, password)
	}
	if got := e.configMap("db-settings").Data["otherPassword"]; got != "" {
		t.Errorf("the other namespace's password %q reached the render", got)
	}
}
