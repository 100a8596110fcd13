package backup

import (
	"fmt"
	"slices"
	"strings"
)

// Target is where a backup is to be restored.
type Target struct {
	// Prefix is convoy apiserver's --etcd-prefix there.
	Prefix string
	// Served are the API versions (group/version) this convoy reads, newest last.
	Served []string
}

// Check decides whether a backup with header h and trailer t may be restored into
// to: only into the prefix it was taken from, and only with objects of API
// versions that this convoy reads. The error says what to do instead.
func Check(h Header, t Trailer, to Target) error {
	if strings.TrimSuffix(h.Prefix, "/") != strings.TrimSuffix(to.Prefix, "/") {
		return fmt.Errorf("the backup holds the keys of etcd prefix %q and convoy here uses %q (--etcd-prefix): "+
			"restore it with --etcd-prefix=%s, the prefix it was taken from", h.Prefix, to.Prefix, h.Prefix)
	}
	for _, v := range t.APIVersions {
		if slices.Contains(to.Served, v) {
			continue
		}
		if v == "" {
			return fmt.Errorf("the backup holds objects that are not JSON (protobuf or encrypted at rest?): convoy cannot check them, restore them with etcd's own tools")
		}
		group, _, _ := strings.Cut(v, "/")
		servedGroup := false
		for _, s := range to.Served {
			if g, _, _ := strings.Cut(s, "/"); g == group {
				servedGroup = true
			}
		}
		if servedGroup {
			return fmt.Errorf("the backup holds %s objects, which this convoy does not read (it reads %s): "+
				"it was taken by a newer convoy; restore it with that version or a newer one", v, strings.Join(to.Served, ", "))
		}
		return fmt.Errorf("the backup holds %s objects, which are not convoy's (it reads %s): is --etcd-prefix %q another server's?",
			v, strings.Join(to.Served, ", "), h.Prefix)
	}
	return nil
}
