package verify_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/internal/verify"
	"kumodo.io/convoy/internal/verify/verifytest"
)

func TestHelmProvenance(t *testing.T) {
	trusted := verifytest.NewKey(t, "trusted")
	other := verifytest.NewKey(t, "other")
	archive := []byte("the archive of app-1.0.0")
	const file = "app-1.0.0.tgz"
	signed := trusted.Sign(t, archive, file)
	tamperedProv := bytes.Replace(signed, []byte("sha256:"), []byte("sha256:0"), 1)

	for _, tc := range []struct {
		name    string
		archive []byte
		prov    []byte
		keyring []byte
		file    string
		want    verify.Result
		kind    verify.Kind
		message string // a part of the error's message
	}{
		{name: "signed by a trusted key", archive: archive, prov: signed, keyring: verifytest.Keyring(t, trusted), file: file,
			want: verify.Result{Provider: verify.ProviderHelm, Identity: trusted.Fingerprint()}},
		{name: "one of several keys of the keyring", archive: archive, prov: signed,
			keyring: verifytest.Keyring(t, other, trusted), file: file,
			want: verify.Result{Provider: verify.ProviderHelm, Identity: trusted.Fingerprint()}},
		{name: "no provenance file", archive: archive, keyring: verifytest.Keyring(t, trusted), file: file,
			kind: verify.NoSignature, message: "no provenance file app-1.0.0.tgz.prov"},
		{name: "a provenance file without a signature", archive: archive, prov: []byte("name: app\n"),
			keyring: verifytest.Keyring(t, trusted), file: file, kind: verify.NoSignature},
		{name: "signed by another key", archive: archive, prov: other.Sign(t, archive, file),
			keyring: verifytest.Keyring(t, trusted), file: file, kind: verify.WrongKey,
			message: "signed by key " + other.Fingerprint() + ", which is not in the keyring"},
		{name: "tampered archive", archive: []byte("the archive of app-1.0.0, changed"), prov: signed,
			keyring: verifytest.Keyring(t, trusted), file: file, kind: verify.DigestMismatch, message: "does not match the archive"},
		{name: "altered provenance file", archive: archive, prov: tamperedProv,
			keyring: verifytest.Keyring(t, trusted), file: file, kind: verify.DigestMismatch},
		{name: "provenance of another file", archive: archive, prov: signed, keyring: verifytest.Keyring(t, trusted),
			file: "app-2.0.0.tgz", kind: verify.DigestMismatch},
		{name: "empty keyring", archive: archive, prov: signed, file: file, kind: verify.Misconfigured},
		{name: "keyring that does not parse", archive: archive, prov: signed, keyring: []byte("not a key"), file: file,
			kind: verify.Misconfigured},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := verify.HelmProvenance(tc.archive, tc.prov, tc.keyring, tc.file)
			if diff := cmp.Diff(tc.kind, verify.KindOf(err)); diff != "" {
				t.Fatalf("kind (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.message) {
					t.Errorf("error %q does not say %q", err, tc.message)
				}
				if !strings.Contains(err.Error(), tc.file) {
					t.Errorf("error %q does not name the chart %s", err, tc.file)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}
