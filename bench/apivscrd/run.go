package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kumodo.io/convoy/bench/internal/benchenv"
)

// row is one measurement on every side.
type row struct {
	what   string
	list   bool // lat holds whole runs: show the median and the maximum
	bySide map[string]*result
}

func run(ctx context.Context, cfg config) error {
	e, err := start(ctx, cfg)
	if err != nil {
		return err
	}
	defer e.Stop()
	load0 := benchenv.LoadAvg()
	started := time.Now()
	var rows []*row
	add := func(what string, list bool) *row {
		r := &row{what: what, list: list, bySide: map[string]*result{}}
		rows = append(rows, r)
		return r
	}
	prefix := map[string]string{"convoy": "a", "convoy direct": "d", "CRD": "c"}
	progress := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }

	// Warm up each side's connections, discovery and caches.
	for _, s := range e.sides {
		for i := range 20 {
			_ = s.create(ctx, seqNamespace, name(prefix[s.name]+"-warm", i))
		}
	}

	steps := []struct {
		what string
		op   func(s *side) func(ctx context.Context, i int) error
	}{
		{"create, sequential", func(s *side) func(context.Context, int) error {
			return func(ctx context.Context, i int) error {
				return s.create(ctx, seqNamespace, name(prefix[s.name]+"-seq", i))
			}
		}},
		{"get", func(s *side) func(context.Context, int) error {
			return func(ctx context.Context, i int) error {
				_, err := s.res(seqNamespace).Get(ctx, name(prefix[s.name]+"-seq", i), metav1.GetOptions{})
				return err
			}
		}},
		{"status update (merge patch)", func(s *side) func(context.Context, int) error {
			return func(ctx context.Context, i int) error {
				return s.statusPatch(ctx, seqNamespace, name(prefix[s.name]+"-seq", i), i)
			}
		}},
		{"/sync (CRD: annotation patch)", func(s *side) func(context.Context, int) error {
			return func(ctx context.Context, i int) error {
				return s.syncOrAnnotate(ctx, seqNamespace, name(prefix[s.name]+"-seq", i), i)
			}
		}},
	}
	for _, st := range steps {
		r := add(st.what, false)
		for _, s := range e.sides {
			progress("%s: %s, %d requests...", s.name, st.what, cfg.seq)
			r.bySide[s.name] = e.sequential(ctx, cfg.seq, st.op(s))
		}
	}
	if cfg.kubectl > 0 {
		r := add(fmt.Sprintf("`kubectl create -f` of %d, per object", cfg.kubectl), false)
		for _, s := range e.sides {
			if s.name == "convoy direct" {
				continue
			}
			progress("%s: kubectl create -f of %d...", s.name, cfg.kubectl)
			res, err := e.kubectlCreate(ctx, s, e.kubeconfig, seqNamespace, prefix[s.name]+"-kubectl", cfg.kubectl)
			if err != nil {
				return err
			}
			r.bySide[s.name] = res
		}
	}
	r := add("watch event, write → client", false)
	for _, s := range e.sides {
		progress("%s: watch latency, %d writes...", s.name, cfg.watches)
		r.bySide[s.name] = e.watchLatency(ctx, s, seqNamespace, prefix[s.name]+"-seq", cfg.watches, cfg.seq)
	}
	// convoy direct's objects would be listed with convoy's: remove them.
	for _, s := range e.sides {
		if s.name == "convoy direct" {
			_ = s.res(seqNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "bench=apivscrd"})
		}
	}

	conn0 := establishedTo(e.port)
	r = add(fmt.Sprintf("create, %d clients", cfg.clients), false)
	for _, s := range e.sides {
		if s.name == "convoy direct" {
			continue
		}
		progress("%s: %d creates from %d clients...", s.name, cfg.concurrent, cfg.clients)
		p := prefix[s.name] + "-list"
		r.bySide[s.name] = e.concurrent(ctx, cfg.concurrent, cfg.clients, func(ctx context.Context, i int) error {
			return s.create(ctx, listNamespace, name(p, i))
		})
		if cfg.list > cfg.concurrent {
			progress("%s: %d more creates for the list...", s.name, cfg.list-cfg.concurrent)
			e.concurrent(ctx, cfg.list-cfg.concurrent, cfg.clients, func(ctx context.Context, i int) error {
				return s.create(ctx, listNamespace, name(p, cfg.concurrent+i))
			})
		}
	}
	conn1 := establishedTo(e.port)

	for _, l := range []struct {
		what string
		ns   string
	}{
		{fmt.Sprintf("list %d, one namespace", cfg.list), listNamespace},
		{"list, all namespaces (-A)", ""},
	} {
		r := add(l.what, true)
		for _, s := range e.sides {
			if s.name == "convoy direct" {
				continue
			}
			progress("%s: %s...", s.name, l.what)
			r.bySide[s.name] = e.sequential(ctx, cfg.repeats, func(ctx context.Context, int2 int) error {
				var err error
				if l.ns == "" {
					_, err = s.dyn.Resource(s.gvr).List(ctx, metav1.ListOptions{})
				} else {
					_, err = s.res(l.ns).List(ctx, metav1.ListOptions{})
				}
				return err
			})
		}
	}

	if cfg.profileDir != "" {
		for _, s := range e.sides {
			if s.name == "convoy direct" {
				continue
			}
			label := strings.ToLower(s.name)
			if err := e.profiles(ctx, cfg.profileDir, label, cfg.profile, func(ctx context.Context, i int) error {
				return s.create(ctx, seqNamespace, name(prefix[s.name]+"-prof", i))
			}); err != nil {
				return fmt.Errorf("profiling: %w", err)
			}
		}
	}

	fmt.Printf("bench-apivscrd: %s\n", benchenv.Command("apivscrd"))
	fmt.Printf("started %s, %s; load average at start %s, at end %s\n", started.UTC().Format(time.RFC3339), time.Since(started).Round(time.Second), load0, benchenv.LoadAvg())
	fmt.Printf("connections kube-apiserver → convoy apiserver: %d before the %d-client creates, %d after\n\n", conn0, cfg.clients, conn1)
	print(os.Stdout, rows)
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

