// Package gz compresses and decompresses the gzip'd forms convoy keeps of a render
// (a Render object's manifests, the compact form the controller remembers) with
// writers and readers taken from pools.
//
// A compress/gzip Writer allocates its compressor's tables (about 800 KiB at the
// default level, and as much at the best compression) and a Reader its decompressor's
// window (about 40 KiB) when made; made anew at each use, they were 42 % of every byte
// the controller allocated in a first apply of 1,000 Releases (issue 15), each zeroed
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
		return zw
	}}
}

var readers = sync.Pool{New: func() any { return new(gzip.Reader) }}

// Compress returns what write writes, gzip'd at level (Default or Best).
func Compress(level int, write func(io.Writer) error) ([]byte, error) {
	pool, ok := writers[level]
	if !ok {
		return nil, fmt.Errorf("gz: no pool for compression level %d", level)
	}
	var buf bytes.Buffer
	zw := pool.Get().(*gzip.Writer)
	zw.Reset(&buf)
	defer func() {
		zw.Reset(io.Discard) // drops buf
		pool.Put(zw)
	}()
	if err := write(zw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decompress returns the data that b holds gzip'd.
func Decompress(b []byte) ([]byte, error) {
	zr := readers.Get().(*gzip.Reader)
	defer readers.Put(zr)
	if err := zr.Reset(bytes.NewReader(b)); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	if err := zr.Close(); err != nil {
		return nil, err
	}
	return out, nil
}
