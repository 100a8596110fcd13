package cli

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// terminal is a real pseudo-terminal: tty is what the plugin writes to, Output what
// a person would see (read from the master side).
type terminal struct {
	tty  *os.File
	ptmx *os.File
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
	// wrote gets a value after each read from the terminal.
	wrote chan struct{}
}

func (term *terminal) afterWrite() <-chan struct{} { return term.wrote }

func openTerminal(t *testing.T) *terminal {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	term := &terminal{tty: tty, ptmx: ptmx, done: make(chan struct{}), wrote: make(chan struct{}, 1)}
	go func() {
		defer close(term.done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			term.mu.Lock()
			term.buf.Write(b[:n])
			term.mu.Unlock()
			select {
			case term.wrote <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { _ = ptmx.Close(); _ = tty.Close() })
	return term
}

// Output closes the terminal side and returns everything written to it.
func (term *terminal) Output() string {
	_ = term.tty.Close()
	<-term.done
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.buf.String()
}

func TestTerminalDetection(t *testing.T) {
	term := openTerminal(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	tests := map[string]struct {
		out     io.Writer
		environ map[string]string
		want    Terminal
	}{
		"pty":            {out: term.tty, want: Terminal{TTY: true, Color: true}},
		"pty NO_COLOR":   {out: term.tty, environ: map[string]string{"NO_COLOR": "1"}, want: Terminal{TTY: true}},
		"pty TERM=dumb":  {out: term.tty, environ: map[string]string{"TERM": "dumb"}, want: Terminal{TTY: true}},
		"pipe":           {out: w, want: Terminal{}},
		"buffer":         {out: &bytes.Buffer{}, want: Terminal{}},
		"empty NO_COLOR": {out: term.tty, environ: map[string]string{"NO_COLOR": ""}, want: Terminal{TTY: true, Color: true}},
	}
	for name, tc := range tests {
		o := testOptions(StdStreams(), tc.environ)
		if got := o.Terminal(tc.out); got != tc.want {
			t.Errorf("%s: Terminal = %+v, want %+v", name, got, tc.want)
		}
	}
}

// The progress line written to a real terminal updates in place.
func TestProgressUnderPTY(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ map[string]string
	}{{"color", nil}, {"NO_COLOR", map[string]string{"NO_COLOR": "1"}}} {
		t.Run(tc.name, func(t *testing.T) {
			term := openTerminal(t)
			o := testOptions(StdStreams(), tc.environ)
			p := &Progress{Terminal: o.Terminal(term.tty)}
			var b strings.Builder
			r := progressRelease()
			p.Update(&b, ProgressLine(r, 0, width(term.tty), p.Terminal), "")
			r.Status.SyncWave.Current = 2
			p.Update(&b, ProgressLine(r, 0, width(term.tty), p.Terminal), "")
			p.Finish(&b, "done")
			if _, err := io.WriteString(term.tty, b.String()); err != nil {
				t.Fatal(err)
			}
			checkInPlace(t, term.Output(), tc.environ["NO_COLOR"] != "", "wave 1/3", "wave 2/3", "done")
		})
	}
}

// checkInPlace checks terminal output: the lines follow each other on one line
// (\r, no newline between them), with the erase-line sequence and colour, or without
// any escape code under NO_COLOR.
func checkInPlace(t *testing.T, out string, noColor bool, want ...string) {
	t.Helper()
	last := -1
	for _, w := range want {
		i := strings.Index(out, w)
		if i < 0 || i < last {
			t.Fatalf("terminal output %q lacks %q after the previous line", out, w)
		}
		last = i
	}
	first := strings.Index(out, want[0])
	if between := out[first:last]; strings.Contains(between, "\n") || !strings.Contains(between, "\r") {
		t.Errorf("the progress did not update in place: %q", between)
	}
	if noColor && strings.Contains(out, "\x1b") {
		t.Errorf("escape codes with NO_COLOR: %q", out)
	}
	if !noColor && !strings.Contains(out, "\r"+ansiEraseLine) {
		t.Errorf("no erase-line on a colour terminal: %q", out)
	}
}

// release sync --wait on a real terminal shows one updating line, then the result.
func TestSyncWaitUnderPTY(t *testing.T) {
	needCluster(t)
	for _, tc := range []struct {
		name    string
		environ map[string]string
	}{{"color", nil}, {"NO_COLOR", map[string]string{"NO_COLOR": "1"}}} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t)
			createRenderedRelease(t, ns, "podinfo")
			term := openTerminal(t)
			done, errOut := syncAndWait(t, ns, term.tty, tc.environ)
			at := requestedAt(t, ns, "")
			writeStatus(t, ns, "podinfo", func(r *v1.Release) {
				r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionFalse, v1.ReasonWaitingForSyncWave, "Wave 1 waits.")}
				r.Status.SyncWave = &v1.SyncWaveStatus{Current: 1, Total: 2}
			})
			waitForOutput(t, term, "wave 1/2")
			writeStatus(t, ns, "podinfo", func(r *v1.Release) {
				r.Status.SyncWave = &v1.SyncWaveStatus{Current: 2, Total: 2}
			})
			waitForOutput(t, term, "wave 2/2")
			writeStatus(t, ns, "podinfo", func(r *v1.Release) {
				handled := metav1.NewTime(at)
				r.Status.Conditions = []metav1.Condition{appliedCondition(metav1.ConditionTrue, v1.ReasonApplied, "Applied.")}
				r.Status.SyncWave = nil
				r.Status.LastHandledSyncAt = &handled
				r.Status.LastSuccessful = &v1.LastSuccessful{RenderRef: refB}
			})
			if code := <-done; code != 0 {
				t.Fatalf("exit %d, stderr %s", code, errOut)
			}
			checkInPlace(t, term.Output(), tc.environ["NO_COLOR"] != "", "wave 1/2", "wave 2/2", "handled")
		})
	}
}

// waitForOutput polls the terminal until it shows s.
func waitForOutput(t *testing.T, term *terminal, s string) {
	t.Helper()
	ctx := testCtx(t)
	for {
		term.mu.Lock()
		ok := strings.Contains(term.buf.String(), s)
		term.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the terminal never showed %q", s)
		case <-term.afterWrite():
		}
	}
}
