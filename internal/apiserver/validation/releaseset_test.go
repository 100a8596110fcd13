package validation

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/releaseset/clustervars"
)

func validReleaseSet() *convoyv1alpha1.ReleaseSet {
	return &convoyv1alpha1.ReleaseSet{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "team-a"},
		Spec: convoyv1alpha1.ReleaseSetSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			Template: convoyv1alpha1.ReleaseTemplate{
				Metadata: convoyv1alpha1.ReleaseTemplateMetadata{Labels: map[string]string{"team": "a"}},
				Spec:     validRelease().Spec,
			},
			Strategy: convoyv1alpha1.ReleaseSetStrategy{Stages: []convoyv1alpha1.Stage{
				{Name: "canary", ClusterSelector: selector("ring", "canary"), MaxParallel: ptrTo(intstr.FromInt32(1))},
				{Name: "rest", Approval: convoyv1alpha1.ApprovalManual},
			}},
		},
	}
}

func selector(key, value string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
}

func ptrTo[T any](v T) *T { return &v }

func withStages(stages ...convoyv1alpha1.Stage) func(*convoyv1alpha1.ReleaseSet) {
	return func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Strategy.Stages = stages }
}

func withMaxRemovals(v intstr.IntOrString) func(*convoyv1alpha1.ReleaseSet) {
	return func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Strategy.MaxRemovals = &v }
}

