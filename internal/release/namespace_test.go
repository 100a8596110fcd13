package release

import (
	"testing"
	"time"
)

func TestOutlivedNamespace(t *testing.T) {
	created := time.Date(2026, 12, 6, 5, 18, 2, 0, time.UTC)
	tests := map[string]struct {
		ns   Namespace
		want bool
	}{
		"the namespace it was created in":                             {ns: Namespace{Found: true, Created: created.Add(-time.Minute)}, want: false},
		"the namespace is gone":                                       {ns: Namespace{}, want: true},
		"a later namespace of its name":                               {ns: Namespace{Found: true, Created: created.Add(2 * time.Minute)}, want: true},
		"a later namespace within the margin (seed 1251186771: 22 s)": {ns: Namespace{Found: true, Created: created.Add(22 * time.Second)}, want: false},
		"a later namespace, just past the margin":                     {ns: Namespace{Found: true, Created: created.Add(ClockSkewMargin + time.Second)}, want: true},
		"its namespace, by a clock ahead by the margin":               {ns: Namespace{Found: true, Created: created.Add(ClockSkewMargin)}, want: false},
		"its namespace, by a clock ahead by a second":                 {ns: Namespace{Found: true, Created: created.Add(time.Second)}, want: false},
		"its namespace is terminating":                                {ns: Namespace{Found: true, Created: created.Add(-time.Minute), Terminating: true}, want: false},
		"a later namespace, terminating in its turn":                  {ns: Namespace{Found: true, Created: created.Add(time.Minute), Terminating: true}, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := OutlivedNamespace(created, tc.ns); got != tc.want {
				t.Errorf("OutlivedNamespace(%s, %+v) = %v, want %v", created, tc.ns, got, tc.want)
			}
		})
	}
}
