package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/internal/render/gittest"
)

// commitSignedBy makes a commit in a new repository, signed by signer (nil:
// unsigned), and returns it as read back from the repository's storage.
func commitSignedBy(t *testing.T, signer git.Signer) *object.Commit {
	t.Helper()
	repo, err := git.Init(memory.NewStorage(), memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	f, err := wt.Filesystem.Create("Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("apiVersion: v2\nname: app\nversion: 1.0.0\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("Chart.yaml"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("chart 1.0.0", &git.CommitOptions{Signer: signer,
		Author: &object.Signature{Name: "test", Email: "test@example.com", When: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(h)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGitCommit(t *testing.T) {
	pgp, otherPGP := gittest.PGPKey(t, "release"), gittest.PGPKey(t, "intruder")
	sshKey, otherSSH := gittest.SSHKey(t), gittest.SSHKey(t)
	join := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	both := join([]byte("# the release team\n\n"), pgp.Public, sshKey.Public)
	for name, tc := range map[string]struct {
		signer git.Signer
		keys   []byte
		want   Result
		// kind is the failure's Kind; "" for none.
		kind Kind
		// says is in the failure's message.
		says string
	}{
		"PGP, trusted":                      {signer: pgp, keys: pgp.Public, want: Result{Provider: ProviderGit, Identity: pgp.Fingerprint}},
		"SSH, trusted":                      {signer: sshKey, keys: sshKey.Public, want: Result{Provider: ProviderGit, Identity: sshKey.Fingerprint}},
		"PGP among PGP and SSH keys":        {signer: pgp, keys: both, want: Result{Provider: ProviderGit, Identity: pgp.Fingerprint}},
		"SSH among PGP and SSH keys":        {signer: sshKey, keys: both, want: Result{Provider: ProviderGit, Identity: sshKey.Fingerprint}},
		"SSH, second of two SSH keys":       {signer: sshKey, keys: join(otherSSH.Public, sshKey.Public), want: Result{Provider: ProviderGit, Identity: sshKey.Fingerprint}},
		"PGP, second of two PGP key blocks": {signer: pgp, keys: join(otherPGP.Public, pgp.Public), want: Result{Provider: ProviderGit, Identity: pgp.Fingerprint}},
		"unsigned":                          {keys: both, kind: NoSignature, says: "not signed"},
		"PGP, another PGP key":              {signer: otherPGP, keys: both, kind: WrongKey, says: otherPGP.Fingerprint},
		"SSH, another SSH key":              {signer: otherSSH, keys: both, kind: WrongKey, says: otherSSH.Fingerprint},
		"PGP, only SSH keys trusted":        {signer: pgp, keys: sshKey.Public, kind: WrongKey, says: pgp.Fingerprint},
		"SSH, only PGP keys trusted":        {signer: sshKey, keys: pgp.Public, kind: WrongKey, says: sshKey.Fingerprint},
		"PGP, of other content":             {signer: pgp.Tampered(), keys: both, kind: DigestMismatch, says: "not a signature of this commit"},
		"SSH, of other content":             {signer: sshKey.Tampered(), keys: both, kind: DigestMismatch, says: "not a signature of this commit"},
		"no keys":                           {signer: pgp, keys: nil, kind: Misconfigured, says: "no PGP public key block and no SSH public key"},
		"only comments":                     {signer: pgp, keys: []byte("# nobody\n"), kind: Misconfigured, says: "no PGP public key block"},
		"a line that is no key":             {signer: sshKey, keys: join(sshKey.Public, []byte("ssh-ed25519 AAAAnotbase64\n")), kind: Misconfigured, says: "line 2"},
		"a PGP block without its end":       {signer: pgp, keys: pgp.Public[:len(pgp.Public)-40], kind: Misconfigured, says: "no end"},
		"a PGP block that does not parse": {signer: pgp, keys: []byte("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nbm90IGEga2V5\n-----END PGP PUBLIC KEY BLOCK-----\n"),
			kind: Misconfigured, says: "does not parse"},
	} {
		t.Run(name, func(t *testing.T) {
			c := commitSignedBy(t, tc.signer)
			got, err := GitCommit(c, tc.keys)
			if diff := cmp.Diff(tc.kind, KindOf(err)); diff != "" {
				t.Fatalf("Kind (-want +got):\n%s\nerror: %v", diff, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
			if tc.kind != Misconfigured && !strings.Contains(err.Error(), "commit "+c.Hash.String()[:12]) {
				t.Errorf("error %q does not name the commit %s", err, c.Hash.String()[:12])
			}
		})
	}
}
