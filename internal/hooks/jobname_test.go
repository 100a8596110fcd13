package hooks

import (
	"strings"
	"testing"
)

func TestJobName(t *testing.T) {
	ref := "sha256:9a2b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f"
	long := strings.Repeat("a", 40)
	cases := map[string]struct {
		release, hook, want string
	}{
		"the design's form":      {release: "podinfo", hook: "migrate", want: "podinfo-migrate-9a2b0c1d2e"},
		"lowercase, a DNS label": {release: "web.v2", hook: "Seed_DB", want: "web-v2-seed-db-9a2b0c1d2e"},
		"too long: cut, with a hash of the whole": {
			release: long, hook: long,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := JobName(tc.release, tc.hook, ref)
			if name == "too long: cut, with a hash of the whole" {
				// The hash is checked for length and distinctness, not its digits.
				if len(got) != 63 || !strings.HasPrefix(got, (long + "-" + long)[:43]+"-") || !strings.HasSuffix(got, "-9a2b0c1d2e") {
					t.Errorf("JobName() = %q (%d characters)", got, len(got))
				}
				if other := JobName(tc.release, tc.hook+"b", ref); other == got {
					t.Errorf("two long hook names give the same Job name %q", got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("JobName() = %q, want %q", got, tc.want)
			}
		})
	}
}
