package source

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// maxListedVersions caps the versions named in a "no version meets" message.
const maxListedVersions = 20

// candidate is an offered version that parses as semver.
type candidate struct {
	raw string
	v   *semver.Version
}

func rawVersions(cands []candidate) []string {
	out := make([]string, 0, len(cands))
	for _, c := range cands {
		out = append(out, c.raw)
	}
	return out
}

// selectVersion picks the highest of offered that meets want: an exact version
// ("1.2.3", "v1.2.3", also a pre-release), a semver constraint (">=1.0.0 <2.0.0",
// "~1.2", "^1"), or "" for the latest stable version. Offered versions that are not
// semver are ignored. what names the chart for messages.
func selectVersion(offered []string, want, what string) (string, error) {
	var cands []candidate
	for _, o := range offered {
		v, err := semver.NewVersion(o)
		if err != nil {
			continue
		}
		cands = append(cands, candidate{raw: o, v: v})
	}
	// Highest first; equal versions (1.0.0 and v1.0.0) keep a stable order by text.
	sort.SliceStable(cands, func(i, j int) bool {
		if c := cands[i].v.Compare(cands[j].v); c != 0 {
			return c > 0
		}
		return cands[i].raw < cands[j].raw
	})

	want = strings.TrimSpace(want)
	var match func(*semver.Version) bool
	var wantText string
	switch exact, err := semver.StrictNewVersion(strings.TrimPrefix(want, "v")); {
	case want == "":
		match = func(v *semver.Version) bool { return v.Prerelease() == "" }
		wantText = "stable version"
	case err == nil:
		match = func(v *semver.Version) bool {
			return v.Equal(exact) && (exact.Metadata() == "" || v.Metadata() == exact.Metadata())
		}
		wantText = fmt.Sprintf("version %s", want)
	default:
		c, err := semver.NewConstraint(want)
		if err != nil {
			return "", unsupported("chart %s: version %q is neither a semver version nor a constraint: %w; fix spec.chart.version", what, want, err)
		}
		match = c.Check
		wantText = fmt.Sprintf("version that meets %q", want)
	}
	for _, c := range cands {
		if match(c.v) {
			return c.raw, nil
		}
	}
	return "", sourceNotReady("chart %s has no %s; %s", what, wantText, describeOffered(rawVersions(cands)))
}

// describeOffered says which versions a repository offers, highest first.
func describeOffered(versions []string) string {
	switch {
	case len(versions) == 0:
		return "the repository offers no version of it"
	case len(versions) > maxListedVersions:
		return fmt.Sprintf("the repository offers %s and %d more", strings.Join(versions[:maxListedVersions], ", "), len(versions)-maxListedVersions)
	default:
		return fmt.Sprintf("the repository offers %s", strings.Join(versions, ", "))
	}
}
