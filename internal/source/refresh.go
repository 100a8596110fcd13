package source

import (
	"net/url"
	"strings"

	"kumodo.io/convoy/api/v1alpha1"
)

// Refresh forgets what the caches hold of src's repository, for every set of
// credentials: a Git remote's ref listing, an HTTP repository's index, an OCI
// repository's tag list and tag digests. The next render or resolution of any
// Release of that repository reads it again, whatever its interval; the chart
// archives and Git commits stay, since they never change under their digest. A
// receiver calls it when a Git host or a registry says the repository changed.
func (r *Fetcher) Refresh(src v1alpha1.ChartSource) {
	for _, p := range refreshPrefixes(src) {
		r.gitListings.forgetPrefix(p)
		r.indexes.forgetPrefix(p)
		r.tags.forgetPrefix(p)
		r.digests.forgetPrefix(p)
	}
}

// refreshPrefixes are the prefixes of the cache keys of src's repository, as the
// fetches build them: the Git URL, the HTTP repository URL, the OCI reference of
// the chart (tag lists: "<ref>|", digests: "<ref>:<tag>|"), each before the
// credentials' fingerprint.
func refreshPrefixes(src v1alpha1.ChartSource) []string {
	if g := src.Git; g != nil {
		return []string{g.URL + "|"}
	}
	u, err := url.Parse(src.Repository)
	if err != nil {
		return nil
	}
	switch u.Scheme {
	case "http", "https":
		return []string{strings.TrimSuffix(src.Repository, "/") + "|"}
	case "oci":
		ref := u.Host + strings.TrimSuffix(u.Path, "/") + "/" + src.Name
		return []string{ref + "|", ref + ":"}
	}
	return nil
}

func (c *ttlCache[T]) forgetPrefix(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if strings.HasPrefix(k, prefix) {
			delete(c.entries, k)
		}
	}
}

func (l *gitListings) forgetPrefix(prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.entries {
		if strings.HasPrefix(k, prefix) {
			delete(l.entries, k)
		}
	}
}
