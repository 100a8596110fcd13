package ship_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/wait"

	"kumodo.io/convoy/internal/dev"
	"kumodo.io/convoy/internal/localcluster"
	"kumodo.io/convoy/internal/render/chartrepo"
	"kumodo.io/convoy/internal/testenv"
)

// The pages run as walk-throughs, relative to the repository's root: the tutorial on
// `convoy dev`, the fleet tutorial on `convoy dev --clusters 3`, the migration from
// Helm on `convoy dev` with the helm CLI.
const (
	tutorialFile          = "docs/tutorial.md"
	fleetTutorialFile     = "docs/fleet-tutorial.md"
	migratingFromHelmFile = "docs/migrating-from-helm.md"
)

// helmTool is the helm CLI, of the version of the Helm SDK (go.mod's tool directive).
const helmTool = "helm.sh/helm/v4/cmd/helm"

// update: the walk-through tests write what each block printed into the page's text
// blocks instead of comparing (go test ./test/ship/ -run TestFleetTutorial -update).
var update = flag.Bool("update", false, "write what each block prints into the page instead of comparing")

// tutorialStep is one ```sh block of the tutorial and the ```text block after it.
type tutorialStep struct {
	// line is the line of the ```sh fence, for messages.
	line int
	// script is the block's commands, run by bash -e.
	script string
	// want is what the block prints; checked only when hasWant.
	want    string
	hasWant bool
}

// tutorialSteps parses a walk-through page (file, for messages): each ```sh block is a step, and a ```text block
// that follows it (blank lines between allowed) is its output. Other fences
// (```console, ```yaml, …) are shown, not run. A ```text block after anything but a
// ```sh block is an error: an output that nothing checks.
func tutorialSteps(file, doc string) ([]tutorialStep, error) {
	var (
		steps []tutorialStep
		fence string // the info string of the open fence; "" outside a fence
		start int
		body  []string
		// afterSh: the last thing seen outside blank lines is a ```sh block
		// without an output yet.
		afterSh bool
	)
	sc := bufio.NewScanner(strings.NewReader(doc))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if fence == "" {
			info, isFence := strings.CutPrefix(l, "```")
			switch {
			case isFence:
				fence, start, body = strings.TrimSpace(info), n, nil
				if fence == "" {
					return nil, fmt.Errorf("%s:%d: a fence without a language; use sh (run), text (its output) or console (shown only)", file, n)
				}
				if fence == "text" && !afterSh {
					return nil, fmt.Errorf("%s:%d: a text block that follows no sh block: nothing would check it (use console for an output that is shown only)", file, n)
				}
			case strings.TrimSpace(l) != "":
				afterSh = false
			}
			continue
		}
		if l != "```" {
			body = append(body, l)
			continue
		}
		text := strings.Join(body, "\n")
		switch fence {
		case "sh":
			if strings.TrimSpace(text) == "" {
				return nil, fmt.Errorf("%s:%d: an empty sh block", file, start)
			}
			steps = append(steps, tutorialStep{line: start, script: text})
			afterSh = true
		case "text":
			steps[len(steps)-1].want, steps[len(steps)-1].hasWant = text, true
			afterSh = false
		default:
			afterSh = false
		}
		fence = ""
	}
	if fence != "" {
		return nil, fmt.Errorf("%s:%d: a %s block that is not closed", file, start, fence)
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("%s has no sh block", file)
	}
	return steps, sc.Err()
}

// The placeholders of normaliseOutput, in the order they apply. Each stands for a
// value that differs from run to run; the tutorial's section "How this page is
// tested" lists them for its readers.
var outputPlaceholders = []struct {
	re   *regexp.Regexp
	with string
}{
	// A render ref or any other SHA-256 digest in full.
	{regexp.MustCompile(`sha256:[0-9a-f]{64}`), "sha256:<digest>"},
	// A ReleaseSet's revision (16 hex digits) or values digest.
	{regexp.MustCompile(`sha256:[0-9a-f]{16}\b`), "sha256:<revision>"},
	// A time in RFC 3339 (the sync annotation, deadlines), to the second.
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	// A time as helm list prints it (Go's time.String): 2026-12-07 22:50:01.1234 +0000 UTC.
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? [+-]\d{4} [A-Z]+\b`), "<time>"},
	// A time as helm install and helm history print it (time.ANSIC): Mon Dec  7 22:50:01 2026.
	{regexp.MustCompile(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d \d{4}\b`), "<time>"},
	// A render ref's short form (10 hex digits; also inside a Render's name).
	{regexp.MustCompile(`\b[0-9a-f]{10}\b`), "<ref>"},
	// An age as kubectl and the plugin print it: 7s, 59m, 2m10s, 3h4m, 5d.
	{regexp.MustCompile(`\b\d+[smhd](\d+[smh])?\b`), "<age>"},
	// Column widths follow the values above: runs of spaces are one space.
	{regexp.MustCompile(`[ \t]+`), " "},
}

