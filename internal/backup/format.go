// Package backup takes and restores backups of convoy's objects in etcd: every key
// under convoy's etcd prefix, read at one revision through etcd's client API, in one
// gzipped file; restored through the client API into a running etcd. It decides
// whether a backup may be restored (Check: its format, its prefix, the API versions
// of its objects) before it writes anything. It never touches an etcd data
// directory and knows nothing of Kubernetes objects beyond their apiVersion.
package backup

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"time"
)

// Format names the layout of a backup file; a reader refuses another.
const Format = "convoy.kumodo.io/backup-v1"

// Header opens a backup: what was read, from where, when.
type Header struct {
	Format string `json:"format"`
	// Prefix is convoy apiserver's --etcd-prefix the keys were read under.
	Prefix string `json:"prefix"`
	// Revision is the etcd revision every key was read at.
	Revision int64 `json:"revision"`
	// Time is when the backup was taken.
	Time time.Time `json:"time"`
}

// Trailer closes a backup and lets a reader check that it is whole.
type Trailer struct {
	// Keys and Bytes count the key-value records (Bytes: their values).
	Keys  int   `json:"keys"`
	Bytes int64 `json:"bytes"`
	// APIVersions of the stored objects, sorted.
	APIVersions []string `json:"apiVersions"`
	// SHA256 of the records' lines, hex.
	SHA256 string `json:"sha256"`
}

// KeyValue is one etcd key and its value.
type KeyValue struct {
	Key   []byte `json:"k"`
	Value []byte `json:"v"`
}

// line is one line of a backup: exactly one field is set.
type line struct {
	Header  *Header   `json:"header,omitempty"`
	KV      *KeyValue `json:"kv,omitempty"`
	Trailer *Trailer  `json:"trailer,omitempty"`
}

// writer writes a backup: NewWriter writes the header, Add each record, Close the
// trailer.
type writer struct {
	gz       *gzip.Writer
	sum      hash.Hash
	trailer  Trailer
	versions map[string]bool
}

func newWriter(w io.Writer, h Header) (*writer, error) {
	bw := &writer{gz: gzip.NewWriter(w), sum: sha256.New(), versions: map[string]bool{}}
	h.Format = Format
	if err := bw.line(line{Header: &h}, false); err != nil {
		return nil, err
	}
	return bw, nil
}

func (w *writer) line(l line, summed bool) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if summed {
		w.sum.Write(b)
	}
	_, err = w.gz.Write(b)
	return err
}

func (w *writer) add(kv KeyValue) error {
	w.trailer.Keys++
	w.trailer.Bytes += int64(len(kv.Value))
	w.versions[apiVersion(kv.Value)] = true
	return w.line(line{KV: &kv}, true)
}

func (w *writer) close() (Trailer, error) {
	w.trailer.APIVersions = sortedKeys(w.versions)
	w.trailer.SHA256 = hex.EncodeToString(w.sum.Sum(nil))
	if err := w.line(line{Trailer: &w.trailer}, false); err != nil {
		return Trailer{}, err
	}
	return w.trailer, w.gz.Close()
}

// apiVersion is the apiVersion of a stored object ("" when the value is not a JSON
// object with one, e.g. protobuf or encrypted at rest).
func apiVersion(value []byte) string {
	var tm struct {
		APIVersion string `json:"apiVersion"`
	}
	if json.Unmarshal(value, &tm) != nil {
		return ""
	}
	return tm.APIVersion
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ErrCorrupt is wrapped by the errors of a backup file that is cut short, altered
// or not a backup.
var ErrCorrupt = errors.New("not a whole convoy backup")

// Read reads a whole backup from r, calling each (when not nil) for every record in
// order, and returns its header and trailer once it checked that the records are
// the ones the trailer counts and sums. A record is handed to each before the
// check: use Verify first when nothing may be written from a bad file.
func Read(r io.Reader, each func(KeyValue) error) (Header, Trailer, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return Header{}, Trailer{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	defer gz.Close()
	br := bufio.NewReaderSize(gz, 1<<20)
	var (
		h        *Header
		t        *Trailer
		sum      = sha256.New()
		keys     int
		bytes    int64
		versions = map[string]bool{}
	)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) && len(b) == 0 {
			break
		}
		if err != nil {
			return Header{}, Trailer{}, fmt.Errorf("%w: line %d: %w", ErrCorrupt, n, err)
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			return Header{}, Trailer{}, fmt.Errorf("%w: line %d: %w", ErrCorrupt, n, err)
		}
		switch {
		case t != nil:
			return Header{}, Trailer{}, fmt.Errorf("%w: line %d follows the trailer", ErrCorrupt, n)
		case n == 1:
			if l.Header == nil {
				return Header{}, Trailer{}, fmt.Errorf("%w: no header", ErrCorrupt)
			}
			if l.Header.Format != Format {
				return Header{}, Trailer{}, fmt.Errorf("the backup's format is %q, this convoy reads %q: restore it with the convoy version that made it",
					l.Header.Format, Format)
			}
			h = l.Header
		case l.KV != nil:
			sum.Write(b)
			keys++
			bytes += int64(len(l.KV.Value))
			versions[apiVersion(l.KV.Value)] = true
			if each != nil {
				if err := each(*l.KV); err != nil {
					return Header{}, Trailer{}, err
				}
			}
		case l.Trailer != nil:
			t = l.Trailer
		default:
			return Header{}, Trailer{}, fmt.Errorf("%w: line %d is neither a record nor the trailer", ErrCorrupt, n)
		}
	}
	if h == nil {
		return Header{}, Trailer{}, fmt.Errorf("%w: empty", ErrCorrupt)
	}
	if t == nil {
		return Header{}, Trailer{}, fmt.Errorf("%w: no trailer (cut short?)", ErrCorrupt)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); t.Keys != keys || t.Bytes != bytes || t.SHA256 != got ||
		!slices.Equal(t.APIVersions, sortedKeys(versions)) {
		return Header{}, Trailer{}, fmt.Errorf("%w: its records (%d keys, %d bytes, sha256 %s) are not the ones its trailer names (%d keys, %d bytes, sha256 %s)",
			ErrCorrupt, keys, bytes, got, t.Keys, t.Bytes, t.SHA256)
	}
	return *h, *t, nil
}
