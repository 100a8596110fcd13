package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/utils/clock"
)

// ttlCache holds values in memory for a fixed time after they were stored.
type ttlCache[T any] struct {
	name  string // distinguishes its keys in a shared singleflight.Group
	clock clock.PassiveClock
	ttl   time.Duration

	mu      sync.Mutex
	entries map[string]ttlEntry[T]
}

type ttlEntry[T any] struct {
	value   T
	expires time.Time
}

func newTTLCache[T any](name string, c clock.PassiveClock, ttl time.Duration) *ttlCache[T] {
	return &ttlCache[T]{name: name, clock: c, ttl: ttl, entries: map[string]ttlEntry[T]{}}
}

func (c *ttlCache[T]) get(key string) (T, bool) { return c.getYounger(key, c.ttl) }

// getYounger returns the value of key while it is fresh and was stored less than
// maxAge ago.
func (c *ttlCache[T]) getYounger(key string, maxAge time.Duration) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	now := c.clock.Now()
	if !ok || !now.Before(e.expires) || now.Sub(e.expires.Add(-c.ttl)) >= maxAge {
		var zero T
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[T]) put(key string, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	for k, e := range c.entries { // drop what expired, so the map stays small
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	c.entries[key] = ttlEntry[T]{value: v, expires: now.Add(c.ttl)}
}

func (c *ttlCache[T]) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

// flight runs fn once for concurrent callers of the same key. A caller whose context
// ends stops waiting; fn goes on without the caller's cancellation (it is bounded by
// the HTTP client's timeout), so that the others still get its result.
func flight[T any](ctx context.Context, g *singleflight.Group, key string, fn func(context.Context) (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	ch := g.DoChan(key, func() (any, error) {
		return fn(context.WithoutCancel(ctx))
	})
	select {
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			var zero T
			return zero, r.Err
		}
		return r.Val.(T), nil
	}
}

// archiveStore keeps chart archives on disk, keyed by repository, chart name,
// version and digest. Files are written once, atomically, and never changed.
type archiveStore struct {
	dir string
}

// path is where the archive of (repository, name, version, digest) lives.
func (s archiveStore) path(repository, name, version, digest string) string {
	repoKey := sha256.Sum256([]byte(repository))
	file := fmt.Sprintf("%s-%s-%s.tgz", sanitize(name), sanitize(version), sanitize(strings.TrimPrefix(digest, "sha256:")))
	return filepath.Join(s.dir, hex.EncodeToString(repoKey[:8]), file)
}

// read returns the archive at path, or nil when it is not stored.
func (s archiveStore) read(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return b, err
}

// write stores data at path atomically (temporary file and rename).
func (s archiveStore) write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close() // the write error is the one to report
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// sanitize keeps a name safe as part of a file name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-', r == '+':
			return r
		default:
			return '_'
		}
	}, s)
}

// getOr returns the value of key while it is fresh; otherwise it runs fn once for all
// concurrent callers and stores a successful result.
func (c *ttlCache[T]) getOr(ctx context.Context, g *singleflight.Group, key string, fn func(context.Context) (T, error)) (T, error) {
	return c.getOrYounger(ctx, g, key, c.ttl, fn)
}

// getOrYounger is getOr taking only a value stored less than maxAge ago.
func (c *ttlCache[T]) getOrYounger(ctx context.Context, g *singleflight.Group, key string, maxAge time.Duration, fn func(context.Context) (T, error)) (T, error) {
	if v, ok := c.getYounger(key, maxAge); ok {
		return v, nil
	}
	return flight(ctx, g, c.name+"|"+key, func(ctx context.Context) (T, error) {
		if v, ok := c.getYounger(key, maxAge); ok {
			return v, nil
		}
		v, err := fn(ctx)
		if err != nil {
			return v, err
		}
		c.put(key, v)
		return v, nil
	})
}
