package benchenv

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kumodo.io/convoy/internal/localcluster"
)

// Flags are the flags of a benchmark that measures N Releases on a fresh environment
// per N (bench/controller, bench/observer).
type Flags struct {
	Releases          []int // -releases, set by Bench.Main
	Timeout           time.Duration
	Steady            time.Duration
	Resync            time.Duration
	Concurrency       int
	CreateConcurrency int
	Nodes             int
	ConvoyBin         string
	StateDir          string

	releases string
}

// FlagHelp is what -h says of the flags whose meaning differs between benchmarks.
type FlagHelp struct {
	Timeout, Steady, Resync, Concurrency, CreateConcurrency, Nodes string
}

// Register defines the flags on fs; the values f holds are their defaults, releases
// is the default of -releases. Where f leaves them zero, -resync, -concurrency and
// -create-concurrency default to 30s, 4 and 16.
func (f *Flags) Register(fs *flag.FlagSet, releases string, help FlagHelp) {
	if f.Resync == 0 {
		f.Resync = 30 * time.Second
	}
	if f.Concurrency == 0 {
		f.Concurrency = 4
	}
	if f.CreateConcurrency == 0 {
		f.CreateConcurrency = 16
	}
	fs.StringVar(&f.releases, "releases", releases, "comma-separated numbers of Releases; each runs on a fresh environment")
	fs.DurationVar(&f.Timeout, "timeout", f.Timeout, help.Timeout)
	fs.DurationVar(&f.Steady, "steady", f.Steady, help.Steady)
	fs.DurationVar(&f.Resync, "resync", f.Resync, help.Resync)
	fs.IntVar(&f.Concurrency, "concurrency", f.Concurrency, help.Concurrency)
	fs.IntVar(&f.CreateConcurrency, "create-concurrency", f.CreateConcurrency, help.CreateConcurrency)
	fs.IntVar(&f.Nodes, "nodes", f.Nodes, help.Nodes)
	fs.StringVar(&f.ConvoyBin, "convoy", "", "use this convoy binary instead of building ./cmd/convoy")
	fs.StringVar(&f.StateDir, "state-dir", "", "keep each N's control plane state and logs in <state-dir>/<N> (default: a temporary folder, removed)")
}

// PositiveInts is the comma-separated list s of flag -name; a word that is not a
// positive number ends the program with exit code 2.
func PositiveInts(name, s string) []int {
	var out []int
	for _, w := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "-%s: %q is not a positive number\n", name, w)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

// Command is the command line that reproduces this run of bench/<name>.
func Command(name string) string {
	args := []string{"go run ./bench/" + name}
	flag.Visit(func(f *flag.Flag) { args = append(args, fmt.Sprintf("-%s=%s", f.Name, f.Value)) })
	return strings.Join(args, " ")
}

// Exit runs run with a context that ends after bound or at SIGINT or SIGTERM (so that
// Ctrl-C stops cleanly); when run fails it prints "bench-<name>: <error>" and exits 1.
func Exit(name string, bound time.Duration, run func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, bound)
	err := run(ctx)
	cancel()
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Bench is a benchmark of N Releases, each N on a fresh environment: Start with
// workloads, then convoy controller with the admin kubeconfig (StartController), and
// the namespace of the Releases.
type Bench[R any] struct {
	// Name is the folder under bench/: its command line, its charts
	// (bench/<Name>/testdata) and the prefix of its errors.
	Name string
	// Flags, registered on flag.CommandLine and parsed.
	Flags *Flags
	// Namespace is created in every environment before Measure.
	Namespace string
	// Slack is what one N may take beyond -timeout and -steady (start-up, other
	// waits): with 5 minutes more, it bounds the whole run.
	Slack time.Duration
	// Measure measures n Releases on e, started from the convoy binary bin; e stops
	// when it returns. A result that is not nil is printed even with an error.
	Measure func(ctx context.Context, e *Env, bin string, n int) (*R, error)
	// Print prints one N's result, Summary all of them at the end or at the first error.
	Print   func(*R, io.Writer)
	Summary func(io.Writer, []*R)
}

// Main runs the benchmark for every N of -releases and exits non-zero when it fails;
// flag.Parse must have been called.
func (b Bench[R]) Main() {
	f := b.Flags
	f.Releases = PositiveInts("releases", f.releases)
	bound := time.Duration(len(f.Releases))*(f.Timeout+f.Steady+b.Slack) + 5*time.Minute
	Exit(b.Name, bound, b.run)
}

func (b Bench[R]) run(ctx context.Context) error {
	bin, cleanup, err := ConvoyBinary(ctx, b.Flags.ConvoyBin, b.Name)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []*R
	for _, n := range b.Flags.Releases {
		r, err := b.runOne(ctx, bin, n)
		if r != nil {
			results = append(results, r)
			b.Print(r, os.Stdout)
		}
		if err != nil {
			b.Summary(os.Stdout, results)
			return fmt.Errorf("with %d Releases: %w", n, err)
		}
	}
	b.Summary(os.Stdout, results)
	return nil
}

// runOne measures n Releases on a fresh environment, stopped before it returns.
func (b Bench[R]) runOne(ctx context.Context, bin string, n int) (*R, error) {
	f := b.Flags
	dir := ""
	if f.StateDir != "" {
		var err error
		if dir, err = filepath.Abs(filepath.Join(f.StateDir, strconv.Itoa(n))); err != nil {
			return nil, err
		}
	}
	root, err := localcluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	e, err := Start(ctx, bin, Options{Dir: dir, Workloads: true, Nodes: f.Nodes, Charts: filepath.Join(root, "bench", b.Name, "testdata")})
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	if err := e.StartController(ctx, bin, f.Resync, f.Concurrency); err != nil {
		return nil, err
	}
	if err := e.EnsureNamespace(ctx, b.Namespace); err != nil {
		return nil, err
	}
	return b.Measure(ctx, e, bin, n)
}
