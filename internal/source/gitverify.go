package source

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/object"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/verify"
)

// maxGitSignatures bounds the verifications remembered; past it they are
// forgotten all at once (each costs one signature check to redo).
const maxGitSignatures = 4096

// gitSignatures remembers the verification of each commit under each set of
// trusted keys: a commit's hash names its content, signature included, so the
// outcome of one check holds for good.
type gitSignatures struct {
	mu      sync.Mutex
	entries map[string]gitSignature
}

type gitSignature struct {
	result verify.Result
	err    error // a *verify.Error
}

func (s *gitSignatures) get(key string) (gitSignature, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	return e, ok
}

func (s *gitSignatures) put(key string, e gitSignature) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil || len(s.entries) >= maxGitSignatures {
		s.entries = map[string]gitSignature{}
	}
	s.entries[key] = e
}

// verifyGit checks, when src has verify, that commit is signed by one of the keys
// of its Secret (creds.VerifyKeys), reading the commit object with read (from the
// commit store or a repository on disk). It returns what verified the commit, nil
// when src asks for no verification. A commit no trusted key signed, or keys that
// are missing or do not parse, is VerificationFailed; failing to read the commit
// is SourceNotReady.
func (f *Fetcher) verifyGit(src *v1alpha1.GitChartSource, creds *Credentials, repo, commit string, read func(commit string, fn func(*object.Commit) error) error) (*verify.Result, error) {
	if src.Verify == nil {
		return nil, nil
	}
	secret := src.Verify.SecretRef.Name
	var keys []byte
	if creds != nil {
		keys = creds.VerifyKeys
	}
	if len(keys) == 0 {
		return nil, verificationFailed("Git repository %s: commit %s is not verified: the Secret %s of spec.chart.git.verify.secretRef has no key keys; put the PGP public key blocks and SSH public keys trusted to sign the commits in it",
			repo, shortCommit(commit), secret)
	}
	sum := sha256.Sum256(keys)
	key := commit + "|" + hex.EncodeToString(sum[:])
	e, ok := f.gitSignatures.get(key)
	if !ok {
		trusted, err := verify.ParseGitKeys(keys)
		if err != nil {
			return nil, verificationFailed("Git repository %s: commit %s is not verified: the key keys of the Secret %s of spec.chart.git.verify.secretRef: %w", repo, shortCommit(commit), secret, err)
		}
		err = read(commit, func(c *object.Commit) error {
			e.result, e.err = trusted.Commit(c)
			return nil
		})
		if err != nil {
			var se *Error
			if errors.As(err, &se) {
				return nil, err
			}
			return nil, sourceNotReady("Git repository %s: reading commit %s to verify its signature: %w", repo, shortCommit(commit), err)
		}
		f.gitSignatures.put(key, e)
	}
	if e.err != nil {
		return nil, verificationFailed("Git repository %s: %w; convoy renders only commits signed by a key of the Secret %s of spec.chart.git.verify.secretRef", repo, e.err, secret)
	}
	r := e.result
	return &r, nil
}
