package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdReader reads convoy's etcd: its status and every key under convoy's prefix.
type etcdReader struct {
	c        *clientv3.Client
	endpoint string
	prefix   string
}

func newEtcdReader(endpoint, prefix string) (*etcdReader, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", endpoint, err)
	}
	return &etcdReader{c: c, endpoint: endpoint, prefix: strings.TrimSuffix(prefix, "/") + "/"}, nil
}

func (r *etcdReader) close() { _ = r.c.Close() }

// kindFigures are the keys of one resource.
type kindFigures struct {
	resource   string
	count      int
	totalBytes int64 // values
	keyBytes   int64
	maxBytes   int
	maxKey     string
}

func (k kindFigures) avg() float64 {
	if k.count == 0 {
		return 0
	}
	return float64(k.totalBytes) / float64(k.count)
}

// etcdFigures are one reading of convoy's etcd.
type etcdFigures struct {
	at          time.Time
	dbSize      int64 // the file
	dbSizeInUse int64 // the pages that hold live revisions
	revision    int64
	kinds       []kindFigures // by resource, largest total first
	leases      int
	elapsed     time.Duration // the reading itself (and the compaction and defrag before)
}

func (f etcdFigures) kind(resource string) kindFigures {
	for _, k := range f.kinds {
		if k.resource == resource {
			return k
		}
	}
	return kindFigures{resource: resource}
}

// total is every value under convoy's prefix.
func (f etcdFigures) total() (count int, bytes int64) {
	for _, k := range f.kinds {
		count += k.count
		bytes += k.totalBytes + k.keyBytes
	}
	return count, bytes
}

// compactAndDefrag compacts at the current revision (physically: it waits until the
// compaction is applied) and defragments the member, as the chart's CronJob does.
func (r *etcdReader) compactAndDefrag(ctx context.Context) error {
	st, err := r.c.Status(ctx, r.endpoint)
	if err != nil {
		return fmt.Errorf("etcd status: %w", err)
	}
	if _, err := r.c.Compact(ctx, st.Header.Revision, clientv3.WithCompactPhysical()); err != nil && !strings.Contains(err.Error(), "compacted") {
		return fmt.Errorf("etcd compact at %d: %w", st.Header.Revision, err)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if _, err := r.c.Defragment(dctx, r.endpoint); err != nil {
		return fmt.Errorf("etcd defrag: %w", err)
	}
	return nil
}

// read reads etcd's status, every key under the prefix (1,000 at a time, at one
// revision) and the leases.
func (r *etcdReader) read(ctx context.Context) (etcdFigures, error) {
	t0 := time.Now()
	f := etcdFigures{at: t0}
	st, err := r.c.Status(ctx, r.endpoint)
	if err != nil {
		return f, fmt.Errorf("etcd status: %w", err)
	}
	f.dbSize, f.dbSizeInUse, f.revision = st.DbSize, st.DbSizeInUse, st.Header.Revision
	byKind := map[string]*kindFigures{}
	end := clientv3.GetPrefixRangeEnd(r.prefix)
	from := r.prefix
	for {
		resp, err := r.c.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(1000), clientv3.WithRev(f.revision),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
		if err != nil {
			return f, fmt.Errorf("etcd get %s…: %w", from, err)
		}
		for _, kv := range resp.Kvs {
			res := resourceOf(strings.TrimPrefix(string(kv.Key), r.prefix))
			k := byKind[res]
			if k == nil {
				k = &kindFigures{resource: res}
				byKind[res] = k
			}
			k.count++
			k.totalBytes += int64(len(kv.Value))
			k.keyBytes += int64(len(kv.Key))
			if len(kv.Value) > k.maxBytes {
				k.maxBytes, k.maxKey = len(kv.Value), string(kv.Key)
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	for _, k := range byKind {
		f.kinds = append(f.kinds, *k)
	}
	slices.SortFunc(f.kinds, func(a, b kindFigures) int {
		if a.totalBytes != b.totalBytes {
			return int(b.totalBytes - a.totalBytes)
		}
		return strings.Compare(a.resource, b.resource)
	})
	leases, err := r.c.Leases(ctx)
	if err != nil {
		return f, fmt.Errorf("etcd leases: %w", err)
	}
	f.leases = len(leases.Leases)
	f.elapsed = time.Since(t0)
	return f, nil
}

// resourceOf is the resource of a key below convoy's prefix: the first segment, or
// group/resource when the first segment is an API group (has a dot).
func resourceOf(rel string) string {
	seg := strings.Split(rel, "/")
	if len(seg) > 1 && strings.Contains(seg[0], ".") {
		return seg[0] + "/" + seg[1]
	}
	return seg[0]
}
