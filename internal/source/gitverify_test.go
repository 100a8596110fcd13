package source

import (
	"context"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/render/gittest"
	"kumodo.io/convoy/internal/verify"
)

// verifiedGit is the chart source of folder path of repoURL at ref, verified by the
// keys of the Secret release-signers.
func verifiedGit(repoURL, path string, ref v1alpha1.GitRef) v1alpha1.ChartSource {
	return v1alpha1.ChartSource{Git: &v1alpha1.GitChartSource{URL: repoURL, Ref: ref, Path: path,
		Verify: &v1alpha1.GitVerification{SecretRef: v1alpha1.LocalObjectReference{Name: "release-signers"}}}}
}

// withKeys is the test server's credentials with the keys of the verify Secret.
func withKeys(srv *gittest.Server, keys []byte) *Credentials {
	c := gitCreds(srv)
	c.VerifyKeys = keys
	return c
}

// A chart from Git with verify is fetched only when a trusted key signed its
// commit; otherwise Fetch returns no chart, only VerificationFailed naming the
// commit and the kind of failure.
func TestGitVerifiedFetch(t *testing.T) {
	pgp, sshKey, intruder := gittest.PGPKey(t, "release"), gittest.SSHKey(t), gittest.SSHKey(t)
	trusted := append(append([]byte("# release team\n"), pgp.Public...), sshKey.Public...)
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	chart := gittest.Chart("charts/web", "web", "1.0.0", nil)
	cases := map[string]struct {
		signer git.Signer
		keys   []byte
		want   *verify.Result
		kind   verify.Kind
		says   string
	}{
		"PGP, trusted":               {signer: pgp, keys: trusted, want: &verify.Result{Provider: verify.ProviderGit, Identity: pgp.Fingerprint}},
		"SSH, trusted":               {signer: sshKey, keys: trusted, want: &verify.Result{Provider: verify.ProviderGit, Identity: sshKey.Fingerprint}},
		"unsigned":                   {keys: trusted, kind: verify.NoSignature, says: "not signed"},
		"another key":                {signer: intruder, keys: trusted, kind: verify.WrongKey, says: intruder.Fingerprint},
		"signature of other content": {signer: sshKey.Tampered(), keys: trusted, kind: verify.DigestMismatch, says: "not a signature of this commit"},
		"the Secret has no keys":     {signer: sshKey, keys: nil, kind: "", says: "has no key keys"},
		"keys that do not parse":     {signer: sshKey, keys: []byte("ssh-ed25519 not-a-key\n"), kind: verify.Misconfigured, says: "line 1"},
	}
	// Each case's commit on a branch of its own, all pushed before the first listing.
	branches, commits := map[string]string{}, map[string]string{}
	for name, tc := range cases {
		branches[name] = strings.NewReplacer(" ", "-", ",", "").Replace(name)
		commits[name] = repo.SignedCommit(t, branches[name], name, chart, tc.signer)
	}
	r, _ := testRenderer(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			branch, commit := branches[name], commits[name]
			got, err := r.Fetch(context.Background(), verifiedGit(srv.RepoURL("charts"), "charts/web", v1alpha1.GitRef{Branch: branch}), 0, withKeys(srv, tc.keys))
			if tc.want != nil {
				if err != nil {
					t.Fatalf("Fetch: %v", err)
				}
				if diff := cmp.Diff(tc.want, got.Verified); diff != "" {
					t.Errorf("Verified (-want +got):\n%s", diff)
				}
				if got.Commit != commit {
					t.Errorf("commit %s, want %s", got.Commit, commit)
				}
				return
			}
			if got != nil {
				t.Errorf("Fetch returned the chart %s of a commit that failed its verification", got.What)
			}
			if reason := reasons.Of(err, ""); reason != v1alpha1.ReasonVerificationFailed {
				t.Fatalf("reason %q, want VerificationFailed: %v", reason, err)
			}
			if diff := cmp.Diff(tc.kind, verify.KindOf(err)); diff != "" {
				t.Errorf("Kind (-want +got):\n%s\n%v", diff, err)
			}
			for _, s := range []string{tc.says, commit[:12], "release-signers"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// The commit store and the verifications are shared between Releases: a commit
// another Release (without verify) fetched is still verified, and a commit verified
// under some keys is verified again under others.
func TestGitVerificationIsPerKeys(t *testing.T) {
	signer, other := gittest.SSHKey(t), gittest.SSHKey(t)
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	unsigned := repo.Commit(t, "main", "unsigned", gittest.Chart("", "web", "1.0.0", nil))
	r, _ := testRenderer(t)
	plain := v1alpha1.ChartSource{Git: &v1alpha1.GitChartSource{URL: srv.RepoURL("charts"), Ref: v1alpha1.GitRef{Branch: "main"}}}
	if c, err := r.Fetch(context.Background(), plain, 0, gitCreds(srv)); err != nil || c.Commit != unsigned || c.Verified != nil {
		t.Fatalf("without verify: %+v, %v", c, err)
	}
	src := verifiedGit(srv.RepoURL("charts"), "", v1alpha1.GitRef{Branch: "main"})
	if _, err := r.Fetch(context.Background(), src, 0, withKeys(srv, signer.Public)); verify.KindOf(err) != verify.NoSignature {
		t.Errorf("the stored unsigned commit with verify: %v, want NoSignature", err)
	}

	signed := repo.SignedCommit(t, "main", "signed", gittest.Chart("", "web", "1.1.0", nil), signer)
	src.Git.Ref = v1alpha1.GitRef{Commit: signed}
	if c, err := r.Fetch(context.Background(), src, 0, withKeys(srv, signer.Public)); err != nil || c.Verified == nil || c.Verified.Identity != signer.Fingerprint {
		t.Fatalf("the signed commit: %+v, %v", c, err)
	}
	if _, err := r.Fetch(context.Background(), src, 0, withKeys(srv, other.Public)); verify.KindOf(err) != verify.WrongKey {
		t.Errorf("the signed commit under other keys: %v, want WrongKey", err)
	}
	if c, err := r.Fetch(context.Background(), src, 0, withKeys(srv, signer.Public)); err != nil || c.Verified == nil {
		t.Errorf("the signed commit again under its keys: %+v, %v", c, err)
	}
}

// With verify, a resolution (a ReleaseSet's status.source) never names a commit no
// trusted key signed: the branch's unsigned tip is VerificationFailed, and without
// verify it resolves as before.
func TestResolveGitVerifies(t *testing.T) {
	signer := gittest.PGPKey(t, "release")
	srv := gittest.NewServer(t, gitUser, gitPassword)
	repo := srv.Repo(t, "charts")
	signed := repo.SignedCommit(t, "main", "signed", gittest.Chart("", "web", "1.0.0", nil), signer)
	r, clk := testRenderer(t)
	src := verifiedGit(srv.RepoURL("charts"), "", v1alpha1.GitRef{Branch: "main"})
	got, err := r.Resolve(context.Background(), src, 0, withKeys(srv, signer.Public))
	if err != nil || got.Commit != signed {
		t.Fatalf("the signed tip: %+v, %v; want commit %s", got, err, signed)
	}

	unsigned := repo.Commit(t, "main", "unsigned", gittest.Chart("", "web", "1.1.0", nil))
	clk.Step(2 * DefaultIndexTTL)
	got, err = r.Resolve(context.Background(), src, 0, withKeys(srv, signer.Public))
	if reasons.Of(err, "") != v1alpha1.ReasonVerificationFailed || verify.KindOf(err) != verify.NoSignature || !strings.Contains(err.Error(), unsigned[:12]) {
		t.Errorf("the unsigned tip: %+v, %v; want VerificationFailed (NoSignature) naming %s", got, err, unsigned[:12])
	}
	if got.Commit != "" {
		t.Errorf("resolved to %s, want nothing", got.Commit)
	}

	src.Git.Verify = nil
	if got, err := r.Resolve(context.Background(), src, 0, gitCreds(srv)); err != nil || got.Commit != unsigned {
		t.Errorf("without verify: %+v, %v; want commit %s", got, err, unsigned)
	}
}
