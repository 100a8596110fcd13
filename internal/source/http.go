package source

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/api/v1alpha1"
)

// fetchHTTP selects a version from the repository's index.yaml and returns its
// archive, checked against the index's digest.
func (f *Fetcher) fetchHTTP(ctx context.Context, src v1alpha1.ChartSource, creds *Credentials) (*Chart, error) {
	l, err := f.httpListing(ctx, src, creds, f.opts.IndexTTL)
	if err != nil {
		return nil, err
	}
	hc, repoURL, indexKey, what, byVersion := l.hc, l.repoURL, l.indexKey, l.what, l.byVersion
	version, err := selectVersion(l.offered, src.Version, what)
	if err != nil {
		return nil, err
	}
	cv := byVersion[version]
	if len(cv.URLs) == 0 {
		return nil, sourceNotReady("chart %s version %s: the index lists no URL", what, version)
	}
	archiveURL, err := repo.ResolveReferenceURL(repoURL, cv.URLs[0])
	if err != nil {
		return nil, sourceNotReady("chart %s version %s: bad URL %q in the index: %w", what, version, cv.URLs[0], err)
	}
	want := strings.ToLower(strings.TrimPrefix(cv.Digest, "sha256:"))
	// Without a digest in the index, the archive's URL identifies it.
	cacheDigest := want
	if cacheDigest == "" {
		u := sha256.Sum256([]byte(archiveURL))
		cacheDigest = "url-" + hex.EncodeToString(u[:])
	}
	path := f.archives.path(repoURL, src.Name, version, cacheDigest)

	data, err := flight(ctx, &f.group, "archive|"+path, func(ctx context.Context) ([]byte, error) {
		if b, err := f.archives.read(path); err == nil && b != nil && (want == "" || sha256Hex(b) == want) {
			return b, nil
		}
		b, err := get(ctx, hc, archiveURL, creds, sameHost(repoURL, archiveURL), maxArchiveBytes)
		if err != nil {
			// The index may be stale (a version removed): read it again next time.
			f.indexes.forget(indexKey)
			return nil, fmt.Errorf("chart %s version %s: %w", what, version, err)
		}
		if got := sha256Hex(b); want != "" && got != want {
			f.indexes.forget(indexKey)
			return nil, sourceNotReady("chart %s version %s: the archive %s has digest sha256:%s, the index says sha256:%s", what, version, archiveURL, got, want)
		}
		if err := f.archives.write(path, b); err != nil {
			return nil, sourceNotReady("caching chart %s version %s: %w", what, version, err)
		}
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	c := &Chart{Version: version, Digest: "sha256:" + sha256Hex(data), What: chartWhat(src.Name, version), Archive: data,
		File: archiveFile(archiveURL)}
	if v := src.Verify; v != nil && v.Provider == v1alpha1.ChartVerifyHelm {
		provURL, withAuth := archiveURL+".prov", sameHost(repoURL, archiveURL)
		c.Provenance = func(ctx context.Context) ([]byte, error) {
			return getProvenance(ctx, hc, provURL, creds, withAuth)
		}
	}
	return c, nil
}

// maxProvenanceBytes bounds a provenance file.
const maxProvenanceBytes = 1 << 20

// getProvenance reads a provenance file; nil, nil when the server has none (404).
func getProvenance(ctx context.Context, hc *http.Client, provURL string, creds *Credentials, withAuth bool) ([]byte, error) {
	b, err := get(ctx, hc, provURL, creds, withAuth, maxProvenanceBytes)
	if err != nil {
		if e, ok := errors.AsType[*Error](err); ok && e.notFound {
			return nil, nil
		}
		return nil, err
	}
	return b, nil
}

// archiveFile is the file name of an archive URL: its last path segment.
func archiveFile(archiveURL string) string {
	u, err := url.Parse(archiveURL)
	if err != nil {
		return path.Base(archiveURL)
	}
	return path.Base(u.Path)
}

// httpVersions are the versions of a chart that an HTTP repository's index offers.
type httpVersions struct {
	hc                      *http.Client
	repoURL, indexKey, what string
	offered                 []string
	byVersion               map[string]*repo.ChartVersion
}

// httpListing reads the versions of src's chart from the repository's index, taking a
// cached index stored less than maxAge ago.
func (f *Fetcher) httpListing(ctx context.Context, src v1alpha1.ChartSource, creds *Credentials, maxAge time.Duration) (*httpVersions, error) {
	hc, err := f.httpClient(creds)
	if err != nil {
		return nil, err
	}
	repoURL := strings.TrimSuffix(src.Repository, "/")
	indexKey := repoURL + "|" + creds.fingerprint()
	index, err := f.index(ctx, hc, repoURL, indexKey, creds, maxAge)
	if err != nil {
		return nil, err
	}
	l := &httpVersions{hc: hc, repoURL: repoURL, indexKey: indexKey, what: fmt.Sprintf("%q of repository %s", src.Name, repoURL),
		byVersion: map[string]*repo.ChartVersion{}}
	for _, cv := range index.Entries[src.Name] {
		if cv == nil || cv.Metadata == nil || cv.Removed {
			continue
		}
		if _, dup := l.byVersion[cv.Version]; !dup {
			l.offered = append(l.offered, cv.Version)
			l.byVersion[cv.Version] = cv
		}
	}
	if len(l.offered) == 0 {
		return nil, sourceNotReady("repository %s has no chart %q; check spec.chart.name and spec.chart.repository", repoURL, src.Name)
	}
	return l, nil
}

// index returns the repository's index, from memory while it is fresh.
func (f *Fetcher) index(ctx context.Context, hc *http.Client, repoURL, key string, creds *Credentials, maxAge time.Duration) (*repo.IndexFile, error) {
	return f.indexes.getOrYounger(ctx, &f.group, key, maxAge, func(ctx context.Context) (*repo.IndexFile, error) {
		b, err := get(ctx, hc, repoURL+"/index.yaml", creds, true, maxIndexBytes)
		if err != nil {
			return nil, err
		}
		idx, err := parseIndex(b)
		if err != nil {
			return nil, sourceNotReady("repository %s: index.yaml: %w", repoURL, err)
		}
		return idx, nil
	})
}

// parseIndex reads an index.yaml (YAML or JSON).
func parseIndex(b []byte) (*repo.IndexFile, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty")
	}
	idx := &repo.IndexFile{}
	if err := yaml.Unmarshal(b, idx); err != nil {
		return nil, err
	}
	if idx.APIVersion == "" {
		return nil, errors.New("no apiVersion: not a Helm repository index")
	}
	return idx, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
