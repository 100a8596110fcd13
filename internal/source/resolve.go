package source

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"kumodo.io/convoy/api/v1alpha1"
)

// Resolved is what a chart source names at one moment: the exact chart version
// that spec.chart.version picks, or the commit that spec.chart.git.ref names.
type Resolved struct {
	// ChartVersion is the version picked among those the repository offers (as it
	// offers it); empty for a chart from Git.
	ChartVersion string
	// Commit is the commit of the Git ref; empty for a chart from a repository.
	Commit string
}

// Moves reports whether what src names can change without src changing: a version
// range or an empty version (the latest stable), or a Git branch, tag or semver
// range. An exact version or a commit does not move.
func Moves(src v1alpha1.ChartSource) bool {
	if g := src.Git; g != nil {
		return g.Ref.Commit == ""
	}
	want := strings.TrimSpace(src.Version)
	if want == "" {
		return true
	}
	_, err := semver.StrictNewVersion(strings.TrimPrefix(want, "v"))
	return err != nil
}

// Resolve resolves src as Fetch would, with the same caches and
// selection: the highest version the repository's index (or the registry's tags)
// offers that meets spec.chart.version, or the commit of spec.chart.git.ref. An index,
// tag list or ref listing stored less than maxAge ago is used; 0 takes the cache's
// own lifetime. Failures are *Error with the reasons Fetch would give
// (SourceNotReady, Unsupported).
func (f *Fetcher) Resolve(ctx context.Context, src v1alpha1.ChartSource, maxAge time.Duration, creds *Credentials) (Resolved, error) {
	if maxAge <= 0 || maxAge > f.opts.IndexTTL {
		maxAge = f.opts.IndexTTL
	}
	if g := src.Git; g != nil {
		commit, err := f.resolveGit(ctx, g, maxAge, creds)
		return Resolved{Commit: commit}, err
	}
	if src.Name == "" {
		return Resolved{}, unsupported("spec.chart.name is empty; name the chart to deliver")
	}
	u, err := url.Parse(src.Repository)
	if err != nil {
		return Resolved{}, unsupported("chart repository %q is not a URL: %w", src.Repository, err)
	}
	var offered []string
	var what string
	switch u.Scheme {
	case "http", "https":
		l, err := f.httpListing(ctx, src, creds, maxAge)
		if err != nil {
			return Resolved{}, err
		}
		offered, what = l.offered, l.what
	case "oci":
		l, err := f.ociListing(ctx, u, src, creds, maxAge)
		if err != nil {
			return Resolved{}, err
		}
		offered, what = l.tags, l.what
	default:
		return Resolved{}, unsupported("chart repository %q: scheme %q is not supported; use http, https or oci", src.Repository, u.Scheme)
	}
	version, err := selectVersion(offered, src.Version, what)
	return Resolved{ChartVersion: version}, err
}

// resolveGit is the commit that src's ref names, from the remote's ref listing (the
// one fetches share, per URL and credentials) or, for a file:// repository, its refs.
// With verify, it is the commit as Fetch takes it: fetched into the commit store and
// its signature verified, so that a resolution (a ReleaseSet's status.source) never
// names a commit that no trusted key signed.
func (f *Fetcher) resolveGit(ctx context.Context, src *v1alpha1.GitChartSource, maxAge time.Duration, creds *Credentials) (string, error) {
	if src.Verify != nil {
		chart, err := f.fetchGit(ctx, src, maxAge, creds)
		if err != nil {
			return "", err
		}
		return chart.Commit, nil
	}
	remote, err := f.gitRemote(src.URL, creds)
	if err != nil {
		return "", err
	}
	if src.Ref.Commit != "" {
		return src.Ref.Commit, nil
	}
	if remote.local != "" {
		_, local, err := localRefs(remote)
		if err != nil {
			return "", err
		}
		commit, _, err := resolveGitRef(local, src.Ref)
		if err != nil {
			return "", sourceNotReady("Git repository %s: %w", remote.display, err)
		}
		return commit, nil
	}
	listingKey := remote.url + "|" + creds.fingerprint()
	listed, err := f.gitRefs(ctx, remote, listingKey, maxAge)
	if err != nil {
		return "", err
	}
	commit, _, err := resolveGitRef(listed, src.Ref)
	if err != nil {
		return "", sourceNotReady("Git repository %s: %w", remote.display, err)
	}
	// The listing is the remote's: a fetch of this commit by the same remote and
	// credentials may take it from the commit store.
	f.gitVerified.add(listingKey, commit)
	return commit, nil
}
