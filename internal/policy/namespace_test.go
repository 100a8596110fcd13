package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

const (
	ownUID   types.UID = "0b7f1a52-0000-4000-8000-000000000001"
	laterUID types.UID = "0b7f1a52-0000-4000-8000-000000000002"
)

var releaseCreated = time.Date(2026, 12, 6, 5, 18, 2, 0, time.UTC)

// legacy is a Release created before convoy recorded its namespace's UID; recorded, one with it.
func legacy() Stored { return Stored{Created: releaseCreated} }
func recorded(uid types.UID) Stored {
	return Stored{NamespaceUID: uid, Created: releaseCreated}
}

// namespace is a namespace found, with uid, created d after the Release.
func namespace(uid types.UID, d time.Duration) Namespace {
	return Namespace{Found: true, UID: uid, Created: releaseCreated.Add(d)}
}

func terminating(ns Namespace) Namespace {
	ns.Terminating = true
	return ns
}

func TestOutlivedNamespace(t *testing.T) {
	tests := map[string]struct {
		rel  Stored
		ns   Namespace
		want bool
	}{
		// The namespace's UID recorded: the UID decides, whatever the times.
		"its namespace":         {rel: recorded(ownUID), ns: namespace(ownUID, -time.Minute), want: false},
		"its namespace is gone": {rel: recorded(ownUID), ns: Namespace{}, want: true},
		"a later namespace of its name, 22 s later (seed 1251186771)": {rel: recorded(ownUID), ns: namespace(laterUID, 22*time.Second), want: true},
		"a later namespace, a second later":                           {rel: recorded(ownUID), ns: namespace(laterUID, time.Second), want: true},
		"a later namespace, by a clock behind":                        {rel: recorded(ownUID), ns: namespace(laterUID, -time.Minute), want: true},
		"a later namespace, long after":                               {rel: recorded(ownUID), ns: namespace(laterUID, time.Hour), want: true},
		"its namespace, by a clock ahead past the margin":             {rel: recorded(ownUID), ns: namespace(ownUID, 2*time.Minute), want: false},
		"its namespace is terminating":                                {rel: recorded(ownUID), ns: terminating(namespace(ownUID, -time.Minute)), want: false},
		"a later namespace, terminating in its turn":                  {rel: recorded(ownUID), ns: terminating(namespace(laterUID, 22*time.Second)), want: true},

		// None recorded (created before convoy recorded it): the time rule, with its margin.
		"legacy: the namespace it was created in":                       {rel: legacy(), ns: namespace(ownUID, -time.Minute), want: false},
		"legacy: the namespace is gone":                                 {rel: legacy(), ns: Namespace{}, want: true},
		"legacy: a later namespace of its name":                         {rel: legacy(), ns: namespace(laterUID, 2*time.Minute), want: true},
		"legacy: a later namespace within the margin is not told apart": {rel: legacy(), ns: namespace(laterUID, 22*time.Second), want: false},
		"legacy: a later namespace, just past the margin":               {rel: legacy(), ns: namespace(laterUID, ClockSkewMargin+time.Second), want: true},
		"legacy: its namespace, by a clock ahead by the margin":         {rel: legacy(), ns: namespace(ownUID, ClockSkewMargin), want: false},
		"legacy: its namespace, by a clock ahead by a second":           {rel: legacy(), ns: namespace(ownUID, time.Second), want: false},
		"legacy: its namespace is terminating":                          {rel: legacy(), ns: terminating(namespace(ownUID, -time.Minute)), want: false},
		"legacy: a later namespace, terminating in its turn":            {rel: legacy(), ns: terminating(namespace(laterUID, time.Minute)), want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, OutlivedNamespace(tc.rel, tc.ns)); diff != "" {
				t.Errorf("OutlivedNamespace(%+v, %+v) (-want +got):\n%s", tc.rel, tc.ns, diff)
			}
		})
	}
}

func TestNamespaceUIDToRecord(t *testing.T) {
	tests := map[string]struct {
		rel  Stored
		ns   Namespace
		want types.UID
	}{
		"legacy: its namespace, created well before it":              {rel: legacy(), ns: namespace(ownUID, -time.Hour), want: ownUID},
		"legacy: its namespace, created just past the margin before": {rel: legacy(), ns: namespace(ownUID, -ClockSkewMargin-time.Second), want: ownUID},
		"legacy: a namespace created the margin before it (may be a later one by skewed clocks)": {
			rel: legacy(), ns: namespace(ownUID, -ClockSkewMargin), want: ""},
		"legacy: a namespace created just before it":                  {rel: legacy(), ns: namespace(ownUID, -time.Second), want: ""},
		"legacy: a namespace created 22 s after it (seed 1251186771)": {rel: legacy(), ns: namespace(laterUID, 22*time.Second), want: ""},
		"legacy: a later namespace, past the margin":                  {rel: legacy(), ns: namespace(laterUID, time.Hour), want: ""},
		"legacy: its namespace is terminating":                        {rel: legacy(), ns: terminating(namespace(ownUID, -time.Hour)), want: ""},
		"legacy: the namespace is gone":                               {rel: legacy(), ns: Namespace{}, want: ""},
		"legacy: a namespace read without its UID":                    {rel: legacy(), ns: namespace("", -time.Hour), want: ""},
		"recorded: never recorded again":                              {rel: recorded(ownUID), ns: namespace(ownUID, -time.Hour), want: ""},
		"recorded: not replaced by a later namespace's":               {rel: recorded(ownUID), ns: namespace(laterUID, -time.Hour), want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NamespaceUIDToRecord(tc.rel, tc.ns)); diff != "" {
				t.Errorf("NamespaceUIDToRecord(%+v, %+v) (-want +got):\n%s", tc.rel, tc.ns, diff)
			}
		})
	}
}

func TestHowOutlived(t *testing.T) {
	tests := map[string]struct {
		rel  Stored
		ns   Namespace
		want string
	}{
		"by its UID, a later namespace": {rel: recorded(ownUID), ns: namespace(laterUID, time.Second),
			want: "it was created in the namespace of UID " + string(ownUID) + " (the namespace of that name now has UID " + string(laterUID) + ")"},
		"by its UID, no namespace": {rel: recorded(ownUID), ns: Namespace{},
			want: "it was created in the namespace of UID " + string(ownUID) + " (no namespace of that name exists now)"},
		"by its creation time": {rel: legacy(), ns: namespace(laterUID, time.Hour), want: "it was created at 2026-12-06T05:18:02Z"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, HowOutlived(tc.rel, tc.ns)); diff != "" {
				t.Errorf("HowOutlived (-want +got):\n%s", diff)
			}
		})
	}
}
