// Package gz compresses and decompresses the gzip'd forms convoy keeps of a render
// (a Render object's manifests, the compact form the controller remembers) with
// writers and readers taken from pools.
//
// A compress/gzip Writer allocates its compressor's tables (about 800 KiB at the
// default level, and as much at the best compression) and a Reader its decompressor's
// window (about 40 KiB) when made; made anew at each use, they were 42 % of every byte
// the controller allocated in a first apply of 1,000 Releases (decision 0135), each zeroed
// and then collected. A pool keeps them between uses, as kube-apiserver keeps its
// response writers' (sync.Pool, Reset). The output is the same bytes a new Writer of
// the level writes.
package gz

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"
)

// Levels this package pools writers for.
const (
	Default = gzip.DefaultCompression
	Best    = gzip.BestCompression
)

var writers = map[int]*sync.Pool{
	Default: newWriterPool(Default),
	Best:    newWriterPool(Best),
}

func newWriterPool(level int) *sync.Pool {
	return &sync.Pool{New: func() any {
		zw, err := gzip.NewWriterLevel(io.Discard, level)
		if err != nil {
			panic(err) // only the levels above, which are valid
		}
		return &writer{zw: zw}
	}}
}

// writer is a pooled gzip writer and the buffer it writes to.
type writer struct {
	zw  *gzip.Writer
	buf bytes.Buffer
}

// reader is a pooled gzip reader and the reader of its input, which is emptied
// before the pair goes back to the pool: a pooled reader does not keep its last
// input alive.
type reader struct {
	zr gzip.Reader
	in bytes.Reader
}

var readers = sync.Pool{New: func() any { return new(reader) }}

// Compress returns what write writes, gzip'd at level (Default or Best). The result
// is a slice of its own, exactly as long as the data: the controller keeps compact
// forms in memory, and a buffer's spare capacity would stay with them.
func Compress(level int, write func(io.Writer) error) ([]byte, error) {
	pool, ok := writers[level]
	if !ok {
		return nil, fmt.Errorf("gz: no pool for compression level %d", level)
	}
	w := pool.Get().(*writer)
	w.buf.Reset()
	w.zw.Reset(&w.buf)
	defer pool.Put(w)
	if err := write(w.zw); err != nil {
		return nil, err
	}
	if err := w.zw.Close(); err != nil {
		return nil, err
	}
	out := make([]byte, w.buf.Len())
	copy(out, w.buf.Bytes())
	return out, nil
}

// Decompress returns the data that b holds gzip'd.
func Decompress(b []byte) ([]byte, error) {
	r := readers.Get().(*reader)
	defer func() {
		r.in.Reset(nil) // the reader's references to b go through r.in
		readers.Put(r)
	}()
	r.in.Reset(b)
	if err := r.zr.Reset(&r.in); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(&r.zr)
	if err != nil {
		return nil, err
	}
	if err := r.zr.Close(); err != nil {
		return nil, err
	}
	return out, nil
}
