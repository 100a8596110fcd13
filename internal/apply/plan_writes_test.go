package apply

import "testing"

// Plan.Writes: only a plan whose every object the dry run found unchanged, and that
// Helm no longer manages, writes nothing (the gates are then not read again before
// a write: decision 0232).
func TestPlanWrites(t *testing.T) {
	tests := []struct {
		name    string
		objects []*planned
		want    bool
	}{
		{"no objects", nil, false},
		{"all unchanged", []*planned{{state: unchanged}, {state: unchanged}}, false},
		{"one created", []*planned{{state: unchanged}, {state: created}}, true},
		{"one configured", []*planned{{state: configured}}, true},
		{"one unchecked (a forced sync)", []*planned{{state: unchecked}}, true},
		{"one existing, not compared", []*planned{{state: existing}}, true},
		{"unchanged but Helm manages fields", []*planned{{state: unchanged, helm: true}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&Plan{objects: tt.objects}).Writes(); got != tt.want {
				t.Errorf("Writes() = %v, want %v", got, tt.want)
			}
		})
	}
}
