package gz

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fresh is what a new compress/gzip Writer of level writes for data: the bytes that
// Compress must reproduce.
func fresh(t *testing.T, level int, data string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(zw, data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCompressWritesWhatANewWriterWrites(t *testing.T) {
	manifest := strings.Repeat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n", 200)
	cases := map[string]struct {
		level int
		data  []string // one Compress each, in turn, through the same pool
	}{
		"default, one":              {Default, []string{manifest}},
		"best, one":                 {Best, []string{manifest}},
		"default, reused":           {Default, []string{manifest, "short", "", manifest + "x"}},
		"best, reused":              {Best, []string{"first", manifest, "third"}},
		"empty":                     {Default, []string{""}},
		"best after a long default": {Best, []string{strings.Repeat("z", 1<<20)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for i, data := range tc.data {
				got, err := Compress(tc.level, func(w io.Writer) error {
					_, err := io.WriteString(w, data)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, fresh(t, tc.level, data)) {
					t.Fatalf("use %d: Compress wrote other bytes than a new gzip.Writer at level %d", i, tc.level)
				}
				back, err := Decompress(got)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(data, string(back)); diff != "" {
					t.Fatalf("use %d: round trip (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestCompressRejectsALevelItHasNoPoolFor(t *testing.T) {
	_, err := Compress(gzip.BestSpeed, func(io.Writer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no pool for compression level 1") {
		t.Fatalf("err = %v, want the level named", err)
	}
}

func TestCompressReturnsTheWritersError(t *testing.T) {
	want := fmt.Errorf("marshal failed")
	if _, err := Compress(Default, func(io.Writer) error { return want }); err != want {
		t.Fatalf("err = %v, want %v", err, want)
	}
	// The writer went back to the pool in a usable state.
	got, err := Compress(Default, func(w io.Writer) error { _, err := io.WriteString(w, "after"); return err })
	if err != nil || !bytes.Equal(got, fresh(t, Default, "after")) {
		t.Fatalf("the next Compress: %v, bytes equal to a new writer's: %t", err, bytes.Equal(got, fresh(t, Default, "after")))
	}
}

func TestDecompressRejectsWhatIsNotGzip(t *testing.T) {
	for name, b := range map[string][]byte{
		"not gzip":  []byte("kind: ConfigMap\n"),
		"empty":     nil,
		"truncated": fresh(t, Default, strings.Repeat("abc", 1000))[:20],
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Decompress(b); err == nil {
				t.Fatal("no error")
			}
			// The reader went back to the pool in a usable state.
			if got, err := Decompress(fresh(t, Default, "ok")); err != nil || string(got) != "ok" {
				t.Fatalf("the next Decompress: %q, %v", got, err)
			}
		})
	}
}

// TestCompressReusesItsWriters is the reason for the package: a new gzip.Writer
// allocates its compressor's tables (~800 KiB), so 200 compressions with new writers
// allocate ~160 MiB; through the pool they allocate what they write and a writer now
// and then (the pool may drop its writers at a garbage collection).
func TestCompressReusesItsWriters(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops a share of the writers it is given")
	}
	data := strings.Repeat("kind: Deployment\n", 100)
	compress := func() {
		if _, err := Compress(Best, func(w io.Writer) error { _, err := io.WriteString(w, data); return err }); err != nil {
			t.Fatal(err)
		}
	}
	compress() // one writer in the pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 200
	for range n {
		compress()
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per Compress", perCall)
	if perCall > 64<<10 {
		t.Fatalf("%d bytes allocated per Compress: the writers are not reused", perCall)
	}
}

func TestConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			data := strings.Repeat(fmt.Sprintf("object %d\n", i), 500)
			for range 20 {
				b, err := Compress(Default, func(w io.Writer) error { _, err := io.WriteString(w, data); return err })
				if err != nil {
					t.Error(err)
					return
				}
				back, err := Decompress(b)
				if err != nil || string(back) != data {
					t.Errorf("goroutine %d: round trip failed: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// Compress's result is a slice of its own with no spare capacity: the writers' buffer
// is pooled (a result that aliased it would change under the next call), and the
// controller keeps compact forms in memory for each Release, where a grown buffer's
// spare capacity stayed with them (~40 % more at 10,000 Releases; decision 0134).
func TestCompressReturnsASliceOfItsOwnWithoutSpareCapacity(t *testing.T) {
	write := func(data string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, data); return err }
	}
	first, err := Compress(Default, write(strings.Repeat("kind: Service\n", 300)))
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(first)
	if cap(first) != len(first) {
		t.Errorf("cap %d for %d bytes", cap(first), len(first))
	}
	for i := range 20 {
		if _, err := Compress(Default, write(fmt.Sprintf("call %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(first, want) {
		t.Fatal("the first result changed under later calls: it shares the pooled buffer")
	}
}

// A reader back in the pool does not keep its last input alive (a Render's manifests
// read once would stay until the reader's next use). One collection after Decompress
// frees the input; the pool keeps its readers across one collection (sync.Pool's
// victim cache), so the input of a reader that still pointed to it would stay.
func TestDecompressDoesNotKeepItsInput(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops a share of what it is given")
	}
	in := fresh(t, Default, strings.Repeat("kind: ConfigMap\n", 1000))
	freed := make(chan struct{})
	runtime.AddCleanup(&in[0], func(ch chan struct{}) { close(ch) }, freed)
	if _, err := Decompress(in); err != nil {
		t.Fatal(err)
	}
	in = nil
	runtime.GC()
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("the input of Decompress is still reachable after a collection")
	}
}
