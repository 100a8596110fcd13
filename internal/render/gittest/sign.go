package gittest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	git "github.com/go-git/go-git/v5"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// SigningKey signs commits (a git.Signer for Repo.SignedCommit) with a key made
// for the test; Public is what a Secret's keys holds to trust it, and Fingerprint
// the identity a verification reports.
type SigningKey struct {
	git.Signer
	// Public is the armored PGP public key block, or the authorized_keys line of
	// the SSH key.
	Public []byte
	// Fingerprint is the PGP primary key's fingerprint (upper-case hex), or the
	// SSH key's SHA256:… fingerprint.
	Fingerprint string
}

// PGPKey generates a PGP key (EdDSA, Curve25519) named name.
func PGPKey(t TB, name string) *SigningKey {
	t.Helper()
	e, err := openpgp.NewEntity(name, "test", name+"@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatal(err)
	}
	var pub bytes.Buffer
	w, err := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pub.WriteString("\n")
	return &SigningKey{Signer: pgpSigner{e}, Public: pub.Bytes(), Fingerprint: fmt.Sprintf("%X", e.PrimaryKey.Fingerprint)}
}

type pgpSigner struct{ e *openpgp.Entity }

func (s pgpSigner) Sign(message io.Reader) ([]byte, error) {
	var sig bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&sig, s.e, message, nil); err != nil {
		return nil, err
	}
	return sig.Bytes(), nil
}

// SSHKey generates an ed25519 SSH key; it signs as git does with gpg.format ssh
// (ssh-keygen -Y sign -n git, SHA-512).
func SSHKey(t TB) *SigningKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return &SigningKey{Signer: sshSigner{signer}, Public: ssh.MarshalAuthorizedKey(signer.PublicKey()),
		Fingerprint: ssh.FingerprintSHA256(signer.PublicKey())}
}

type sshSigner struct{ s ssh.Signer }

func (s sshSigner) Sign(message io.Reader) ([]byte, error) {
	sig, err := sshsig.Sign(message, s.s, sshsig.HashSHA512, "git")
	if err != nil {
		return nil, err
	}
	return sshsig.Armor(sig), nil
}

// Tampered signs other content than the commit with k's key: the commit carries
// a signature by a trusted key that is not a signature of it.
func (k *SigningKey) Tampered() git.Signer { return tampered{k.Signer} }

type tampered struct{ s git.Signer }

func (t tampered) Sign(message io.Reader) ([]byte, error) {
	b, err := io.ReadAll(message)
	if err != nil {
		return nil, err
	}
	return t.s.Sign(bytes.NewReader(append(b, "tampered\n"...)))
}
