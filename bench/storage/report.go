package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"kumodo.io/convoy/bench/internal/benchenv"
)

func mib(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }

func kib(b float64) string { return fmt.Sprintf("%.2f KiB", b/1024) }

func (r *result) print(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	mode := "automatic mode"
	if r.manual {
		mode = "manual mode (-manual: rendered, never applied)"
	}
	p("\n## %d Releases of %s (bench/storage/testdata), %s, %d namespace(s)\n\n", r.n, r.chart, mode, r.namespaces)
	p("- creates: %s; first create → all %s: %s\n", r.createElapsed.Round(time.Millisecond), state(r.manual), r.toReady.Round(time.Second))
	if r.toUpgraded > 0 {
		p("- upgrades (-upgrade-values): %s; first upgrade → all %s on the new render: %s\n", r.upgradeElapsed.Round(time.Millisecond), state(r.manual), r.toUpgraded.Round(time.Second))
	}
	p("- load average at the start and the end: %s / %s\n\n", r.loadStart, r.loadEnd)
	p("| phase | dbSize | dbSizeInUse | dbSizeInUse per Release | revision | keys | keys+values | leases |\n")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, ph := range r.phases {
		f := ph.etcd
		keys, bytes := f.total()
		p("| %s | %s | %s | %s | %d | %d | %s | %d |\n", ph.name, mib(f.dbSize), mib(f.dbSizeInUse),
			kib(float64(f.dbSizeInUse)/float64(r.n)), f.revision, keys, mib(bytes), f.leases)
	}
	for _, ph := range r.phases {
		if len(ph.etcd.kinds) == 0 {
			continue
		}
		p("\nKeys under convoy's prefix, %s (values; per Release: total / %d):\n\n", ph.name, r.n)
		p("| resource | keys | per Release | total | average | largest | total per Release |\n")
		p("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		for _, k := range ph.etcd.kinds {
			p("| %s | %d | %.2f | %s | %s | %s | %s |\n", k.resource, k.count, float64(k.count)/float64(r.n),
				mib(k.totalBytes), kib(k.avg()), kib(float64(k.maxBytes)), kib(float64(k.totalBytes)/float64(r.n)))
		}
	}
}

func printSummary(w io.Writer, rs []*result) {
	if len(rs) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	host, _ := os.Hostname()
	p("\n## Summary (%s, %d CPUs, %s)\n\n", host, runtime.NumCPU(), benchenv.Command("storage"))
	p("| Releases | mode | Release | Render | ReleaseInventory | Renders per Release | dbSizeInUse at first / defragmented | after the upgrade / defragmented | dbSize (file) at the end |\n")
	p("| ---: | --- | ---: | ---: | ---: | ---: | --- | --- | ---: |\n")
	for _, r := range rs {
		var ready, readyD, up, upD etcdFigures
		st := state(r.manual)
		for _, ph := range r.phases {
			switch ph.name {
			case st:
				ready = ph.etcd
			case st + ", compacted and defragmented":
				readyD = ph.etcd
			case "upgraded, " + st:
				up = ph.etcd
			case "upgraded, compacted and defragmented":
				upD = ph.etcd
			}
		}
		mode := "automatic"
		if r.manual {
			mode = "manual"
		}
		last := r.phases[len(r.phases)-1].etcd
		rel, ren, inv := last.kind("releases"), last.kind("renders"), last.kind("releaseinventories")
		for _, k := range last.kinds { // the resources may be under their group
			switch {
			case rel.count == 0 && strings.HasSuffix(k.resource, "/releases"):
				rel = k
			case ren.count == 0 && strings.HasSuffix(k.resource, "/renders"):
				ren = k
			case inv.count == 0 && strings.HasSuffix(k.resource, "/releaseinventories"):
				inv = k
			}
		}
		p("| %d | %s | %s | %s | %s | %.2f | %s / %s | %s / %s | %s |\n", r.n, mode, kib(rel.avg()), kib(ren.avg()), kib(inv.avg()),
			float64(ren.count)/float64(r.n), mib(ready.dbSizeInUse), mib(readyD.dbSizeInUse), mib(up.dbSizeInUse), mib(upD.dbSizeInUse), mib(last.dbSize))
	}
}
