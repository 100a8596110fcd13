// Package verifytest makes what tests of chart verification need: PGP keys made in
// the test, their public keyrings, and provenance files signed with Helm's own
// signing code (provenance.Signatory.ClearSign), as `helm package --sign` makes
// them.
package verifytest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"helm.sh/helm/v4/pkg/provenance"
)

// Key is a PGP key pair made for a test.
type Key struct {
	Entity *openpgp.Entity
}

// NewKey makes an Ed25519 PGP key (fast to make) with the identity name.
func NewKey(t testing.TB, name string) *Key {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", name+"@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatal(err)
	}
	return &Key{Entity: e}
}

// Fingerprint is the key's fingerprint, upper-case hex, as status.render.verified
// reports it.
func (k *Key) Fingerprint() string {
	return strings.ToUpper(fmt.Sprintf("%x", k.Entity.PrimaryKey.Fingerprint))
}

// Keyring is an armored public keyring of keys, as `gpg --export --armor` writes it.
func Keyring(t testing.TB, keys ...*Key) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := k.Entity.Serialize(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Sign returns the provenance file of the archive named file, signed by k.
func (k *Key) Sign(t testing.TB, archive []byte, file string) []byte {
	t.Helper()
	s := &provenance.Signatory{Entity: k.Entity}
	name, version := chartOf(file)
	prov, err := s.ClearSign(archive, file, fmt.Appendf(nil, "apiVersion: v2\nname: %s\nversion: %s\n", name, version))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(prov)
}

// chartOf splits podinfo-6.5.0.tgz into podinfo and 6.5.0.
func chartOf(file string) (name, version string) {
	base := strings.TrimSuffix(file, ".tgz")
	if i := strings.LastIndex(base, "-"); i > 0 {
		return base[:i], base[i+1:]
	}
	return base, ""
}
