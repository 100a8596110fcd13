package source

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
	"helm.sh/helm/v4/pkg/chart/loader/archive"

	"kumodo.io/convoy/api/v1alpha1"
)

// gitListings keeps the ref listings of Git repositories in memory, keyed by URL and
// credentials. Each reader says how old a listing it takes (its Release's interval),
// so that all the Releases of one repository share one listing per interval.
type gitListings struct {
	mu      sync.Mutex
	entries map[string]gitListing
}

type gitListing struct {
	refs     []*plumbing.Reference
	listedAt time.Time
}

// get returns the listing of key when it is younger than maxAge at now.
func (l *gitListings) get(key string, now time.Time, maxAge time.Duration) ([]*plumbing.Reference, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[key]
	if !ok || now.Sub(e.listedAt) >= maxAge {
		return nil, false
	}
	return e.refs, true
}

func (l *gitListings) put(key string, refs []*plumbing.Reference, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.entries == nil {
		l.entries = map[string]gitListing{}
	}
	// Listings a day old are of repositories no Release reads any more.
	for k, e := range l.entries {
		if now.Sub(e.listedAt) > 24*time.Hour {
			delete(l.entries, k)
		}
	}
	l.entries[key] = gitListing{refs: refs, listedAt: now}
}

func (l *gitListings) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.entries, key)
}

// gitVerified remembers which commits each remote (URL and credentials) served.
type gitVerified struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (v *gitVerified) has(key, commit string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seen[key+"|"+commit]
}

func (v *gitVerified) add(key, commit string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil {
		v.seen = map[string]bool{}
	}
	v.seen[key+"|"+commit] = true
}

// fetchGit resolves the commit that src's ref names from the remote's refs (one
// listing per repository, credentials and interval), fetches that one commit into
// the commit store unless it is there, verifies its signature when src has verify,
// and returns the chart of src.path in it.
func (f *Fetcher) fetchGit(ctx context.Context, src *v1alpha1.GitChartSource, maxAge time.Duration, creds *Credentials) (*Chart, error) {
	remote, err := f.gitRemote(src.URL, creds)
	if err != nil {
		return nil, err
	}
	if remote.local != "" {
		return f.localGit(remote, src, creds)
	}
	commit := src.Ref.Commit
	refName := ""
	listingKey := remote.url + "|" + creds.fingerprint()
	if commit == "" {
		refs, err := f.gitRefs(ctx, remote, listingKey, maxAge)
		if err != nil {
			return nil, err
		}
		if commit, refName, err = resolveGitRef(refs, src.Ref); err != nil {
			return nil, sourceNotReady("Git repository %s: %w", remote.display, err)
		}
	}
	// A commit from the listing is the remote's; a commit named in the spec is taken
	// from the store only once this remote, with these credentials, served it: a
	// commit hash does not give access to another repository's cached commit.
	verified := refName != "" || f.gitVerified.has(listingKey, commit)
	fetched, err := f.gitCommit(ctx, remote, commit, refName, verified)
	if err != nil {
		return nil, err
	}
	f.gitVerified.add(listingKey, fetched)
	if fetched != commit {
		// The ref moved between the listing and the fetch: list again next time.
		f.gitListings.forget(listingKey)
		commit = fetched
	}
	// Nothing of a commit is read before its signature is verified.
	signed, err := f.verifyGit(src, creds, remote.display, commit, f.commits.readCommit)
	if err != nil {
		return nil, err
	}
	chartPath := strings.Trim(src.Path, "/")
	return &Chart{
		Version: commit,
		Digest:  gitChartDigest(commit, chartPath),
		Commit:  commit,
		Files: func() ([]*archive.BufferedFile, error) {
			return f.commits.chartFiles(commit, chartPath)
		},
		What:     gitChartWhat(remote.display, chartPath, commit),
		Verified: signed,
	}, nil
}