// normaliseOutput replaces what differs from run to run by placeholders
// (outputPlaceholders), and drops trailing spaces and leading and trailing blank lines.
func normaliseOutput(s string) string {
	for _, p := range outputPlaceholders {
		s = p.re.ReplaceAllString(s, p.with)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// readCommand matches a command that only reads: a block of such commands is run
// again until its output matches, as the state settles.
var readCommand = regexp.MustCompile(`^kubectl (get|convoy (release|releases|rel|releaseset|releasesets|cluster|clusters) (list|ls|status|history|diff|render)) `)

// readsOnly says whether every command of script only reads.
func readsOnly(script string) bool {
	for _, l := range strings.Split(script, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !readCommand.MatchString(l+" ") {
			return false
		}
	}
	return true
}

// The parts of the test that need no control plane: the tutorial parses into steps
// that each have an output, the placeholders hide what changes from run to run and
// nothing else, and `make dev` is still the recipe that TestTutorial copies.
func TestTutorialParsesAndNormalises(t *testing.T) {
	for _, file := range []string{tutorialFile, fleetTutorialFile, migratingFromHelmFile} {
		doc, err := os.ReadFile(filepath.Join(repoRoot(t), file))
		if err != nil {
			t.Fatal(err)
		}
		steps, err := tutorialSteps(file, string(doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if !s.hasWant {
				t.Errorf("%s:%d: the sh block has no text block after it: show what it prints", file, s.line)
			}
		}
	}

	parse := map[string]struct {
		doc     string
		want    []tutorialStep
		wantErr string
	}{
		"a command and its output": {
			doc:  "intro\n```sh\nkubectl get releases\n```\n\n```text\nNAME\nhello\n```\n",
			want: []tutorialStep{{line: 2, script: "kubectl get releases", want: "NAME\nhello", hasWant: true}},
		},
		"console is shown, not run": {
			doc:  "```console\nmake dev\n```\n```sh\nkubectl get nodes\n```\n",
			want: []tutorialStep{{line: 4, script: "kubectl get nodes"}},
		},
		"an output after prose checks nothing": {
			doc:     "```sh\nkubectl get nodes\n```\nprose\n```text\nNAME\n```\n",
			wantErr: "a text block that follows no sh block",
		},
		"a fence without a language":      {doc: "```\nls\n```\n", wantErr: "a fence without a language"},
		"an open block":                   {doc: "```sh\nls\n", wantErr: "not closed"},
		"no command at all":               {doc: "```console\nls\n```\n", wantErr: "has no sh block"},
		"an output after an output fails": {doc: "```sh\nls\n```\n```text\na\n```\n```text\nb\n```\n", wantErr: "follows no sh block"},
	}
	for name, tc := range parse {
		t.Run(name, func(t *testing.T) {
			got, err := tutorialSteps("page.md", tc.doc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(tutorialStep{})); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}

	normalise := map[string]struct{ in, want string }{
		"ages and short refs in a table": {
			in:   "NAME    RENDER       AGE\nhello   cec1e87bfa   7s  \n",
			want: "NAME RENDER AGE\nhello <ref> <age>",
		},
		"times, digests and compound ages": {
			in:   "sync requested at 2026-12-06T10:12:59Z\npinned to sha256:889ae6c0354b10a3ed8261c2d14689bae38d9ec6ba54f714c787d07063387c85, 2m10s ago",
			want: "sync requested at <time>\npinned to sha256:<digest>, <age> ago",
		},
		"a render's name": {in: "render hello-829b51f3ed", want: "render hello-<ref>"},
		"helm's times": {
			in:   "inventory  apps  1  2026-12-07 22:50:01.123456789 +0000 UTC  deployed\nLAST DEPLOYED: Mon Dec  7 22:50:01 2026\n1  Sun Dec 13 09:05:59 2026  superseded",
			want: "inventory apps 1 <time> deployed\nLAST DEPLOYED: <time>\n1 <time> superseded",
		},
		"names, counts and versions stay": {
			in:   "hello   2/2   hello 0.1.0   kwok-node-0   replicas: 3   v1.37.2   600",
			want: "hello 2/2 hello 0.1.0 kwok-node-0 replicas: 3 v1.37.2 600",
		},
		"a reason stays":                     {in: "False (WaitingForSyncWave)", want: "False (WaitingForSyncWave)"},
		"a hex word of another length stays": {in: "deadbeef cec1e87bfa2", want: "deadbeef cec1e87bfa2"},
	}
	for name, tc := range normalise {
		t.Run(name, func(t *testing.T) {
			if got := normaliseOutput(tc.in); got != tc.want {
				t.Errorf("normaliseOutput(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}

	// What -update writes: helm's tab-separated table as spaces, without trailing
	// spaces, and the same once normalised as what was printed.
	for in, want := range map[string]string{
		"NAME     \tSTATUS    \tAPP VERSION\ninventory\tsuperseded\t1.0        \n\n": "NAME      STATUS     APP VERSION\ninventory superseded 1.0",
		"convoy Apply \nkube-controller-manager Update status\n":                     "convoy Apply\nkube-controller-manager Update status",
		"\nunchanged\n": "\nunchanged",
	} {
		got := asShown(in)
		if got != want {
			t.Errorf("asShown(%q) = %q, want %q", in, got, want)
		}
		if normaliseOutput(got) != normaliseOutput(in) {
			t.Errorf("asShown(%q) = %q normalises to %q, what was printed to %q", in, got, normaliseOutput(got), normaliseOutput(in))
		}
	}

	// TestTutorial starts convoy as `make dev` does: when the recipe changes, so must it.
	makefile, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, recipe, _ := strings.Cut(string(makefile), "\ndev:\n")
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	if want := "\t$(GO) build -o bin/ ./cmd/kubectl-convoy\n\t$(GO) run ./cmd/convoy dev"; recipe != want {
		t.Errorf("make dev's recipe is %q, TestTutorial starts convoy as %q does: make them agree", recipe, want)
	}

	for script, want := range map[string]bool{
		"kubectl get releases -n demo":                                         true,
		"kubectl convoy release list -n shop\nkubectl get deployments -n shop": true,
		"kubectl convoy release status hello -n demo":                          true,
		"kubectl convoy release sync hello -n demo":                            false,
		"kubectl convoy release list -A\nkubectl apply -f x.yaml":              false,
		"kubectl getter": false,
	} {
		if got := readsOnly(script); got != want {
			t.Errorf("readsOnly(%q) = %v, want %v", script, got, want)
		}
	}
}

// TestTutorial runs docs/tutorial.md against convoy started as `make dev` starts it
// (convoy dev, 3 simulated nodes, the example Release applied, kubectl-convoy on the
// PATH): each ```sh block in order, with its output compared to the ```text block
// after it once both are normalised (normaliseOutput). A block that fails, or prints
// something else than the tutorial shows, fails the test.
func TestTutorial(t *testing.T) {
	runWalkThrough(t, tutorialFile, nil)
}

// TestFleetTutorial runs docs/fleet-tutorial.md as TestTutorial runs the tutorial, on
// `convoy dev --clusters 3` (the host and the Clusters dev-1 … dev-3).
func TestFleetTutorial(t *testing.T) {
	runWalkThrough(t, fleetTutorialFile, nil, "--clusters", "3")
}

// TestMigratingFromHelm runs docs/migrating-from-helm.md as TestTutorial runs the
// tutorial, with the helm CLI on the PATH: helm installs a chart of convoy dev's
// repository, convoy takes the release over without restarting its pods and runs its
// upgrade hook only, and Helm's record ends superseded.
func TestMigratingFromHelm(t *testing.T) {
	runWalkThrough(t, migratingFromHelmFile, []string{helmTool})
}

// runWalkThrough runs the page file against `convoy dev` with devArgs, in a copy of
// examples/ (the page's commands may change it: publish a chart version), each ```sh
// block in order, with tools (more Go packages of go.mod, such as helmTool) built onto
// the PATH beside convoy and kubectl-convoy; with -update it writes what each block
// printed into the page.
func runWalkThrough(t *testing.T, file string, tools []string, devArgs ...string) {
	testenv.Integration(t)
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := tutorialSteps(file, string(doc))
	if err != nil {
		t.Fatal(err)
	}
	kubeBin, err := localcluster.BinDir()
	if err != nil {
		t.Fatal(err)
	}

	// `make dev`: kubectl-convoy into a bin folder, then `convoy dev`.
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	pkgs := append([]string{"./cmd/convoy", "./cmd/kubectl-convoy"}, tools...)
	build := exec.Command("go", append([]string{"build", "-o", bin + "/"}, pkgs...)...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	// A free port, not the default one, so that a `make dev` beside the tests does not
	// collide. The commands see examples/ with it written in, run with it in place of
	// the default address (helm install --repo), and their outputs read back as the
	// default address.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	chartsAddr := l.Addr().String()
	l.Close()
	chartsURL, defaultURL := "http://"+chartsAddr, "http://"+chartrepo.DefaultAddr
	work := filepath.Join(tmp, "work")
	copyExamples(t, filepath.Join(root, "examples"), filepath.Join(work, "examples"), defaultURL, chartsURL)

	// The state folder is the work folder's .convoy/dev, where `convoy dev` puts it by
	// default: the page's commands may name it.
	stateDir := filepath.Join(work, ".convoy", "dev")
	out := &testenv.SyncBuffer{}
	args := append([]string{"dev", "--state-dir", stateDir, "--charts-addr", chartsAddr,
		"--examples-dir", filepath.Join(work, "examples")}, devArgs...)
	devCmd := exec.Command(filepath.Join(bin, "convoy"), args...)
	devCmd.Dir = root
	devCmd.Stdout, devCmd.Stderr = out, out
	if err := devCmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- devCmd.Wait() }()
	t.Cleanup(func() {
		_ = devCmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(90 * time.Second):
			_ = devCmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("convoy dev output:\n%s", out.String())
		}
	})
	testenv.Eventually(t, ctx(t, 8*time.Minute), "convoy dev ready", 8*time.Minute, func() (bool, string) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("convoy dev ended before it was ready: %v\n%s", err, out.String())
		default:
		}
		_, err := os.Stat(filepath.Join(stateDir, dev.ReadyFile))
		return err == nil, fmt.Sprintf("no ready file: %v", err)
	})

	// The environment of the page's second terminal.
	environ := append(os.Environ(),
		"KUBECONFIG="+filepath.Join(stateDir, dev.KubeconfigFile),
		"PATH="+bin+":"+kubeBin+":"+os.Getenv("PATH"),
		"HOME="+filepath.Join(tmp, "home"), // kubectl's cache
		"NO_COLOR=1",
	)
	run := func(script string) (string, error) {
		runCtx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		script = strings.ReplaceAll(script, defaultURL, chartsURL)
		c := exec.CommandContext(runCtx, "bash", "-e", "-o", "pipefail", "-c", script)
		c.Dir, c.Env = work, environ
		b, err := c.CombinedOutput()
		return strings.ReplaceAll(string(b), chartsURL, defaultURL), err
	}
	printed := make([]string, len(steps))
	for i, s := range steps {
		want := normaliseOutput(s.want)
		got, err := run(s.script)
		if readsOnly(s.script) && s.hasWant && (err != nil || normaliseOutput(got) != want) && !*update {
			// Reads only: again until the state settled, for at most two minutes.
			_ = wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 2*time.Minute, false, func(context.Context) (bool, error) {
				got, err = run(s.script)
				return err == nil && normaliseOutput(got) == want, nil
			})
		}
		if err != nil {
			t.Fatalf("%s:%d: the block failed: %v\n$ %s\n%s", file, s.line, err, s.script, got)
		}
		printed[i] = asShown(got)
		if s.hasWant && normaliseOutput(got) != want && !*update {
			t.Fatalf("%s:%d: the block prints something else than the page shows (-page +printed, normalised):\n%s\n$ %s\n%s",
				file, s.line, cmp.Diff(strings.Split(want, "\n"), strings.Split(normaliseOutput(got), "\n")), s.script, got)
		}
		t.Logf("%s:%d: ok\n$ %s\n%s", file, s.line, s.script, got)
	}
	if *update {
		updated, err := withOutputs(string(doc), steps, printed)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, file), []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// asShown is what a block printed as -update writes it into the page: tabs as spaces
// (helm's tables separate their padded columns with a tab), no spaces at the ends of
// lines and no blank lines at the end; the comparison ignores all three.
func asShown(printed string) string {
	lines := strings.Split(strings.ReplaceAll(printed, "\t", " "), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// withOutputs is doc with the text block of each step replaced by what it printed
// (steps as tutorialSteps parsed doc; a step without a text block is left as it is).
func withOutputs(doc string, steps []tutorialStep, printed []string) (string, error) {
	lines := strings.Split(doc, "\n")
	byLine := map[int]int{}
	for i, s := range steps {
		byLine[s.line] = i
	}
	var out []string
	step := -1 // the step whose text block comes next
	for n := 0; n < len(lines); n++ {
		l := lines[n]
		if i, ok := byLine[n+1]; ok {
			step = i
		}
		if l != "```text" || step < 0 || !steps[step].hasWant {
			out = append(out, l)
			continue
		}
		end := n + 1
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			return "", fmt.Errorf("line %d: a text block that is not closed", n+1)
		}
		out = append(out, l)
		if printed[step] != "" {
			out = append(out, strings.Split(printed[step], "\n")...)
		}
		out = append(out, "```")
		n, step = end, -1
	}
	return strings.Join(out, "\n"), nil
}

// copyExamples copies the examples folder from to to, with the chart repository's
// address from written as to.
func copyExamples(t *testing.T, from, to, fromURL, toURL string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, bytes.ReplaceAll(b, []byte(fromURL), []byte(toURL)), 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}
