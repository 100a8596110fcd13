package backup

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var release = []byte(`{"apiVersion":"convoy.kumodo.io/v1alpha1","kind":"Release","metadata":{"name":"a"}}`)

// backupFile writes a backup of kvs as Save does.
func backupFile(t *testing.T, kvs ...KeyValue) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := newWriter(&b, Header{Prefix: "/registry/convoy.kumodo.io", Revision: 42, Time: time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range kvs {
		if err := w.add(kv); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.Bytes()
}

// A backup reads back record by record, with its header and a trailer that counts
// and sums the records and names their API versions.
func TestReadWhatWasWritten(t *testing.T) {
	kvs := []KeyValue{
		{Key: []byte("/registry/convoy.kumodo.io/releases/ns/a"), Value: release},
		{Key: []byte("/registry/convoy.kumodo.io/releases/ns/b"), Value: release},
	}
	var got []KeyValue
	h, tr, err := Read(bytes.NewReader(backupFile(t, kvs...)), func(kv KeyValue) error { got = append(got, kv); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kvs, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if h.Format != Format || h.Prefix != "/registry/convoy.kumodo.io" || h.Revision != 42 {
		t.Errorf("header %+v", h)
	}
	if tr.Keys != 2 || tr.Bytes != int64(2*len(release)) || !cmp.Equal(tr.APIVersions, []string{"convoy.kumodo.io/v1alpha1"}) {
		t.Errorf("trailer %+v", tr)
	}
}

// A file that is not a whole backup is refused before any record counts.
func TestReadRefusesAnythingButAWholeBackup(t *testing.T) {
	whole := gunzip(t, backupFile(t, KeyValue{Key: []byte("/registry/convoy.kumodo.io/releases/ns/a"), Value: release}))
	lines := strings.SplitAfter(whole, "\n")
	cases := map[string]struct {
		file []byte
		want string
	}{
		"not gzip":         {[]byte("etcd snapshot"), "not a whole convoy backup"},
		"empty":            {gzipped(""), "not a whole convoy backup: empty"},
		"cut short":        {gzipped(lines[0] + lines[1]), "no trailer (cut short?)"},
		"a record less":    {gzipped(lines[0] + lines[2]), "are not the ones its trailer names"},
		"a record altered": {gzipped(lines[0] + strings.Replace(lines[1], `"k":"L3`, `"k":"L4`, 1) + lines[2]), "are not the ones its trailer names"},
		"another format": {gzipped(strings.Replace(lines[0], Format, "convoy.kumodo.io/backup-v2", 1) + lines[1] + lines[2]),
			`the backup's format is "convoy.kumodo.io/backup-v2", this convoy reads "convoy.kumodo.io/backup-v1"`},
		"no header": {gzipped(lines[1] + lines[2]), "no header"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := Read(bytes.NewReader(tc.file), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read: %v, want an error with %q", err, tc.want)
			}
			if name != "another format" && !errors.Is(err, ErrCorrupt) {
				t.Errorf("%v is not ErrCorrupt", err)
			}
		})
	}
}

// Backups are named by their time, so that names sort as times do; Prune keeps the
// newest.
func TestNamesSortAsTimesAndPruneKeepsTheNewest(t *testing.T) {
	base := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	dir := Dir(t.TempDir())
	var want []string
	for i := range 4 {
		n := Name(base.Add(time.Duration(i) * 1500 * time.Millisecond))
		if err := dir.Put(t.Context(), n, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	pruned, err := Prune(t.Context(), dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[:2], pruned); diff != "" {
		t.Errorf("pruned (-want +got):\n%s", diff)
	}
	left, err := dir.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[2:], left); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if latest, _ := Latest(t.Context(), dir); latest != want[3] {
		t.Errorf("Latest = %s, want %s", latest, want[3])
	}
}

func testTime(i int) time.Time { return time.Date(2026, 12, 6, 2, i, 0, 0, time.UTC) }
