package releaseset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// regions is the fleet of the override tables: a canary in eu, Clusters in eu and us,
// and one without a region label.
var regions = []v1.Cluster{cluster("eu-1", ring("canary"), region("eu")), cluster("eu-2", region("eu")),
	cluster("us-1", region("us")), cluster("xx-1")}

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func TestClusterValues(t *testing.T) {
	eu := cluster("prod-eu", region("eu"))
	o := func(sel *metav1.LabelSelector, values string) v1.ClusterOverride {
		return v1.ClusterOverride{ClusterSelector: sel, Values: raw(values)}
	}
	all := &metav1.LabelSelector{}
	inEU := &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}
	inUS := &metav1.LabelSelector{MatchLabels: map[string]string{"region": "us"}}
	cases := map[string]struct {
		template  string
		overrides []v1.ClusterOverride
		want      string // the values, or the error
	}{
		"no overrides: the template's values as written": {
			template: `{ "b": 1, "a" : 1.0 }`, want: `{ "b": 1, "a" : 1.0 }`},
		"no override selects the Cluster: the template's values as written": {
			template: `{ "b": 1 }`, overrides: []v1.ClusterOverride{o(inUS, `{"b":2}`)}, want: `{ "b": 1 }`},
		"an override without values changes nothing": {
			template: `{ "b": 1 }`, overrides: []v1.ClusterOverride{{ClusterSelector: all}, o(all, `null`)}, want: `{ "b": 1 }`},
		"an override without selector selects no Cluster": {
			template: `{ "b": 1 }`, overrides: []v1.ClusterOverride{{Values: raw(`{"b":2}`)}}, want: `{ "b": 1 }`},
		"{} selects every Cluster; maps merge key by key, anything else is replaced": {
			template:  `{"image":{"repository":"web","tag":"1.0"},"hosts":["a","b"],"replicas":2}`,
			overrides: []v1.ClusterOverride{o(all, `{"image":{"tag":"1.1"},"hosts":["c"],"replicas":{"min":1}}`)},
			want:      `{"hosts":["c"],"image":{"repository":"web","tag":"1.1"},"replicas":{"min":1}}`},
		"overrides merge in order, the later over the earlier; those that do not select are skipped": {
			template:  `{"a":0,"b":0,"c":0}`,
			overrides: []v1.ClusterOverride{o(all, `{"a":1,"b":1}`), o(inUS, `{"a":9,"c":9}`), o(inEU, `{"b":2}`)},
			want:      `{"a":1,"b":2,"c":0}`},
		"a null is kept, to remove the chart's default as in a values file": {
			template: `{"a":{"b":1},"c":1}`, overrides: []v1.ClusterOverride{o(all, `{"a":null}`)},
			want: `{"a":null,"c":1}`},
		"the Cluster's name and labels replace the references, in nested strings and lists, inside longer strings": {
			template: `{"name":"$(cluster.name)"}`,
			overrides: []v1.ClusterOverride{o(inEU, `{"ingress":{"host":"api.$(cluster.labels['region']).example.com",`+
				`"hosts":["$(cluster.name).example.com",1,true]},"zone":"$(cluster.labels['zone'])","$(cluster.name)":"key"}`)},
			// The template is not substituted, nor are keys; a missing label is "".
			want: `{"$(cluster.name)":"key","ingress":{"host":"api.eu.example.com","hosts":["prod-eu.example.com",1,true]},` +
				`"name":"$(cluster.name)","zone":""}`},
		"a malformed reference is left as written; $$( is a literal $(": {
			template:  `{}`,
			overrides: []v1.ClusterOverride{o(all, `{"a":"$(cluster.namespace)-$(cluster.name)","b":"echo $$(hostname)"}`)},
			want:      `{"a":"$(cluster.namespace)-prod-eu","b":"echo $(hostname)"}`},
		"numbers as written, HTML characters as they are": {
			template: `{"big":12345678901234567890,"f":1.50}`, overrides: []v1.ClusterOverride{o(all, `{"s":"<a&b>"}`)},
			want: `{"big":12345678901234567890,"f":1.50,"s":"<a&b>"}`},
		"a template without values": {
			template: `null`, overrides: []v1.ClusterOverride{o(all, `{"a":1}`)}, want: `{"a":1}`},
		"an override's values that are not an object": {
			template: `{}`, overrides: []v1.ClusterOverride{o(all, `{"a":1}`), o(all, `[1]`)},
			want: "error: spec.clusterOverrides[1].values: not a JSON object of values: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		"a template whose values are not an object, when an override selects the Cluster": {
			template: `"x"`, overrides: []v1.ClusterOverride{o(all, `{"a":1}`)},
			want: "error: spec.template.spec.values: not a JSON object of values: json: cannot unmarshal string into Go value of type map[string]interface {}"},
		"an invalid selector": {
			template: `{}`, overrides: []v1.ClusterOverride{o(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: "Near"}}}, `{}`)},
			want: `error: spec.clusterOverrides[0].clusterSelector: "Near" is not a valid label selector operator`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ClusterValues(raw(tc.template), tc.overrides, &eu)
			s := ""
			if err != nil {
				s = "error: " + err.Error()
			} else {
				s = string(got.Raw)
			}
			if diff := cmp.Diff(tc.want, s); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

