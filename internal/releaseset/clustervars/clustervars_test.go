package clustervars

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	labels := map[string]string{"region": "eu-west", "topology.kubernetes.io/zone": "a"}
	cases := map[string]struct{ in, want string }{
		"no reference":                    {in: "plain", want: "plain"},
		"the name":                        {in: "$(cluster.name)", want: "prod-eu"},
		"a label inside a longer string":  {in: "api.$(cluster.labels['region']).example.com", want: "api.eu-west.example.com"},
		"a prefixed label key":            {in: "$(cluster.labels['topology.kubernetes.io/zone'])", want: "a"},
		"a missing label is empty":        {in: "x-$(cluster.labels['tier'])-y", want: "x--y"},
		"several references":              {in: "$(cluster.name)/$(cluster.labels['region'])/$(cluster.name)", want: "prod-eu/eu-west/prod-eu"},
		"an escaped reference":            {in: "$$(cluster.name) is $(cluster.name)", want: "$(cluster.name) is prod-eu"},
		"a shell substitution escaped":    {in: "echo $$(hostname)", want: "echo $(hostname)"},
		"a lone dollar":                   {in: "costs $5 $", want: "costs $5 $"},
		"malformed: another field":        {in: "$(cluster.namespace)-$(cluster.name)", want: "$(cluster.namespace)-prod-eu"},
		"malformed: double quotes":        {in: `$(cluster.labels["region"])`, want: `$(cluster.labels["region"])`},
		"malformed: not a label key":      {in: "$(cluster.labels['a b'])", want: "$(cluster.labels['a b'])"},
		"malformed: unclosed":             {in: "$(cluster.name", want: "$(cluster.name"},
		"malformed: unclosed label":       {in: "$(cluster.labels['region'", want: "$(cluster.labels['region'"},
		"malformed: a shell substitution": {in: "echo $(hostname)", want: "echo $(hostname)"},
	}
	for name, tc := range cases {
		if got := Expand(tc.in, "prod-eu", labels); got != tc.want {
			t.Errorf("%s: Expand(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
}

func TestProblems(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []string
	}{
		"fine":                 {in: "api.$(cluster.labels['region']).example.com/$(cluster.name) $$(x) $5"},
		"prefixed label key":   {in: "$(cluster.labels['topology.kubernetes.io/zone'])"},
		"another field":        {in: "$(cluster.namespace)", want: []string{`"$(cluster.namespace)" is not a reference the set replaces; use ` + Allowed}},
		"a shell substitution": {in: "echo $(hostname)", want: []string{`"$(hostname)" is not a reference the set replaces; use ` + Allowed}},
		"unclosed":             {in: "$(cluster.name", want: []string{`"$(cluster.name" (without its ")") is not a reference the set replaces; use ` + Allowed}},
		"not a label key": {in: "$(cluster.labels['a b'])", want: []string{
			`$(cluster.labels['a b']): "a b" is not a label key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		"two problems": {in: "$(a) and $(b)", want: []string{
			`"$(a)" is not a reference the set replaces; use ` + Allowed, `"$(b)" is not a reference the set replaces; use ` + Allowed}},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, Problems(tc.in)); diff != "" {
			t.Errorf("%s: Problems(%q) (-want +got):\n%s", name, tc.in, diff)
		}
	}
}
