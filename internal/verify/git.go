package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// gitSSHNamespace is the namespace Git signs commits in (git's
// gpg.ssh signing: ssh-keygen -Y sign -n git).
const gitSSHNamespace = "git"

// The armor headers of the signatures a Git commit carries in its gpgsig header.
const (
	pgpSignatureHeader = "-----BEGIN PGP SIGNATURE-----"
	sshSignatureHeader = "-----BEGIN SSH SIGNATURE-----"
	pgpPublicKeyHeader = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
	pgpPublicKeyFooter = "-----END PGP PUBLIC KEY BLOCK-----"
)

// GitKeys are the keys allowed to sign a commit: PGP public keys and SSH public
// keys, as ParseGitKeys reads them.
type GitKeys struct {
	pgp openpgp.EntityList
	ssh []ssh.PublicKey
}

// ParseGitKeys reads the keys allowed to sign commits: any number of PGP armored
// public key blocks (-----BEGIN PGP PUBLIC KEY BLOCK-----) and of SSH public keys,
// one a line as in authorized_keys (options allowed; blank lines and # comments
// skipped). A block or line that does not parse, or no key at all, is a
// Misconfigured *Error.
func ParseGitKeys(keys []byte) (*GitKeys, error) {
	bad := func(format string, args ...any) error {
		return &Error{Kind: Misconfigured, Subject: "the keys", Err: fmt.Errorf(format, args...)}
	}
	var k GitKeys
	var block *strings.Builder
	lineNo := 0
	sc := bufio.NewScanner(bytes.NewReader(keys))
	sc.Buffer(make([]byte, 0, 64<<10), len(keys)+1)
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		switch {
		case block != nil:
			block.WriteString(line + "\n")
			if line == pgpPublicKeyFooter {
				list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(block.String()))
				if err != nil {
					return nil, bad("the PGP public key block ending at line %d does not parse: %v", lineNo, err)
				}
				k.pgp = append(k.pgp, list...)
				block = nil
			}
		case line == pgpPublicKeyHeader:
			block = &strings.Builder{}
			block.WriteString(line + "\n")
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
			if err != nil {
				return nil, bad("line %d is neither an SSH public key (as in authorized_keys) nor the start of a PGP public key block: %v", lineNo, err)
			}
			k.ssh = append(k.ssh, pub)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, bad("%v", err)
	}
	if block != nil {
		return nil, bad("a PGP public key block has no end (%s)", pgpPublicKeyFooter)
	}
	if len(k.pgp) == 0 && len(k.ssh) == 0 {
		return nil, bad("no PGP public key block and no SSH public key")
	}
	return &k, nil
}

// GitCommit checks that commit c is signed (its gpgsig header) by one of keys
// (see ParseGitKeys): a PGP signature with go-git's Commit.Verify, an SSH
// signature (namespace git) with sshsig over the commit without its signature.
// The Result's Identity is the fingerprint of the key that signed: the PGP
// primary key's fingerprint in upper-case hex, or the SSH key's SHA256:…
// fingerprint. Failures are *Error: NoSignature for an unsigned commit, WrongKey
// for a signature by a key not in keys (or of a kind no key verifies),
// DigestMismatch for a trusted key's signature of other content, Misconfigured
// for keys that do not parse.
func GitCommit(c *object.Commit, keys []byte) (Result, error) {
	k, err := ParseGitKeys(keys)
	if err != nil {
		return Result{}, err
	}
	return k.Commit(c)
}

// Commit is GitCommit with parsed keys.
func (k *GitKeys) Commit(c *object.Commit) (Result, error) {
	subject := "commit " + shortHash(c.Hash)
	fail := func(kind Kind, format string, args ...any) (Result, error) {
		return Result{}, &Error{Kind: kind, Subject: subject, Err: fmt.Errorf(format, args...)}
	}
	sig := strings.TrimSpace(c.PGPSignature)
	switch {
	case sig == "":
		return Result{}, &Error{Kind: NoSignature, Subject: subject,
			Err: errors.New("the commit is not signed; push a commit signed with a trusted key (git commit -S)")}
	case strings.HasPrefix(sig, sshSignatureHeader):
		return k.sshCommit(c, sig, fail)
	case strings.HasPrefix(sig, pgpSignatureHeader):
		return k.pgpCommit(c, sig, fail)
	default:
		first, _, _ := strings.Cut(sig, "\n")
		return fail(WrongKey, "the commit's signature is of a kind convoy does not verify (%q); sign with a PGP or SSH key", first)
	}
}