// valuesSummary is each write of a plan as "name@revision values", the revisions
// named by revs.
func valuesSummary(p Plan, revs map[string]string) []string {
	var out []string
	name := func(rev string) string {
		if n, ok := revs[rev]; ok {
			return n
		}
		return rev
	}
	for _, r := range append(append([]*v1.Release{}, p.Create...), p.Update...) {
		verb := "create"
		if r.ResourceVersion != "" || r.Generation != 0 {
			verb = "update"
		}
		vals := ""
		if r.Spec.Values != nil {
			vals = string(r.Spec.Values.Raw)
		}
		out = append(out, fmt.Sprintf("%s %s@%s %s overrides=%s", verb, r.Name, name(r.Annotations[v1.AnnotationReleaseSetRevision]), vals,
			r.Annotations[v1.AnnotationReleaseSetOverrides]))
	}
	return out
}

func TestDecideWithOverrides(t *testing.T) {
	hosts := overrides("", `{"host":"$(cluster.name).$(cluster.labels['region']).example.com"}`, "region=eu", `{"replicas":3}`)
	hosts2 := overrides("", `{"host":"$(cluster.name).$(cluster.labels['region']).example.net"}`, "region=eu", `{"replicas":3}`)
	o1 := testSet("web", stages(canary(), manualRest()), hosts)
	o2 := testSet("web", stages(canary(), manualRest()), hosts2)
	revs := map[string]string{revisionOf(o1): "o1", revisionOf(o2): "o2", r1: "r1"}
	allReady := func(at *v1.ReleaseSet) func(*v1.ReleaseSet) []v1.Release {
		return func(s *v1.ReleaseSet) []v1.Release {
			var out []v1.Release
			for _, c := range regions {
				out = append(out, rel(s, c.Name, from(at), ready()))
			}
			return out
		}
	}
	cases := map[string]struct {
		set        *v1.ReleaseSet
		releases   func(*v1.ReleaseSet) []v1.Release
		relabel    map[string]string // Cluster → its new region, after the Releases were written
		want       []string
		stages     []string
		conditions []string
	}{
		"each Cluster's Release gets the template's values, then those of the overrides that select it, its name and labels in them": {
			set: testSet("web", hosts),
			want: []string{
				`create web-eu-1@o1 {"host":"eu-1.eu.example.com","replicas":3} overrides=true`,
				`create web-eu-2@o1 {"host":"eu-2.eu.example.com","replicas":3} overrides=true`,
				`create web-us-1@o1 {"host":"us-1.us.example.com","replicas":1} overrides=true`,
				`create web-xx-1@o1 {"host":"xx-1..example.com","replicas":1} overrides=true`,
			},
			stages: []string{"rest Progressing 4/0/0"}, conditions: progressing,
		},
		"every Release Ready with its values: no write (steady state)": {
			set: o1, releases: allReady(o1),
			stages: []string{"canary Complete 1/1/1", "rest Complete 3/3/3"}, conditions: complete,
		},
		"values formatted otherwise are the same values: no write": {
			set: o1, releases: func(s *v1.ReleaseSet) []v1.Release {
				rels := allReady(o1)(s)
				rels[0].Spec.Values = raw(`{ "replicas": 3, "host": "eu-1.eu.example.com" }`)
				return rels
			},
			stages: []string{"canary Complete 1/1/1", "rest Complete 3/3/3"}, conditions: complete,
		},
		"a changed override is a new revision of every Release, rolled out stage by stage: the canary first": {
			set: o2, releases: allReady(o1),
			want:   []string{`update web-eu-1@o2 {"host":"eu-1.eu.example.net","replicas":3} overrides=true`},
			stages: []string{"canary Progressing 1/0/0", "rest Waiting 3/0/0"}, conditions: progressing,
		},
		"overrides added to a set without: a new revision, the canary first": {
			set: o1, releases: allReady(setR1),
			want:   []string{`update web-eu-1@o1 {"host":"eu-1.eu.example.com","replicas":3} overrides=true`},
			stages: []string{"canary Progressing 1/0/0", "rest Waiting 3/0/0"}, conditions: progressing,
		},
		"overrides removed: back to the template's revision and values, the mark removed, the canary first": {
			set: setR1, releases: allReady(o1),
			want:   []string{`update web-eu-1@r1 {"replicas":1} overrides=`},
			stages: []string{"canary Progressing 1/0/0", "rest Waiting 3/0/0"}, conditions: progressing,
		},
		"values changed by hand at the revision are restored to the Cluster's": {
			set: o1, releases: func(s *v1.ReleaseSet) []v1.Release {
				rels := allReady(o1)(s)
				rels[2].Spec.Values = raw(`{"host":"us-1.us.example.com","replicas":9}`)
				return rels
			},
			want:   []string{`update web-us-1@o1 {"host":"us-1.us.example.com","replicas":1} overrides=true`},
			stages: []string{"canary Complete 1/1/1", "rest Complete 3/3/3"}, conditions: complete,
		},
		"a relabelled Cluster gets its new values at once in a started stage, at the same revision": {
			set: o1, releases: allReady(o1), relabel: map[string]string{"us-1": "eu"},
			want:   []string{`update web-us-1@o1 {"host":"us-1.eu.example.com","replicas":3} overrides=true`},
			stages: []string{"canary Complete 1/1/1", "rest Complete 3/3/3"}, conditions: complete,
		},
		"a new Cluster of a stage that has not started does not copy a sibling at a revision with overrides: it waits": {
			set: o2, releases: func(s *v1.ReleaseSet) []v1.Release { return allReady(o1)(s)[:3] },
			want:   []string{`update web-eu-1@o2 {"host":"eu-1.eu.example.net","replicas":3} overrides=true`},
			stages: []string{"canary Progressing 1/0/0", "rest Waiting 3/0/0"}, conditions: progressing,
		},
		"a new Cluster of a stage that has not started gets its sibling's revision, computed for it, when the sibling is at the set's": {
			set: o1, releases: func(s *v1.ReleaseSet) []v1.Release {
				return []v1.Release{rel(s, "eu-1", notReady()), rel(s, "eu-2", ready())}
			},
			want: []string{`create web-us-1@o1 {"host":"us-1.us.example.com","replicas":1} overrides=true`,
				`create web-xx-1@o1 {"host":"xx-1..example.com","replicas":1} overrides=true`},
			stages: []string{"canary Progressing 1/1/0", "rest Waiting 3/1/1"}, conditions: progressing,
		},
		"an override with an invalid selector writes nothing and says so": {
			set: testSet("web", func(s *v1.ReleaseSet) {
				s.Spec.ClusterOverrides = []v1.ClusterOverride{{ClusterSelector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: "Near"}}}, Values: raw(`{}`)}}
			}),
			releases:   allReady(setR1),
			conditions: []string{"Ready=False/InvalidSpec", "Progressing=False/InvalidSpec", "Halted=False/NotHalted"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var releases []v1.Release
			if tc.releases != nil {
				releases = tc.releases(tc.set)
			}
			clusters := regions
			if tc.relabel != nil {
				clusters = nil
				for _, c := range regions {
					c = *c.DeepCopy()
					if r, ok := tc.relabel[c.Name]; ok {
						c.Labels["region"] = r
					}
					clusters = append(clusters, c)
				}
			}
			p := Decide(Input{Set: tc.set, Clusters: clusters, Releases: releases})
			if diff := cmp.Diff(tc.want, valuesSummary(p, revs)); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			s := summarize(p)
			if diff := cmp.Diff(tc.stages, s.Stages); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.conditions, s.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if len(p.Delete) > 0 {
				t.Errorf("plan deletes %d Releases, want none", len(p.Delete))
			}
			if strings.Contains(name, "says so") && !strings.Contains(p.Status.Conditions[0].Message, "spec.clusterOverrides[0].clusterSelector") {
				t.Errorf("Ready's message %q does not name the override", p.Status.Conditions[0].Message)
			}
		})
	}
}
