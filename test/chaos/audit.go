package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"kumodo.io/convoy/internal/localcluster"
)

// Whose writes the quiet window counts. kube-apiserver's request metrics say what
// was written, not by whom: a write of kube-controller-manager (the root CA
// ConfigMap of a namespace, a Job's status) or of kube-apiserver itself after a
// restart counted as convoy's. The audit log of both control planes
// (localcluster.Options.AuditWrites) names each write's user agent: convoy's
// processes run the convoy binary, whose requests carry client-go's default user
// agent "convoy/<version> (…)" or a name of convoy's own ("convoy-observer").

// convoyUserAgents are how the user agents of convoy's requests start.
var convoyUserAgents = []string{"convoy/", "convoy-"}

// attributeWrites splits the writes of events to resources (dry runs left out)
// into convoy's, counted by "<verb> <resource>[/<subresource>]" with prefix before
// the key, and the others', one line each for the log.
func attributeWrites(events []localcluster.AuditEvent, resources []string, prefix string) (convoys map[string]float64, others []string) {
	convoys = map[string]float64{}
	for _, e := range events {
		if e.DryRun || !slices.Contains(resources, e.Resource) {
			continue
		}
		key := e.Verb + " " + e.Resource
		if e.Subresource != "" {
			key += "/" + e.Subresource
		}
		if slices.ContainsFunc(convoyUserAgents, func(p string) bool { return strings.HasPrefix(e.UserAgent, p) }) {
			convoys[prefix+key]++
			continue
		}
		others = append(others, fmt.Sprintf("%s%s %s/%s (%d) by %s as %q at %s",
			prefix, key, e.Namespace, e.Name, e.Code, e.User, e.UserAgent, e.At.Format(time.RFC3339Nano)))
	}
	return convoys, others
}

// quietKubeWrites reads the audit logs of the host and the remote control plane:
// convoy's writes to appliedResources in [from, to) by kind of write (the remote's
// with prefix "remote "), and the others' writes to them, for the log.
func (e *env) quietKubeWrites(from, to time.Time) (map[string]float64, []string, error) {
	out := map[string]float64{}
	var others []string
	for _, c := range []struct {
		cluster *localcluster.Cluster
		prefix  string
	}{{e.cluster, ""}, {e.remote, "remote "}} {
		events, err := localcluster.ReadAudit(c.cluster.AuditLog(), from, to)
		if err != nil {
			return nil, nil, fmt.Errorf("the %squiet window's writes: %w", c.prefix, err)
		}
		convoys, theirs := attributeWrites(events, appliedResources, c.prefix)
		for k, v := range convoys {
			out[k] += v
		}
		others = append(others, theirs...)
	}
	return out, others, nil
}