// localGit reads a chart from a repository on the controller's disk (file://, when
// the operator allows it): its refs and objects are read in place, with no transport
// (go-git's file transport runs the git binary) and no copy in the commit store.
func (f *Fetcher) localGit(g *gitRemote, src *v1alpha1.GitChartSource, creds *Credentials) (*Chart, error) {
	repo, refs, err := localRefs(g)
	if err != nil {
		return nil, err
	}
	commit, _, err := resolveGitRef(refs, src.Ref)
	if err != nil {
		return nil, sourceNotReady("Git repository %s: %w", g.display, err)
	}
	if _, err := repo.CommitObject(plumbing.NewHash(commit)); err != nil {
		return nil, sourceNotReady("Git repository %s has no commit %s: %v", g.display, commit, err)
	}
	verified, err := f.verifyGit(src, creds, g.display, commit, func(commit string, fn func(*object.Commit) error) error {
		return readRepoCommit(repo, commit, fn)
	})
	if err != nil {
		return nil, err
	}
	chartPath := strings.Trim(src.Path, "/")
	return &Chart{
		Version: commit, Digest: gitChartDigest(commit, chartPath), Commit: commit,
		What: gitChartWhat(g.display, chartPath, commit), Verified: verified,
		Files: func() ([]*archive.BufferedFile, error) {
			return repoChartFiles(repo, commit, chartPath)
		},
	}, nil
}

// localRefs opens a repository on the controller's disk and lists its refs, annotated
// tags peeled as a remote lists them.
func localRefs(g *gitRemote) (*git.Repository, []*plumbing.Reference, error) {
	repo, err := git.PlainOpen(g.local)
	if err != nil {
		return nil, nil, sourceNotReady("Git repository %s: %v", g.display, err)
	}
	var refs []*plumbing.Reference
	iter, err := repo.References()
	if err != nil {
		return nil, nil, sourceNotReady("Git repository %s: listing the refs: %v", g.display, err)
	}
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		refs = append(refs, ref)
		if tag, err := repo.TagObject(ref.Hash()); err == nil && ref.Name().IsTag() {
			refs = append(refs, plumbing.NewHashReference(ref.Name()+"^{}", tag.Target))
		}
		return nil
	})
	return repo, refs, nil
}

// gitChartDigest identifies the chart of a folder at a commit: the commit's hash
// names its whole tree, so two repositories (a fork, a mirror) with the same commit
// give the same chart.
func gitChartDigest(commit, chartPath string) string {
	return "sha256:" + sha256Hex([]byte("git\x00"+commit+"\x00"+chartPath))
}

// gitChartWhat names a chart from Git for messages.
func gitChartWhat(repo, chartPath, commit string) string {
	if chartPath == "" {
		chartPath = "."
	}
	return fmt.Sprintf("%s of %s at %s", chartPath, repo, shortCommit(commit))
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// gitRemote is a Git repository with what reaches it.
type gitRemote struct {
	url      string
	display  string // url without user information
	auth     transport.AuthMethod
	caBundle []byte
	creds    *Credentials
	// local is the folder of a file:// repository.
	local string
}

// gitRemote returns how to reach rawURL with creds: basic auth or a bearer token and
// a CA for http(s), an identity checked against known_hosts for ssh.
func (f *Fetcher) gitRemote(rawURL string, creds *Credentials) (*gitRemote, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, unsupported("spec.chart.git.url is not a URL")
	}
	display := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	g := &gitRemote{url: rawURL, display: display, creds: creds}
	switch u.Scheme {
	case "http", "https":
		if creds != nil {
			g.caBundle = creds.CA
			switch {
			case creds.BearerToken != "":
				g.auth = &githttp.TokenAuth{Token: creds.BearerToken}
			case creds.Username != "" || creds.Password != "":
				g.auth = &githttp.BasicAuth{Username: creds.Username, Password: creds.Password}
			}
		}
	case "ssh":
		user := u.User.Username()
		if user == "" {
			user = "git"
		}
		if creds == nil || len(creds.Identity) == 0 {
			return nil, sourceNotReady("Git repository %s: an ssh:// repository needs spec.chart.git.secretRef with the keys identity (a private key) and known_hosts", display)
		}
		if len(creds.KnownHosts) == 0 {
			return nil, sourceNotReady("Git repository %s: the Secret of spec.chart.git.secretRef has no known_hosts: convoy checks the server's host key against it (ssh-keyscan HOST gives it)", display)
		}
		keys, err := gitssh.NewPublicKeys(user, creds.Identity, creds.Password)
		if err != nil {
			return nil, sourceNotReady("Git repository %s: the identity of spec.chart.git.secretRef is not a private key it can use (a passphrase goes in the key password)", display)
		}
		cb, err := f.knownHosts(creds)
		if err != nil {
			return nil, sourceNotReady("Git repository %s: the known_hosts of spec.chart.git.secretRef: %w", display, err)
		}
		keys.HostKeyCallback = cb
		g.auth = keys
	case "file":
		if !f.opts.AllowGitFileURLs {
			return nil, unsupported("Git repository %s: file:// URLs are not allowed (the operator allows them with --allow-git-file-urls)", display)
		}
		g.local = u.Path
	default:
		return nil, unsupported("Git repository %s: scheme %q is not supported; use https, http or ssh", display, u.Scheme)
	}
	return g, nil
}

