package benchenv

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// ForEach calls do(i) for every i in [0, n) from clients goroutines, each taking the
// next i, and returns when all are done or ctx ends.
func ForEach(ctx context.Context, n, clients int, do func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				do(i)
			}
		})
	}
	wg.Wait()
}

// NamespaceOf is the namespace of the i-th Release of a run: base for the first
// perNamespace, then base-1, base-2, ...; perNamespace ≤ 0 puts every Release in base.
func NamespaceOf(base string, perNamespace, i int) string {
	if perNamespace <= 0 || i < perNamespace {
		return base
	}
	return fmt.Sprintf("%s-%d", base, i/perNamespace)
}

// Namespaces are the namespaces of the n Releases of a run (NamespaceOf), in order.
func Namespaces(base string, perNamespace, n int) []string {
	var out []string
	for i := range n {
		if ns := NamespaceOf(base, perNamespace, i); len(out) == 0 || out[len(out)-1] != ns {
			out = append(out, ns)
		}
	}
	return out
}