func TestReleaseSet(t *testing.T) {
	canary := convoyv1alpha1.Stage{Name: "canary", ClusterSelector: selector("ring", "canary")}
	cases := map[string]struct {
		mutate func(*convoyv1alpha1.ReleaseSet)
		fields []string // the error fields, none when valid
	}{
		"valid":                  {mutate: func(*convoyv1alpha1.ReleaseSet) {}},
		"no selector, no stages": {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.ClusterSelector, s.Spec.Strategy.Stages = nil, nil }},
		"last stage with a selector named otherwise": {mutate: withStages(canary,
			convoyv1alpha1.Stage{Name: "eu", ClusterSelector: selector("region", "eu")})},
		"percent":         {mutate: withStages(convoyv1alpha1.Stage{Name: "all", MaxParallel: ptrTo(intstr.FromString("25%"))})},
		"maxRemovals 0":   {mutate: withMaxRemovals(intstr.FromInt32(0))},
		"maxRemovals 0%":  {mutate: withMaxRemovals(intstr.FromString("0%"))},
		"maxRemovals 3":   {mutate: withMaxRemovals(intstr.FromInt32(3))},
		"maxRemovals 40%": {mutate: withMaxRemovals(intstr.FromString("40%"))},
		"paused":          {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Paused = true }},
		"100 percent":     {mutate: withStages(convoyv1alpha1.Stage{Name: "all", MaxParallel: ptrTo(intstr.FromString("100%"))})},
		"longest name":    {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Name = strings.Repeat("a", MaxReleaseSetNameLength) }},
		"name too long for its Releases": {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Name = strings.Repeat("a", MaxReleaseSetNameLength+1) },
			fields: []string{"metadata.name"}},
		"template with a cluster": {mutate: func(s *convoyv1alpha1.ReleaseSet) { s.Spec.Template.Spec.Cluster = "prod-eu" },
			fields: []string{"spec.template.spec.cluster"}},
		"template spec validated as a Release's": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Spec.Chart.Repository = "git://x"
			s.Spec.Template.Spec.SyncPolicy.Interval = dur("-1s")
		}, fields: []string{"spec.template.spec.chart.repository", "spec.template.spec.syncPolicy.interval"}},
		"template label that is not a label": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Labels = map[string]string{"team": "a b"}
		}, fields: []string{"spec.template.metadata.labels"}},
		"template with the set's own label and annotation": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Labels = map[string]string{convoyv1alpha1.LabelCluster: "x"}
			s.Spec.Template.Metadata.Annotations = map[string]string{convoyv1alpha1.AnnotationReleaseSetRevision: "sha256:00"}
		}, fields: []string{"spec.template.metadata.labels[convoy.kumodo.io/cluster]",
			"spec.template.metadata.annotations[convoy.kumodo.io/release-set-revision]"}},
		"template with a sync request": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedAt: "2026-12-02T10:04:05Z"}
		}, fields: []string{"spec.template.metadata.annotations[convoy.kumodo.io/sync-requested-at]"}},
		"template with a bound sync request": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Annotations = map[string]string{convoyv1alpha1.AnnotationSyncRequestedRender: "sha256:" + strings.Repeat("0f", 32)}
		}, fields: []string{"spec.template.metadata.annotations[convoy.kumodo.io/sync-requested-render]"}},
		"invalid cluster selector": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.ClusterSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}
		}, fields: []string{"spec.clusterSelector.matchExpressions[0].operator"}},
		"invalid stage selector": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", ClusterSelector: selector("ring", "not a value")}),
			fields: []string{"spec.strategy.stages[0].clusterSelector.matchLabels"}},
		"duplicate stage names": {mutate: withStages(canary, convoyv1alpha1.Stage{Name: "canary"}),
			fields: []string{"spec.strategy.stages[1].name"}},
		"stage without a name": {mutate: withStages(convoyv1alpha1.Stage{}), fields: []string{"spec.strategy.stages[0].name"}},
		"stage name not a DNS label": {mutate: withStages(convoyv1alpha1.Stage{Name: "Canary_1"}),
			fields: []string{"spec.strategy.stages[0].name"}},
		"rest before the last stage": {mutate: withStages(convoyv1alpha1.Stage{Name: "rest", ClusterSelector: selector("a", "b")}, canary),
			fields: []string{"spec.strategy.stages[0].name"}},
		"rest with a selector": {mutate: withStages(canary, convoyv1alpha1.Stage{Name: "rest", ClusterSelector: selector("a", "b")}),
			fields: []string{"spec.strategy.stages[1].name"}},
		"a stage without a selector before the last": {mutate: withStages(convoyv1alpha1.Stage{Name: "all"}, canary),
			fields: []string{"spec.strategy.stages[0].clusterSelector"}},
		"maxParallel 0": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromInt32(0))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel 0%": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("0%"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel 101%": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("101%"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel a word": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("half"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel a number in a string": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("3"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxParallel +5%": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", MaxParallel: ptrTo(intstr.FromString("+5%"))}),
			fields: []string{"spec.strategy.stages[0].maxParallel"}},
		"maxRemovals -1":                          {mutate: withMaxRemovals(intstr.FromInt32(-1)), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals -5%":                         {mutate: withMaxRemovals(intstr.FromString("-5%")), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals 101%":                        {mutate: withMaxRemovals(intstr.FromString("101%")), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals a word":                      {mutate: withMaxRemovals(intstr.FromString("few")), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals a number in a string":        {mutate: withMaxRemovals(intstr.FromString("3")), fields: []string{"spec.strategy.maxRemovals"}},
		"maxRemovals 25 percent without the sign": {mutate: withMaxRemovals(intstr.FromString("25 %")), fields: []string{"spec.strategy.maxRemovals"}},
		"unknown approval": {mutate: withStages(convoyv1alpha1.Stage{Name: "a", Approval: "Sometimes"}),
			fields: []string{"spec.strategy.stages[0].approval"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := validReleaseSet()
			tc.mutate(s)
			var got []string
			for _, e := range ReleaseSet(s, ReleaseOptions{}) {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\nerrors: %v", diff, ReleaseSet(s, ReleaseOptions{}))
			}
			old := validReleaseSet()
			s.Name, s.ResourceVersion, old.ResourceVersion = old.Name, "1", "1"
			if tc.fields == nil {
				if errs := ReleaseSetUpdate(s, old, ReleaseOptions{}); len(errs) > 0 {
					t.Errorf("ReleaseSetUpdate: %v", errs)
				}
			}
		})
	}
}

func withOverrides(o ...convoyv1alpha1.ClusterOverride) func(*convoyv1alpha1.ReleaseSet) {
	return func(s *convoyv1alpha1.ReleaseSet) { s.Spec.ClusterOverrides = o }
}

func override(sel *metav1.LabelSelector, values string) convoyv1alpha1.ClusterOverride {
	o := convoyv1alpha1.ClusterOverride{ClusterSelector: sel}
	if values != "" {
		o.Values = &runtime.RawExtension{Raw: []byte(values)}
	}
	return o
}