// knownHosts returns the host key callback of the credentials' known_hosts. The
// parser reads files: the known_hosts is written once under the cache directory,
// named by the credentials' fingerprint.
func (f *Fetcher) knownHosts(creds *Credentials) (ssh.HostKeyCallback, error) {
	path := filepath.Join(f.opts.CacheDir, "known-hosts", creds.fingerprint())
	if _, err := os.Stat(path); err != nil {
		if err := (archiveStore{}).write(path, creds.KnownHosts); err != nil {
			return nil, err
		}
	}
	return knownhosts.New(path)
}

// gitRefs lists the remote's refs, or takes a listing younger than maxAge.
func (f *Fetcher) gitRefs(ctx context.Context, g *gitRemote, key string, maxAge time.Duration) ([]*plumbing.Reference, error) {
	if refs, ok := f.gitListings.get(key, f.opts.Clock.Now(), maxAge); ok {
		return refs, nil
	}
	return flight(ctx, &f.group, "gitrefs|"+key, func(ctx context.Context) ([]*plumbing.Reference, error) {
		if refs, ok := f.gitListings.get(key, f.opts.Clock.Now(), maxAge); ok {
			return refs, nil
		}
		ctx, cancel := context.WithTimeout(ctx, f.opts.HTTPClient.Timeout+time.Second)
		defer cancel()
		rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{g.url}})
		refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: g.auth, CABundle: g.caBundle, PeelingOption: git.AppendPeeled})
		if err != nil {
			return nil, gitError(g, "listing the refs", err)
		}
		f.gitListings.put(key, refs, f.opts.Clock.Now())
		return refs, nil
	})
}

// gitCommit makes sure the commit is in the store: a shallow fetch of refName (or of
// the commit itself when no ref names it), once for all concurrent callers. It
// returns the commit fetched: refName's tip, which is commit unless the ref moved.
// verified says that the remote is known to have the commit; otherwise it is fetched
// even when stored.
func (f *Fetcher) gitCommit(ctx context.Context, g *gitRemote, commit, refName string, verified bool) (string, error) {
	if verified && f.commits.has(commit) {
		return commit, nil
	}
	key := "gitfetch|" + commit
	if !verified {
		key += "|" + g.url + "|" + g.creds.fingerprint()
	}
	return flight(ctx, &f.group, key, func(ctx context.Context) (string, error) {
		if verified && f.commits.has(commit) {
			return commit, nil
		}
		ctx, cancel := context.WithTimeout(ctx, f.opts.HTTPClient.Timeout+time.Second)
		defer cancel()
		got, err := f.commits.add(commit, func(dir string) (string, error) {
			return shallowFetch(ctx, g, dir, commit, refName)
		})
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return "", err
			}
			return "", sourceNotReady("caching commit %s of %s: %w", shortCommit(commit), g.display, err)
		}
		return got, nil
	})
}

// fetchedRef is where a shallow fetch puts the commit in its repository.
const fetchedRef = plumbing.ReferenceName("refs/convoy/fetched")

// shallowFetch fetches one commit, without history, into a new bare repository in
// dir, and returns its hash.
func shallowFetch(ctx context.Context, g *gitRemote, dir, commit, refName string) (string, error) {
	repo, err := git.PlainInit(dir, true)
	if err != nil {
		return "", err
	}
	rem, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{g.url}})
	if err != nil {
		return "", err
	}
	src := refName
	if src == "" {
		src = commit
	}
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", src, fetchedRef))
	err = rem.FetchContext(ctx, &git.FetchOptions{
		RefSpecs: []config.RefSpec{spec}, Depth: 1, Tags: git.NoTags, Auth: g.auth, CABundle: g.caBundle,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		if refName == "" && strings.Contains(err.Error(), "server does not support exact SHA1 refspec") {
			return "", sourceNotReady("Git repository %s does not serve a commit by its hash (uploadpack.allowReachableSHA1InWant): name a branch or tag in spec.chart.git.ref", g.display)
		}
		return "", gitError(g, fmt.Sprintf("fetching %s", describeGitSource(refName, commit)), err)
	}
	ref, err := repo.Reference(fetchedRef, true)
	if err != nil {
		return "", gitError(g, fmt.Sprintf("fetching %s", describeGitSource(refName, commit)), err)
	}
	if tag, err := repo.TagObject(ref.Hash()); err == nil { // an annotated tag: its commit
		c, err := tag.Commit()
		if err != nil {
			return "", sourceNotReady("Git repository %s: tag %s does not point at a commit: %w", g.display, refName, err)
		}
		return c.Hash.String(), nil
	}
	return ref.Hash().String(), nil
}