func print(w io.Writer, rows []*row) {
	fmt.Fprintln(w, "| measurement | convoy p50 / p99 ms | CRD p50 / p99 ms | ratio p50 / p99 | convoy direct p50 / p99 ms | convoy SARs / request | errors convoy / CRD |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		a, c, d := r.bySide["convoy"], r.bySide["CRD"], r.bySide["convoy direct"]
		hi := 0.99
		if r.list {
			hi = 1 // the slowest run
		}
		cell := func(x *result) string {
			if x == nil {
				return "-"
			}
			return ms(x.pct(0.5)) + " / " + ms(x.pct(hi))
		}
		sars := "-"
		if a != nil && a.requests() > 0 {
			sars = fmt.Sprintf("%.3f", a.sars/float64(a.requests()))
		}
		errs := func(x *result) string {
			if x == nil {
				return "-"
			}
			if x.errs == 0 {
				return "0"
			}
			return fmt.Sprintf("%d (%s)", x.errs, x.firstEr)
		}
		extra := ""
		if strings.HasPrefix(r.what, "create, ") && !strings.Contains(r.what, "sequential") && a != nil && c != nil {
			extra = fmt.Sprintf(" (all: %s vs %s)", a.total.Round(time.Millisecond), c.total.Round(time.Millisecond))
		}
		fmt.Fprintf(w, "| %s%s | %s | %s | %s / %s | %s | %s | %s / %s |\n", r.what, extra, cell(a), cell(c),
			ratio(a.pct(0.5), c.pct(0.5)), ratio(a.pct(hi), c.pct(hi)), cell(d), sars, errs(a), errs(c))
	}
}