func (k *GitKeys) sshCommit(c *object.Commit, armored string, fail func(Kind, string, ...any) (Result, error)) (Result, error) {
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return fail(WrongKey, "the commit's SSH signature does not parse: %v", err)
	}
	signer := ssh.FingerprintSHA256(sig.PublicKey)
	var trusted ssh.PublicKey
	for _, pub := range k.ssh {
		if ssh.FingerprintSHA256(pub) == signer {
			trusted = pub
			break
		}
	}
	if trusted == nil {
		return fail(WrongKey, "signed by the SSH key %s, which is not among the keys; add its public key to them if it is trusted", signer)
	}
	payload, err := withoutSignature(c)
	if err != nil {
		return fail(DigestMismatch, "encoding the commit without its signature: %v", err)
	}
	if err := sshsig.Verify(bytes.NewReader(payload), sig, trusted, sig.HashAlgorithm, gitSSHNamespace); err != nil {
		return fail(DigestMismatch, "the SSH signature by %s is not a signature of this commit: %v", signer, err)
	}
	return Result{Provider: ProviderGit, Identity: signer}, nil
}

func (k *GitKeys) pgpCommit(c *object.Commit, armored string, fail func(Kind, string, ...any) (Result, error)) (Result, error) {
	issuer := pgpIssuer(armored)
	if len(k.pgp) == 0 {
		return fail(WrongKey, "signed by the PGP key %s, and the keys hold no PGP key; add its public key to them if it is trusted", issuer)
	}
	var ring bytes.Buffer
	w, err := armor.Encode(&ring, openpgp.PublicKeyType, nil)
	if err != nil {
		return fail(Misconfigured, "%v", err)
	}
	for _, e := range k.pgp {
		if err := e.Serialize(w); err != nil {
			return fail(Misconfigured, "serializing the PGP key %X: %v", e.PrimaryKey.Fingerprint, err)
		}
	}
	if err := w.Close(); err != nil {
		return fail(Misconfigured, "%v", err)
	}
	entity, err := c.Verify(ring.String())
	switch {
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return fail(WrongKey, "signed by the PGP key %s, which is not among the keys; add its public key to them if it is trusted", issuer)
	case errors.Is(err, object.ErrMultipleSignatures):
		return fail(WrongKey, "the commit carries more than one signature; convoy verifies a single signer")
	case err != nil:
		return fail(DigestMismatch, "the PGP signature by %s is not a signature of this commit: %v", issuer, err)
	}
	return Result{Provider: ProviderGit, Identity: fmt.Sprintf("%X", entity.PrimaryKey.Fingerprint)}, nil
}

// pgpIssuer names the key that made an armored PGP signature, for messages: its
// issuer fingerprint or key id, "?" when the signature does not say.
func pgpIssuer(armored string) string {
	block, err := armor.Decode(strings.NewReader(armored))
	if err != nil {
		return "?"
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		return "?"
	}
	sig, ok := p.(*packet.Signature)
	switch {
	case !ok:
		return "?"
	case len(sig.IssuerFingerprint) > 0:
		return fmt.Sprintf("%X", sig.IssuerFingerprint)
	case sig.IssuerKeyId != nil:
		return fmt.Sprintf("%016X", *sig.IssuerKeyId)
	}
	return "?"
}

// withoutSignature is the commit object as signed: encoded without its gpgsig
// header.
func withoutSignature(c *object.Commit) ([]byte, error) {
	o := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(o); err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func shortHash(h plumbing.Hash) string {
	return h.String()[:12]
}
