package source

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/registry"
	"oras.land/oras-go/v2/registry/remote/auth"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/verify"
)

// fetchOCI selects a version among the repository's tags (tags are versions) and
// pulls its archive by manifest digest.
func (f *Fetcher) fetchOCI(ctx context.Context, u *url.URL, src v1alpha1.ChartSource, creds *Credentials) (*Chart, error) {
	l, err := f.ociListing(ctx, u, src, creds, f.opts.IndexTTL)
	if err != nil {
		return nil, err
	}
	ref, what, client, fp, tagsKey := l.ref, l.what, l.client, l.fp, l.tagsKey
	version, err := selectVersion(l.tags, src.Version, what)
	if err != nil {
		return nil, err
	}
	tagged := ref + ":" + strings.ReplaceAll(version, "+", "_")
	digestKey := tagged + "|" + fp
	digest, err := f.digests.getOr(ctx, &f.group, digestKey, func(context.Context) (string, error) {
		desc, err := client.Resolve(tagged)
		if err != nil {
			return "", sourceNotReady("chart %s version %s: resolving oci://%s: %w", what, version, tagged, err)
		}
		return desc.Digest.String(), nil
	})
	if err != nil {
		return nil, err
	}
	path := f.archives.path("oci://"+ref, src.Name, version, digest)
	data, err := flight(ctx, &f.group, "archive|"+path, func(context.Context) ([]byte, error) {
		if b, err := f.archives.read(path); err == nil && b != nil {
			return b, nil
		}
		res, err := client.Pull(ref+"@"+digest, registry.PullOptWithChart(true))
		if err != nil {
			f.tags.forget(tagsKey)
			f.digests.forget(digestKey)
			return nil, sourceNotReady("chart %s version %s: pulling oci://%s@%s: %w", what, version, ref, digest, err)
		}
		if err := f.archives.write(path, res.Chart.Data); err != nil {
			return nil, sourceNotReady("caching chart %s version %s: %w", what, version, err)
		}
		return res.Chart.Data, nil
	})
	if err != nil {
		return nil, err
	}
	reach, err := f.registryAccess(u.Host, creds)
	if err != nil {
		return nil, err
	}
	return &Chart{Version: version, Digest: digest, What: chartWhat(src.Name, version), Archive: data, OCIRepository: ref, Registry: reach}, nil
}

// ociTags are the version tags of a chart in an OCI registry.
type ociTags struct {
	ref, what, fp, tagsKey string
	client                 *registry.Client
	tags                   []string
}

// ociListing lists the tags of src's chart, taking a cached list stored less than
// maxAge ago.
func (f *Fetcher) ociListing(ctx context.Context, u *url.URL, src v1alpha1.ChartSource, creds *Credentials, maxAge time.Duration) (*ociTags, error) {
	if u.Host == "" {
		return nil, unsupported("chart repository %q names no registry host; use oci://host/path", src.Repository)
	}
	ref := u.Host + strings.TrimSuffix(u.Path, "/") + "/" + src.Name
	what := fmt.Sprintf("%q of registry oci://%s", src.Name, strings.TrimSuffix(u.Host+u.Path, "/"))
	client, err := f.registryClient(u.Host, creds)
	if err != nil {
		return nil, err
	}
	fp := creds.fingerprint()
	tagsKey := ref + "|" + fp
	tags, err := f.tags.getOrYounger(ctx, &f.group, tagsKey, maxAge, func(context.Context) ([]string, error) {
		tags, err := client.Tags(ref)
		if err != nil {
			return nil, sourceNotReady("listing the tags of oci://%s: %w", ref, err)
		}
		return tags, nil
	})
	if err != nil {
		return nil, err
	}
	if len(tags) == 0 {
		return nil, sourceNotReady("chart %s has no version tag; check spec.chart.name and spec.chart.repository", what)
	}
	return &ociTags{ref: ref, what: what, fp: fp, tagsKey: tagsKey, client: client, tags: tags}, nil
}

// registryAccess is how the registry host is reached with creds, for the cosign
// check of a chart's signatures (verify.Cosign reads them as the source reads the
// chart): the same HTTP client, credentials and scheme.
func (f *Fetcher) registryAccess(host string, creds *Credentials) (*verify.CosignOptions, error) {
	hc, err := f.httpClient(creds)
	if err != nil {
		return nil, err
	}
	out := &verify.CosignOptions{HTTPClient: hc, PlainHTTP: f.plainHTTP(host)}
	if creds != nil {
		out.Username, out.Password = creds.Username, creds.Password
	}
	return out, nil
}

// registryClient returns a Helm registry client for host with exactly the given
// credentials (never the machine's Docker or Helm credential files).
func (f *Fetcher) registryClient(host string, creds *Credentials) (*registry.Client, error) {
	hc, err := f.httpClient(creds)
	if err != nil {
		return nil, err
	}
	plain := f.plainHTTP(host)
	key := fmt.Sprintf("%s|%t|%s", host, plain, creds.fingerprint())
	f.clientsMu.Lock()
	defer f.clientsMu.Unlock()
	if c, ok := f.registries[key]; ok {
		return c, nil
	}
	authorizer := auth.Client{Client: hc, Cache: auth.NewCache()}
	authorizer.SetUserAgent("convoy")
	if creds != nil && (creds.Username != "" || creds.Password != "") {
		authorizer.Credential = auth.StaticCredential(host, auth.Credential{Username: creds.Username, Password: creds.Password})
	}
	opts := []registry.ClientOption{
		registry.ClientOptHTTPClient(hc),
		registry.ClientOptAuthorizer(authorizer),
		registry.ClientOptWriter(io.Discard),
		// A file of our own, so that the client reads no user's credential file.
		registry.ClientOptCredentialsFile(filepath.Join(f.opts.CacheDir, "registry-config.json")),
	}
	if plain {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		return nil, sourceNotReady("registry client for %s: %w", host, err)
	}
	f.registries[key] = c
	return c, nil
}

// plainHTTP says whether a registry is reached over plain HTTP: loopback hosts (as
// Docker does) and the hosts of Options.PlainHTTPHosts.
func (f *Fetcher) plainHTTP(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	if h == "localhost" {
		return true
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return true
	}
	return slices.Contains(f.opts.PlainHTTPHosts, host) || slices.Contains(f.opts.PlainHTTPHosts, h)
}
