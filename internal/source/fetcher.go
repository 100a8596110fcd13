package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"k8s.io/utils/clock"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/verify"
)

// DefaultIndexTTL is how long a repository index (or an OCI tag list and tag
// resolution) is used before it is read again.
const DefaultIndexTTL = time.Minute

// DefaultHTTPTimeout bounds every request to a chart source.
const DefaultHTTPTimeout = 2 * time.Minute

// Options configure a Fetcher.
type Options struct {
	// CacheDir holds the chart archives and the Git commits. Required.
	CacheDir string
	// Clock decides when cached indexes expire. Default: the real clock.
	Clock clock.PassiveClock
	// HTTPClient reaches chart repositories and registries. Default: a client with
	// DefaultHTTPTimeout.
	HTTPClient *http.Client
	// IndexTTL is how long an index, a tag list or a tag's digest is cached in
	// memory. Default DefaultIndexTTL.
	IndexTTL time.Duration
	// PlainHTTPHosts are OCI registries (host or host:port) reached over plain HTTP.
	// Loopback registries (localhost, 127.0.0.0/8, ::1) always are.
	PlainHTTPHosts []string
	// GitCacheBytes bounds the Git commits kept on disk (CacheDir/git). Default
	// DefaultGitCacheBytes.
	GitCacheBytes int64
	// AllowGitFileURLs lets spec.chart.git.url be a file:// URL: a repository on the
	// controller's disk (--allow-git-file-urls).
	AllowGitFileURLs bool
}

// Fetcher fetches the charts of Releases (Fetch) and resolves what a chart source
// names (Resolve). It is safe for concurrent use; one Fetcher per process shares its
// caches between all Releases and ReleaseSets.
type Fetcher struct {
	opts     Options
	archives archiveStore
	indexes  *ttlCache[*repo.IndexFile]
	tags     *ttlCache[[]string]
	digests  *ttlCache[string]
	group    singleflight.Group

	gitListings   gitListings
	gitVerified   gitVerified
	gitSignatures gitSignatures
	commits       *commitStore

	clientsMu  sync.Mutex
	clients    map[string]*http.Client     // by CA fingerprint
	registries map[string]*registry.Client // by host, plain HTTP and credentials
}

// New returns a Fetcher.
func New(opts Options) (*Fetcher, error) {
	if opts.CacheDir == "" {
		return nil, errors.New("source: Options.CacheDir is required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if opts.IndexTTL <= 0 {
		opts.IndexTTL = DefaultIndexTTL
	}
	return &Fetcher{
		opts:       opts,
		archives:   archiveStore{dir: opts.CacheDir + "/charts"},
		indexes:    newTTLCache[*repo.IndexFile]("index", opts.Clock, opts.IndexTTL),
		tags:       newTTLCache[[]string]("tags", opts.Clock, opts.IndexTTL),
		digests:    newTTLCache[string]("resolve", opts.Clock, opts.IndexTTL),
		clients:    map[string]*http.Client{},
		registries: map[string]*registry.Client{},
		commits:    newCommitStore(opts.CacheDir+"/git", opts.GitCacheBytes, opts.Clock),
	}, nil
}

// Chart is a fetched chart: the archive of a Helm repository or an OCI registry, or
// the chart folder of a Git commit.
type Chart struct {
	// Version is the chart version selected (as the repository offers it); for a
	// chart from Git, the commit.
	Version string
	// Digest identifies the chart: "sha256:<hex>" of the archive (HTTP repositories),
	// the OCI manifest digest, or for a chart from Git a digest of the commit and
	// path.
	Digest string
	// Commit is the Git commit of a chart from Git; empty otherwise.
	Commit string
	// What names the chart in messages: "NAME VERSION", or for a chart from Git its
	// folder, repository and commit.
	What string
	// Archive is the chart archive (.tgz); nil for a chart from Git.
	Archive []byte
	// Files reads the files of a chart from Git as `helm package` takes them; nil for
	// an archive.
	Files func() ([]*archive.BufferedFile, error)
	// Verified says what verified the chart: for a chart from Git with
	// spec.chart.git.verify, the key that signed its commit. Nil when nothing was
	// verified.
	Verified *verify.Result
	// File is the archive's file name in its HTTP repository (podinfo-6.5.0.tgz), as
	// its provenance file names it; empty for other sources.
	File string
	// Provenance reads the archive's provenance file (<archive URL>.prov) when
	// spec.chart.verify.provider is helm; nil otherwise. It returns nil, nil when the
	// repository has none (404). It reads the repository each time: the caller
	// calls it only for an archive it has not verified yet.
	Provenance func(ctx context.Context) ([]byte, error)
	// OCIRepository is the chart's repository in its OCI registry, without a tag
	// (host/path/name), for a chart of an OCI registry; Digest is then the manifest's
	// digest that its signature signs.
	OCIRepository string
	// Registry is how the source reached the chart's OCI registry (its HTTP client,
	// credentials and scheme), for reading the chart's signatures the same way; nil
	// for other sources.
	Registry *verify.CosignOptions
}

// Fetch selects what src names — the version of the chart that spec.chart.version
// asks for, or the commit of spec.chart.git.ref — and returns its chart, from the
// caches while they hold it: indexes, tag lists and tags' digests for IndexTTL,
// archives and Git commits on disk. maxAge is how old a Git ref listing may be (the
// Release's interval; 0: IndexTTL). Failures are *Error (SourceNotReady,
// Unsupported), except a cancelled context.
func (f *Fetcher) Fetch(ctx context.Context, src v1alpha1.ChartSource, maxAge time.Duration, creds *Credentials) (*Chart, error) {
	if g := src.Git; g != nil {
		if maxAge <= 0 {
			maxAge = f.opts.IndexTTL
		}
		return f.fetchGit(ctx, g, maxAge, creds)
	}
	if src.Name == "" {
		return nil, unsupported("spec.chart.name is empty; name the chart to deliver")
	}
	u, err := url.Parse(src.Repository)
	if err != nil {
		return nil, unsupported("chart repository %q is not a URL: %w", src.Repository, err)
	}
	switch u.Scheme {
	case "http", "https":
		return f.fetchHTTP(ctx, src, creds)
	case "oci":
		return f.fetchOCI(ctx, u, src, creds)
	default:
		return nil, unsupported("chart repository %q: scheme %q is not supported; use http, https or oci", src.Repository, u.Scheme)
	}
}

// chartWhat names a chart of a repository for messages.
func chartWhat(name, version string) string {
	return fmt.Sprintf("%s %s", name, version)
}
