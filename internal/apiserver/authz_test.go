package apiserver

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// askLog is a delegate authorizer that answers from a table of (verb, resource,
// subresource, name) → decision and records what it was asked.
type askLog struct {
	allow map[string]bool
	asked []string
}

func (a *askLog) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	key := attrs.GetVerb() + " " + attrs.GetNamespace() + "/" + attrs.GetResource() + "/" + attrs.GetSubresource() + "/" + attrs.GetName()
	if !attrs.IsResourceRequest() {
		key = attrs.GetVerb() + " " + attrs.GetPath()
	}
	a.asked = append(a.asked, key)
	if a.allow[key] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (a *askLog) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

func (a *askLog) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// A request for one named object is first asked for every name; only what that does
// not allow is asked as it is, and the answer is the delegate's for the request.
func TestAnyNameFirst(t *testing.T) {
	u := &user.DefaultInfo{Name: "convoy-controller"}
	named := authorizer.AttributesRecord{User: u, Verb: "patch", Namespace: "team-a", APIGroup: "convoy.kumodo.io",
		Resource: "releases", Subresource: "status", Name: "podinfo", ResourceRequest: true}
	nameless := named
	nameless.Name, nameless.Verb = "", "create"
	nonResource := authorizer.AttributesRecord{User: u, Verb: "get", Path: "/healthz"}
	cases := map[string]struct {
		attrs     authorizer.Attributes
		allow     []string
		want      authorizer.Decision
		wantAsked []string
	}{
		"named, every name allowed: one question, without the name": {
			attrs: named, allow: []string{"patch team-a/releases/status/"},
			want: authorizer.DecisionAllow, wantAsked: []string{"patch team-a/releases/status/"},
		},
		"named, only this name allowed (resourceNames): asked again with the name": {
			attrs: named, allow: []string{"patch team-a/releases/status/podinfo"},
			want: authorizer.DecisionAllow, wantAsked: []string{"patch team-a/releases/status/", "patch team-a/releases/status/podinfo"},
		},
		"named, nothing allowed: denied after both questions": {
			attrs: named, want: authorizer.DecisionNoOpinion,
			wantAsked: []string{"patch team-a/releases/status/", "patch team-a/releases/status/podinfo"},
		},
		"no name (create, list): asked as it is": {
			attrs: nameless, allow: []string{"create team-a/releases/status/"},
			want: authorizer.DecisionAllow, wantAsked: []string{"create team-a/releases/status/"},
		},
		"not a resource request: asked as it is": {
			attrs: nonResource, allow: []string{"get /healthz"},
			want: authorizer.DecisionAllow, wantAsked: []string{"get /healthz"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			log := &askLog{allow: map[string]bool{}}
			for _, k := range tc.allow {
				log.allow[k] = true
			}
			got, _, err := anyNameFirst{log}.Authorize(context.Background(), tc.attrs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Authorize: decision %v, want %v", got, tc.want)
			}
			if d := cmp.Diff(tc.wantAsked, log.asked); d != "" {
				t.Errorf("Authorize: questions to the delegate (-want +got):\n%s", d)
			}
			log.asked = nil
			cd := anyNameFirst{log}.ConditionsAwareAuthorize(context.Background(), tc.attrs)
			if cd.IsAllow() != (tc.want == authorizer.DecisionAllow) {
				t.Errorf("ConditionsAwareAuthorize: allowed %v, want %v", cd.IsAllow(), tc.want == authorizer.DecisionAllow)
			}
			if d := cmp.Diff(tc.wantAsked, log.asked); d != "" {
				t.Errorf("ConditionsAwareAuthorize: questions to the delegate (-want +got):\n%s", d)
			}
		})
	}
}
