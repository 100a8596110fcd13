// Package gittest is a Git server for tests, in process and pure Go: the smart HTTP
// protocol over https (httptest TLS, basic auth) and the SSH protocol (an
// in-process server of golang.org/x/crypto/ssh), upload-pack only, with shallow
// fetches and fetches of a reachable commit by hash, as real servers (git
// upload-pack with uploadpack.allowReachableSHA1InWant) serve them. Tests write
// commits, move and delete refs directly in the served repositories and count the
// requests.
package gittest

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/revlist"
	"github.com/go-git/go-git/v5/storage/memory"
)

// TB is what the servers need of a test (testing.TB has it); a benchmark's main
// gives its own.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Server serves Git repositories over https with basic auth.
type Server struct {
	// URL is the server's base URL; a repository is URL + "/" + name.
	URL string
	// Username and Password are the credentials it asks for; empty: none.
	Username, Password string

	srv *httptest.Server

	mu       sync.Mutex
	repos    map[string]*Repo
	requests map[string]int // by "GET info/refs" or "POST git-upload-pack"
	wants    int            // commits sent in packs
}

// NewServer starts an https Git server that asks for username and password
// (none when both are empty). It stops at the end of the test.
func NewServer(t TB, username, password string) *Server {
	t.Helper()
	s := &Server{Username: username, Password: password, repos: map[string]*Repo{}, requests: map[string]int{}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// CA is the PEM certificate of the server's CA, for a Secret's caFile.
func (s *Server) CA() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// TLSConfig is a client configuration that trusts the server.
func (s *Server) TLSConfig() *tls.Config {
	return s.srv.Client().Transport.(*http.Transport).TLSClientConfig
}

// Repo creates (or returns) the repository name, served at URL/name.
func (s *Server) Repo(t TB, name string) *Repo {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.repos[name]; ok {
		return r
	}
	r := newRepo(t)
	s.repos[name] = r
	return r
}

// RepoURL is the URL of repository name.
func (s *Server) RepoURL(name string) string { return s.URL + "/" + name }

// Requests returns how many requests the server answered, by kind ("GET
// info/refs", "POST git-upload-pack"), authorized or not.
func (s *Server) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.requests {
		out[k] = v
	}
	return out
}

// Listings is how many ref listings (GET info/refs) the server answered.
func (s *Server) Listings() int { return s.Requests()["GET info/refs"] }

// Fetches is how many packs (POST git-upload-pack) the server sent.
func (s *Server) Fetches() int { return s.Requests()["POST git-upload-pack"] }

func (s *Server) serveHTTP(w http.ResponseWriter, req *http.Request) {
	path := strings.TrimPrefix(req.URL.Path, "/")
	var name, kind string
	switch {
	case req.Method == http.MethodGet && strings.HasSuffix(path, "/info/refs"):
		name, kind = strings.TrimSuffix(path, "/info/refs"), "GET info/refs"
	case req.Method == http.MethodPost && strings.HasSuffix(path, "/git-upload-pack"):
		name, kind = strings.TrimSuffix(path, "/git-upload-pack"), "POST git-upload-pack"
	default:
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	s.mu.Lock()
	s.requests[kind]++
	repo := s.repos[name]
	s.mu.Unlock()
	if s.Username != "" || s.Password != "" {
		u, p, ok := req.BasicAuth()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if u != s.Username || p != s.Password {
			http.Error(w, "wrong credentials", http.StatusForbidden)
			return
		}
	}
	if repo == nil {
		http.Error(w, "repository not found", http.StatusNotFound)
		return
	}
	if kind == "GET info/refs" {
		if req.URL.Query().Get("service") != "git-upload-pack" {
			http.Error(w, "only git-upload-pack", http.StatusForbidden)
			return
		}
		ar, err := repo.advertise()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		ar.Prefix = [][]byte{[]byte("# service=git-upload-pack"), pktline.Flush}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		_ = ar.Encode(w)
		return
	}
	upReq := packp.NewUploadPackRequest()
	if err := upReq.Decode(req.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var buf bytes.Buffer
	n, err := repo.uploadPack(upReq, &buf)
	if err != nil {
		// As git upload-pack: an error packet the client shows.
		w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
		_ = pktline.NewEncoder(w).Encodef("ERR %s\n", err)
		return
	}
	s.mu.Lock()
	s.wants += n
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	_, _ = io.Copy(w, &buf)
}

// Repo is a served repository.
type Repo struct {
	mu   sync.Mutex
	repo *git.Repository
	wt   *git.Worktree
	now  time.Time
}

func newRepo(t TB) *Repo {
	repo, err := git.Init(memory.NewStorage(), memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{repo: repo, wt: wt, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Commit writes files (path → content; an empty content deletes the file) on
// branch, on top of its tip (or of nothing for a new branch), and returns the
// commit's hash.
func (r *Repo) Commit(t TB, branch, message string, files map[string]string) string {
	t.Helper()
	return r.SignedCommit(t, branch, message, files, nil)
}

// SignedCommit is Commit with the commit signed by signer (its gpgsig header);
// nil: unsigned. See PGPKey and SSHKey.
func (r *Repo) SignedCommit(t TB, branch, message string, files map[string]string, signer git.Signer) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := plumbing.NewBranchReferenceName(branch)
	tip, err := r.repo.Reference(ref, true)
	switch {
	case err == nil:
		if err := r.wt.Checkout(&git.CheckoutOptions{Branch: ref, Force: true}); err != nil {
			t.Fatal(err)
		}
	case err == plumbing.ErrReferenceNotFound:
		_ = tip
		if err := r.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref)); err != nil {
			t.Fatal(err)
		}
		// An orphan branch: start from an empty worktree.
		if err := r.wt.Reset(&git.ResetOptions{Mode: git.HardReset}); err != nil && !strings.Contains(err.Error(), "reference not found") {
			t.Fatal(err)
		}
	default:
		t.Fatal(err)
	}
	for path, content := range files {
		if content == "" {
			if _, err := r.wt.Remove(path); err != nil {
				t.Fatalf("remove %s: %v", path, err)
			}
			continue
		}
		f, err := r.wt.Filesystem.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.wt.Add(path); err != nil {
			t.Fatal(err)
		}
	}
	r.now = r.now.Add(time.Minute)
	h, err := r.wt.Commit(message, &git.CommitOptions{
		Author: &object.Signature{Name: "test", Email: "test@example.com", When: r.now}, AllowEmptyCommits: true,
		Signer: signer,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// Tag creates a lightweight tag, or an annotated one when annotated, at commit.
func (r *Repo) Tag(t TB, name, commit string, annotated bool) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var opts *git.CreateTagOptions
	if annotated {
		opts = &git.CreateTagOptions{Tagger: &object.Signature{Name: "test", Email: "test@example.com", When: r.now}, Message: name}
	}
	if _, err := r.repo.CreateTag(name, plumbing.NewHash(commit), opts); err != nil {
		t.Fatal(err)
	}
}

// SetBranch points branch at commit, as a force push does.
func (r *Repo) SetBranch(t TB, branch, commit string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), plumbing.NewHash(commit))); err != nil {
		t.Fatal(err)
	}
}

// DeleteBranch removes a branch: its commits are no longer reachable from it.
func (r *Repo) DeleteBranch(t TB, branch string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.repo.Storer.RemoveReference(plumbing.NewBranchReferenceName(branch)); err != nil {
		t.Fatal(err)
	}
}

// advertise lists the repository's refs (annotated tags peeled) with the
// capabilities convoy's client uses.
func (r *Repo) advertise() (*packp.AdvRefs, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ar := packp.NewAdvRefs()
	for _, c := range []capability.Capability{capability.OFSDelta, capability.Shallow, capability.AllowReachableSHA1InWant} {
		if err := ar.Capabilities.Set(c); err != nil {
			return nil, err
		}
	}
	if err := ar.Capabilities.Set(capability.Agent, "gittest/1"); err != nil {
		return nil, err
	}
	iter, err := r.repo.References()
	if err != nil {
		return nil, err
	}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference {
			return nil
		}
		ar.References[ref.Name().String()] = ref.Hash()
		if ref.Name().IsTag() {
			if tag, err := r.repo.TagObject(ref.Hash()); err == nil {
				ar.Peeled[ref.Name().String()] = tag.Target
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if head, err := r.repo.Reference(plumbing.HEAD, true); err == nil {
		h := head.Hash()
		ar.Head = &h
	}
	return ar, nil
}

// uploadPack answers a fetch: the wanted commits must be reachable from a ref; with
// a depth, only the wanted commits and their trees are sent (as shallow). It
// returns how many commits were wanted.
func (r *Repo) uploadPack(req *packp.UploadPackRequest, w io.Writer) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.repo.Storer
	reachable, err := r.reachable()
	if err != nil {
		return 0, err
	}
	var objs []plumbing.Hash
	for _, want := range req.Wants {
		if !reachable[want] {
			return 0, fmt.Errorf("upload-pack: not our ref %s", want)
		}
	}
	if req.Depth != nil && !req.Depth.IsZero() {
		for i, want := range req.Wants {
			if tag, err := object.GetTag(st, want); err == nil { // an annotated tag: it and its commit
				objs = append(objs, want)
				want = tag.Target
				req.Wants[i] = want
			}
			c, err := object.GetCommit(st, want)
			if err != nil {
				return 0, err
			}
			objs = append(objs, want, c.TreeHash)
			tree, err := c.Tree()
			if err != nil {
				return 0, err
			}
			walker := object.NewTreeWalker(tree, true, nil)
			for {
				_, e, err := walker.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					walker.Close()
					return 0, err
				}
				objs = append(objs, e.Hash)
			}
			walker.Close()
		}
	} else if objs, err = revlist.Objects(st, req.Wants, nil); err != nil {
		return 0, err
	}
	resp := packp.NewUploadPackResponse(req)
	resp.ShallowUpdate.Shallows = nil
	if req.Depth != nil && !req.Depth.IsZero() {
		resp.ShallowUpdate.Shallows = req.Wants
	}
	var pack bytes.Buffer
	if _, err := packfile.NewEncoder(&pack, st, false).Encode(dedupe(objs), 10); err != nil {
		return 0, err
	}
	full := packp.NewUploadPackResponseWithPackfile(req, io.NopCloser(&pack))
	full.ShallowUpdate = resp.ShallowUpdate
	return len(req.Wants), full.Encode(w)
}

// reachable is every commit reachable from a ref.
func (r *Repo) reachable() (map[plumbing.Hash]bool, error) {
	out := map[plumbing.Hash]bool{}
	iter, err := r.repo.References()
	if err != nil {
		return nil, err
	}
	var tips []plumbing.Hash
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			h := ref.Hash()
			if tag, err := r.repo.TagObject(h); err == nil {
				out[h] = true // a tag object may be wanted too
				h = tag.Target
			}
			tips = append(tips, h)
		}
		return nil
	})
	for _, tip := range tips {
		c, err := r.repo.CommitObject(tip)
		if err != nil {
			continue
		}
		_ = object.NewCommitPreorderIter(c, nil, nil).ForEach(func(c *object.Commit) error {
			if out[c.Hash] {
				return nil
			}
			out[c.Hash] = true
			return nil
		})
	}
	return out, nil
}

func dedupe(hs []plumbing.Hash) []plumbing.Hash {
	seen := map[plumbing.Hash]bool{}
	out := hs[:0]
	for _, h := range hs {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// Chart is the files of a small chart in folder dir: a ConfigMap named <name>
// whose data.version is the chart's version, plus extra files (path relative to
// dir → content).
func Chart(dir, name, version string, extra map[string]string) map[string]string {
	p := func(f string) string {
		if dir == "" {
			return f
		}
		return dir + "/" + f
	}
	files := map[string]string{
		p("Chart.yaml"):  fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", name, version),
		p("values.yaml"): "greeting: hello\n",
		p("templates/configmap.yaml"): "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-" + name +
			"\ndata:\n  version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting | quote }}\n",
	}
	for f, c := range extra {
		files[p(f)] = c
	}
	return files
}