func TestReleaseSetClusterOverrides(t *testing.T) {
	all := &metav1.LabelSelector{}
	cases := map[string]struct {
		mutate func(*convoyv1alpha1.ReleaseSet)
		errs   []string // "field: detail" of each error, none when valid
	}{
		"both references, in longer strings, nested and in lists; a literal $$(": {mutate: withOverrides(
			override(selector("region", "eu"), `{"ingress":{"host":"api.$(cluster.labels['region']).example.com",`+
				`"hosts":["$(cluster.name).example.com"]},"zone":"$(cluster.labels['topology.kubernetes.io/zone'])","cmd":"echo $$(hostname)"}`))},
		"{} selects every Cluster; values may be left out": {mutate: withOverrides(override(all, `{"a":1}`), override(all, ""))},
		"null values":        {mutate: withOverrides(override(all, `null`))},
		"the most overrides": {mutate: withOverrides(slices.Repeat([]convoyv1alpha1.ClusterOverride{override(all, `{}`)}, MaxClusterOverrides)...)},
		"one override too many": {mutate: withOverrides(slices.Repeat([]convoyv1alpha1.ClusterOverride{override(all, `{}`)}, MaxClusterOverrides+1)...),
			errs: []string{"spec.clusterOverrides: must have at most 100 items"}},
		"no selector": {mutate: withOverrides(override(nil, `{"a":1}`)),
			errs: []string{"spec.clusterOverrides[0].clusterSelector: the Clusters (among the set's) that get these values; {} selects every Cluster of the set"}},
		"a selector that does not parse": {mutate: withOverrides(override(&metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: "Near"}}}, `{}`)),
			errs: []string{`spec.clusterOverrides[0].clusterSelector.matchExpressions[0].operator: not a valid selector operator`}},
		"values that are a list": {mutate: withOverrides(override(all, `[1,2]`)),
			errs: []string{"spec.clusterOverrides[0].values: must be a JSON object of values, as template.spec.values: json: cannot unmarshal array into Go value of type map[string]interface {}"}},
		"values that are a string": {mutate: withOverrides(override(all, `"a"`)),
			errs: []string{"spec.clusterOverrides[0].values: must be a JSON object of values, as template.spec.values: json: cannot unmarshal string into Go value of type map[string]interface {}"}},
		"a template whose values are not an object, under overrides": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Spec.Values = &runtime.RawExtension{Raw: []byte(`[1]`)}
			s.Spec.ClusterOverrides = []convoyv1alpha1.ClusterOverride{override(all, `{}`)}
		}, errs: []string{"spec.template.spec.values: must be a JSON object of values when spec.clusterOverrides merge over it: json: cannot unmarshal array into Go value of type map[string]interface {}"}},
		"references that are not $(cluster.name) or $(cluster.labels['<key>'])": {mutate: withOverrides(
			override(all, `{"a":{"b":["ok","$(cluster.namespace)"]},"c":"$(cluster.labels[\"region\"])","d":"echo $(hostname","e":"$(cluster.labels['a b'])"}`)),
			errs: []string{
				`spec.clusterOverrides[0].values.a.b[1]: "$(cluster.namespace)" is not a reference the set replaces; use ` + clustervars.Allowed,
				`spec.clusterOverrides[0].values.c: "$(cluster.labels[\"region\"])" is not a reference the set replaces; use ` + clustervars.Allowed,
				`spec.clusterOverrides[0].values.d: "$(hostname" (without its ")") is not a reference the set replaces; use ` + clustervars.Allowed,
				`spec.clusterOverrides[0].values.e: $(cluster.labels['a b']): "a b" is not a label key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			}},
		"the template's references are not checked (they are not replaced)": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Spec.Values = &runtime.RawExtension{Raw: []byte(`{"cmd":"echo $(hostname)"}`)}
			s.Spec.ClusterOverrides = []convoyv1alpha1.ClusterOverride{override(all, `{}`)}
		}},
		"the overrides mark is the set's": {mutate: func(s *convoyv1alpha1.ReleaseSet) {
			s.Spec.Template.Metadata.Annotations = map[string]string{convoyv1alpha1.AnnotationReleaseSetOverrides: "true"}
		}, errs: []string{"spec.template.metadata.annotations[convoy.kumodo.io/release-set-overrides]: written by the ReleaseSet or by each Release's own /sync, not by the template"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := validReleaseSet()
			tc.mutate(s)
			var got []string
			for _, e := range ReleaseSet(s, ReleaseOptions{}) {
				got = append(got, e.Field+": "+e.Detail)
			}
			if diff := cmp.Diff(tc.errs, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
