package chaos

import (
	"fmt"
	"slices"
	"strings"
)

// parseKinds reads -kinds: "all", "network" (every kind that kills no process), or a
// comma-separated list of kinds as the report names them.
func parseKinds(s string) ([]faultKind, error) {
	switch s {
	case "all", "":
		return faultKinds, nil
	case "network":
		var out []faultKind
		for _, k := range faultKinds {
			if _, kills := processFaults[k]; !kills {
				out = append(out, k)
			}
		}
		return out, nil
	}
	var out []faultKind
	for _, w := range strings.Split(s, ",") {
		k := faultKind(strings.TrimSpace(w))
		if !slices.Contains(faultKinds, k) {
			return nil, fmt.Errorf("-kinds: %q is not a fault kind; the kinds are all, network, or some of: %s", w, joinKinds(faultKinds))
		}
		out = append(out, k)
	}
	return out, nil
}

func joinKinds(ks []faultKind) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = string(k)
	}
	return strings.Join(parts, ", ")
}