func describeGitSource(refName, commit string) string {
	if refName == "" {
		return "commit " + commit
	}
	return fmt.Sprintf("%s (commit %s)", refName, shortCommit(commit))
}

// gitError is SourceNotReady with the remote's message and what to check, without
// the credentials.
func gitError(g *gitRemote, doing string, err error) *Error {
	hint := ""
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		hint = "; check the credentials of spec.chart.git.secretRef"
	case errors.Is(err, transport.ErrRepositoryNotFound):
		hint = "; check spec.chart.git.url (a private repository may also answer so without credentials)"
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		hint = "; push a commit to it"
	case strings.Contains(err.Error(), "unable to authenticate"), strings.Contains(err.Error(), "knownhosts"):
		hint = "; check the identity and known_hosts of spec.chart.git.secretRef"
	}
	msg := redactSecrets(err.Error(), g.creds)
	return sourceNotReady("Git repository %s: %s: %s%s", g.display, doing, msg, hint)
}

// redactSecrets replaces what of the credentials a message may hold.
func redactSecrets(msg string, creds *Credentials) string {
	if creds == nil {
		return msg
	}
	for _, s := range []string{creds.Password, creds.BearerToken} {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	return msg
}

// resolveGitRef finds the commit that ref names in a remote's refs, and the ref to
// fetch it by: a branch's tip, a tag's commit (annotated tags peeled), the highest
// tag in a semver range.
func resolveGitRef(refs []*plumbing.Reference, ref v1alpha1.GitRef) (commit, refName string, err error) {
	byName := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, r := range refs {
		if r.Type() == plumbing.HashReference {
			byName[r.Name()] = r.Hash()
		}
	}
	tag := func(name string) (string, string, bool) {
		n := plumbing.NewTagReferenceName(name)
		if h, ok := byName[n+"^{}"]; ok {
			return h.String(), n.String(), true
		}
		if h, ok := byName[n]; ok {
			return h.String(), n.String(), true
		}
		return "", "", false
	}
	switch {
	case ref.Commit != "":
		return ref.Commit, "", nil
	case ref.Branch != "":
		n := plumbing.NewBranchReferenceName(ref.Branch)
		if h, ok := byName[n]; ok {
			return h.String(), n.String(), nil
		}
		return "", "", fmt.Errorf("no branch %q; check spec.chart.git.ref.branch", ref.Branch)
	case ref.Tag != "":
		if c, n, ok := tag(ref.Tag); ok {
			return c, n, nil
		}
		return "", "", fmt.Errorf("no tag %q; check spec.chart.git.ref.tag", ref.Tag)
	case ref.Semver != "":
		constraint, err := semver.NewConstraint(ref.Semver)
		if err != nil {
			return "", "", fmt.Errorf("spec.chart.git.ref.semver %q is not a semver range: %w", ref.Semver, err)
		}
		var best *semver.Version
		bestName := ""
		var tags []string
		for name := range byName {
			if !name.IsTag() || strings.HasSuffix(name.String(), "^{}") {
				continue
			}
			short := name.Short()
			tags = append(tags, short)
			v, err := semver.NewVersion(short)
			if err != nil || !constraint.Check(v) {
				continue
			}
			if best == nil || v.GreaterThan(best) || (v.Equal(best) && short < bestName) {
				best, bestName = v, short
			}
		}
		if best == nil {
			slices.Sort(tags)
			if len(tags) > 10 {
				tags = append(tags[len(tags)-10:len(tags):len(tags)], "…")
			}
			return "", "", fmt.Errorf("no tag in the range %q (tags: %s); check spec.chart.git.ref.semver", ref.Semver, orNone(tags))
		}
		c, n, _ := tag(bestName)
		return c, n, nil
	}
	return "", "", errors.New("spec.chart.git.ref names no branch, tag, semver range or commit")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
