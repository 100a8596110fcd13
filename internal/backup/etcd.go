package backup

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Page limits of the reads and writes: etcd answers at most --max-request-bytes
// (1.5 MiB by default) and takes at most --max-txn-ops (128) operations per
// transaction.
const (
	pageKeys  = 500
	txnOps    = 64
	txnBytes  = 1 << 20
	deletePer = 128
)

// Summary says what a backup or a restore did.
type Summary struct {
	Header  Header
	Trailer Trailer
	// Deleted counts the keys a restore deleted (they were not in the backup).
	Deleted int
}

// prefixKey is the prefix with the trailing slash that every key under it has.
func prefixKey(prefix string) string { return strings.TrimSuffix(prefix, "/") + "/" }

// Save writes a backup of every key under prefix to w: all read at the revision of
// the first read, so the backup is one consistent state (a compaction in between
// makes it fail: try again). now is the backup's time.
func Save(ctx context.Context, kv clientv3.KV, prefix string, now time.Time, w io.Writer) (Summary, error) {
	key := prefixKey(prefix)
	end := clientv3.GetPrefixRangeEnd(key)
	first, err := kv.Get(ctx, key, clientv3.WithRange(end), clientv3.WithLimit(1), clientv3.WithKeysOnly())
	if err != nil {
		return Summary{}, fmt.Errorf("reading etcd under %s: %w", key, err)
	}
	rev := first.Header.Revision
	h := Header{Prefix: prefix, Revision: rev, Time: now.UTC()}
	bw, err := newWriter(w, h)
	if err != nil {
		return Summary{}, err
	}
	from := key
	for {
		resp, err := kv.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(pageKeys),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
		if err != nil {
			return Summary{}, fmt.Errorf("reading etcd under %s at revision %d: %w", key, rev, err)
		}
		for _, e := range resp.Kvs {
			if err := bw.add(KeyValue{Key: e.Key, Value: e.Value}); err != nil {
				return Summary{}, fmt.Errorf("writing the backup: %w", err)
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	t, err := bw.close()
	if err != nil {
		return Summary{}, fmt.Errorf("writing the backup: %w", err)
	}
	h.Format = Format
	return Summary{Header: h, Trailer: t}, nil
}

// Restore makes the keys under to.Prefix those of the backup that open returns
// (called twice: once to check the whole file, once to write it). Nothing is
// written unless the file is whole and Check allows it. Then every key of the
// backup is put (in transactions of up to 64 keys) and every other key under the
// prefix is deleted. The restored objects get new etcd revisions, so watchers see
// them as changes. Run it with convoy's controller and observer stopped: they would
// act on the state half-way.
func Restore(ctx context.Context, kv clientv3.KV, to Target, open func() (io.ReadCloser, error)) (Summary, error) {
	h, t, err := readAll(open, nil)
	if err != nil {
		return Summary{}, err
	}
	if err := Check(h, t, to); err != nil {
		return Summary{}, err
	}
	key := prefixKey(to.Prefix)
	kept := map[string]bool{}
	var ops []clientv3.Op
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		if _, err := kv.Txn(ctx).Then(ops...).Commit(); err != nil {
			return fmt.Errorf("writing etcd: %w", err)
		}
		ops, size = ops[:0], 0
		return nil
	}
	_, _, err = readAll(open, func(e KeyValue) error {
		if !strings.HasPrefix(string(e.Key), key) {
			return fmt.Errorf("the backup holds the key %q, outside its prefix %s", e.Key, key)
		}
		if len(ops) >= txnOps || size+len(e.Value) > txnBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		kept[string(e.Key)] = true
		ops = append(ops, clientv3.OpPut(string(e.Key), string(e.Value)))
		size += len(e.Key) + len(e.Value)
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return Summary{}, fmt.Errorf("restoring (some keys may be written; run the restore again): %w", err)
	}
	deleted, err := deleteOthers(ctx, kv, key, kept)
	if err != nil {
		return Summary{}, fmt.Errorf("deleting the keys the backup does not have (run the restore again): %w", err)
	}
	return Summary{Header: h, Trailer: t, Deleted: deleted}, nil
}

func readAll(open func() (io.ReadCloser, error), each func(KeyValue) error) (Header, Trailer, error) {
	r, err := open()
	if err != nil {
		return Header{}, Trailer{}, err
	}
	defer r.Close()
	return Read(r, each)
}

// deleteOthers deletes the keys under key that are not kept.
func deleteOthers(ctx context.Context, kv clientv3.KV, key string, kept map[string]bool) (int, error) {
	end := clientv3.GetPrefixRangeEnd(key)
	var stale []string
	from := key
	for {
		resp, err := kv.Get(ctx, from, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(pageKeys),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
		if err != nil {
			return 0, err
		}
		for _, e := range resp.Kvs {
			if !kept[string(e.Key)] {
				stale = append(stale, string(e.Key))
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	deleted := len(stale)
	for len(stale) > 0 {
		n := min(len(stale), deletePer)
		ops := make([]clientv3.Op, 0, n)
		for _, k := range stale[:n] {
			ops = append(ops, clientv3.OpDelete(k))
		}
		if _, err := kv.Txn(ctx).Then(ops...).Commit(); err != nil {
			return 0, err
		}
		stale = stale[n:]
	}
	return deleted, nil
}
