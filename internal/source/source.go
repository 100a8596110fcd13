package source

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Size limits of what a source may send.
const (
	maxIndexBytes   = 64 << 20
	maxArchiveBytes = 64 << 20
)

// Credentials reach a private chart source. The caller reads them from the Secret
// that spec.chart.secretRef names; see CredentialsFromSecret.
type Credentials struct {
	// Username and Password are sent as HTTP basic auth (HTTP repositories, Git over
	// http) or as registry credentials (OCI). Password is also the passphrase of an
	// encrypted Identity.
	Username string
	Password string
	// BearerToken is sent as an HTTP bearer token (Git over http).
	BearerToken string
	// CA is a PEM bundle of the certificate authorities to trust for the source,
	// instead of the system's.
	CA []byte
	// Identity is a PEM private key and KnownHosts the server's host keys in
	// known_hosts form (Git over ssh).
	Identity   []byte
	KnownHosts []byte
	// VerifyKeys are the keys trusted to sign a chart's Git commit: the key keys of
	// the Secret of spec.chart.git.verify.secretRef, as verify.ParseGitKeys reads
	// them. They reach nothing, and take no part in the fingerprint: a commit is
	// fetched alike whoever trusts it.
	VerifyKeys []byte
}

// CredentialsFromSecret reads the keys username, password, bearerToken, caFile (or
// ca.crt, as Flux names it), identity and known_hosts of a Secret's data. It returns
// nil when none is set.
func CredentialsFromSecret(data map[string][]byte) *Credentials {
	ca := data["caFile"]
	if len(ca) == 0 {
		ca = data["ca.crt"]
	}
	c := &Credentials{Username: string(data["username"]), Password: string(data["password"]), CA: ca,
		BearerToken: string(data["bearerToken"]), Identity: data["identity"], KnownHosts: data["known_hosts"]}
	if c.Username == "" && c.Password == "" && len(c.CA) == 0 && c.BearerToken == "" && len(c.Identity) == 0 && len(c.KnownHosts) == 0 {
		return nil
	}
	return c
}

// fingerprint identifies the credentials in cache keys, so that what one set of
// credentials fetched is never served to a request with other (or no) credentials.
func (c *Credentials) fingerprint() string {
	if c == nil || (c.Username == "" && c.Password == "" && len(c.CA) == 0 && c.BearerToken == "" && len(c.Identity) == 0 && len(c.KnownHosts) == 0) {
		return "anonymous"
	}
	h := sha256.New()
	for _, s := range [][]byte{[]byte(c.Username), []byte(c.Password), c.CA, []byte(c.BearerToken), c.Identity, c.KnownHosts} {
		fmt.Fprintf(h, "%d:", len(s))
		h.Write(s)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// httpClient returns the client for a source: the configured one, or a copy that
// trusts the credentials' CA.
func (f *Fetcher) httpClient(creds *Credentials) (*http.Client, error) {
	if creds == nil || len(creds.CA) == 0 {
		return f.opts.HTTPClient, nil
	}
	key := creds.fingerprint()
	f.clientsMu.Lock()
	defer f.clientsMu.Unlock()
	if c, ok := f.clients[key]; ok {
		return c, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(creds.CA) {
		return nil, unsupported("the caFile of spec.chart.secretRef holds no PEM certificate")
	}
	base, _ := f.opts.HTTPClient.Transport.(*http.Transport)
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	t.TLSClientConfig.RootCAs = pool
	c := *f.opts.HTTPClient
	c.Transport = t
	f.clients[key] = &c
	return &c, nil
}

// get reads a URL, sending basic auth when withAuth. Every failure is SourceNotReady.
func get(ctx context.Context, hc *http.Client, rawURL string, creds *Credentials, withAuth bool, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, sourceNotReady("GET %s: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", "convoy")
	if withAuth && creds != nil && (creds.Username != "" || creds.Password != "") {
		req.SetBasicAuth(creds.Username, creds.Password)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, sourceNotReady("GET %s: %s: %w", rawURL, describeNetError(err), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		hint := ""
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			hint = "; check the credentials of spec.chart.secretRef"
		case http.StatusNotFound:
			hint = "; check spec.chart.repository"
		}
		e := sourceNotReady("GET %s: the server answered %s%s", rawURL, resp.Status, hint)
		e.notFound = resp.StatusCode == http.StatusNotFound
		return nil, e
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, sourceNotReady("GET %s: reading the body: %w", rawURL, err)
	}
	if int64(len(b)) > limit {
		return nil, sourceNotReady("GET %s: larger than %d bytes", rawURL, limit)
	}
	return b, nil
}

// describeNetError names the kind of a network failure for people.
func describeNetError(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return "timed out"
	case errors.As(err, &dnsErr):
		return "the host name does not resolve"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "cannot connect"
	default:
		return "request failed"
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// sameHost says whether two URLs name the same host and port, so that credentials
// for a repository are not sent to another host its index points to.
func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Host, ub.Host) && ua.Scheme == ub.Scheme
}
