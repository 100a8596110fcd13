package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Outcome is what release sync --wait makes of the Release it just read.
type Outcome int

const (
	// Waiting means the request is not handled yet and nothing says it never will be.
	Waiting Outcome = iota
	// Handled means the request is handled; exit 0.
	Handled
	// Failed means the Release says why the request fails or is held; exit 1.
	Failed
)

// defaultFreshness is how long --wait trusts a status that has not changed since the
// request to be older than the request: a reconcile that ends as the one before
// writes no status, so after this time an unchanged failure counts as the answer.
const defaultFreshness = 10 * time.Second

// SyncWait is one /sync request that release sync --wait follows.
type SyncWait struct {
	// At is the time the request wrote to sync-requested-at.
	At time.Time
	// Force: the request was a forced sync.
	Force bool
	// Render is the render the request approves (full ref or its short form); empty:
	// a plain request, which approves any render.
	Render string
	// Baseline is statusFingerprint of the Release /sync returned: a different status
	// was written by a reconcile after the request.
	Baseline string
	// Freshness is how long an unchanged status counts as older than the request
	// (default 10s).
	Freshness time.Duration
}

// statusFingerprint identifies a status, to tell when the controller wrote a new one.
func statusFingerprint(r *v1.Release) string {
	b, _ := json.Marshal(r.Status)
	return string(b)
}

// Judge decides whether the request is handled, failed or still pending, given the
// Release read at now, and returns a message for people.
func (w SyncWait) Judge(r *v1.Release, now time.Time) (Outcome, string) {
	applied := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied)
	automatic := mode(r) == "Automatic"
	handledSync := atOrAfter(r.Status.LastHandledSyncAt, w.At)
	handledForce := w.Force && atOrAfter(r.Status.LastHandledForceSyncAt, w.At)
	freshness := w.Freshness
	if freshness == 0 {
		freshness = defaultFreshness
	}
	fresh := handledSync || handledForce || statusFingerprint(r) != w.Baseline || now.Sub(w.At) >= freshness
	if r.Status.ObservedGeneration != r.Generation {
		fresh = false
	}
	if applied == nil || !fresh {
		return Waiting, "waiting for the controller"
	}
	render := "the render"
	if ls := r.Status.LastSuccessful; ls != nil {
		render = "render " + ShortRef(ls.RenderRef)
	}
	if applied.Status == metav1.ConditionTrue && (handledSync || automatic) {
		switch {
		case w.applied(r):
			return Handled, fmt.Sprintf("sync %s handled: %s applied", v1.FormatSyncTime(w.At), render)
		case !w.current(r):
			return Failed, w.renderChanged(r)
		}
		return Waiting, "waiting for the controller"
	}
	if applied.Status == metav1.ConditionTrue {
		return Waiting, "waiting for the controller"
	}
	if w.Render != "" && !handledSync && applied.Reason == v1.ReasonWaitingForSync && !w.current(r) {
		return Failed, w.renderChanged(r)
	}
	switch applied.Reason {
	case v1.ReasonUnsupported, v1.ReasonUnappliable, v1.ReasonHookFailed, v1.ReasonServiceAccountNotFound, v1.ReasonForbidden,
		v1.ReasonVerificationFailed:
		return Failed, fmt.Sprintf("sync failed: %s: %s", applied.Reason, applied.Message)
	case v1.ReasonPinned, v1.ReasonRolledBack:
		return Failed, fmt.Sprintf("sync held: %s: %s", applied.Reason, applied.Message)
	}
	return Waiting, applied.Reason
}

// applied says whether the render applied last is the one the request approves (any,
// for a plain request), or the pinned render, which is what a pinned Release applies.
func (w SyncWait) applied(r *v1.Release) bool {
	if w.Render == "" {
		return true
	}
	ls := r.Status.LastSuccessful
	if ls == nil {
		return false
	}
	return v1.RenderRef(w.Render).Names(ls.RenderRef) || (r.Pin != nil && r.Pin.RenderRef != "" && ls.RenderRef == r.Pin.RenderRef)
}

// current says whether the render the request approves is still the Release's
// current render or its pinned render: while it is, the request can be applied.
func (w SyncWait) current(r *v1.Release) bool {
	if w.Render == "" {
		return true
	}
	ref := v1.RenderRef(w.Render)
	return (r.Status.Render != nil && ref.Names(r.Status.Render.Ref)) || (r.Pin != nil && ref.Names(r.Pin.RenderRef))
}

// renderChanged says that the render changed before the request was applied, and what
// to do.
func (w SyncWait) renderChanged(r *v1.Release) string {
	current := "another one"
	if r.Status.Render != nil {
		current = ShortRef(r.Status.Render.Ref)
	}
	return fmt.Sprintf("sync %s not applied: it approved render %s, but the current render is %s; "+
		"review it with `kubectl convoy release diff %s` and sync again",
		v1.FormatSyncTime(w.At), ShortRef(w.Render), current, r.Name)
}

func atOrAfter(t *metav1.Time, at time.Time) bool {
	return t != nil && !t.UTC().Truncate(time.Second).Before(at.UTC().Truncate(time.Second))
}

// ProgressLine is the one-line progress of a Release: Applied reason, render, sync
// wave, hooks, health and rollout. elapsed is shown when not zero (the terminal line);
// width, when more than 0, cuts the line to fit.
func ProgressLine(r *v1.Release, elapsed time.Duration, width int, t Terminal) string {
	parts := []string{r.Name}
	if c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionApplied); c != nil {
		parts = append(parts, t.status(c.Reason))
	} else {
		parts = append(parts, "not reconciled yet")
	}
	if rs := r.Status.Render; rs != nil {
		parts = append(parts, "render "+ShortRef(rs.Ref))
	}
	if sw := r.Status.SyncWave; sw != nil {
		parts = append(parts, fmt.Sprintf("wave %d/%d", sw.Current, sw.Total))
	}
	if hs := r.Status.Hooks; len(hs) > 0 {
		done, running := 0, []string{}
		for _, h := range hs {
			switch h.Phase {
			case v1.HookJobSucceeded:
				done++
			case v1.HookJobRunning, v1.HookJobPending:
				running = append(running, h.Name)
			}
		}
		s := fmt.Sprintf("hooks %d/%d", done, len(hs))
		if len(running) > 0 {
			s += " (" + strings.Join(running, ", ") + ")"
		}
		parts = append(parts, s)
	}
	if c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionHealthy); c != nil {
		parts = append(parts, "health "+t.status(c.Reason))
	}
	if ro := r.Status.Rollout; ro != nil && ro.Phase != v1.RolloutSucceeded {
		parts = append(parts, "rollout "+t.status(string(ro.Phase)))
	}
	line := strings.Join(parts, " · ")
	if elapsed > 0 {
		line += fmt.Sprintf(" (%s)", elapsed.Truncate(time.Second))
	}
	if width > 0 && visibleWidth(line) > width {
		line = cut(line, width)
	}
	return line
}

// cut shortens s to width visible runes, keeping ANSI sequences whole and resetting
// colour at the end.
func cut(s string, width int) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		if loc := ansiSequence.FindStringIndex(s[i:]); loc != nil && loc[0] == 0 {
			b.WriteString(s[i : i+loc[1]])
			i += loc[1]
			continue
		}
		r := []rune(s[i:])[0]
		if n == width-1 {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
		i += len(string(r))
	}
	if strings.Contains(s, "\x1b[") {
		b.WriteString(ansiReset)
	}
	return b.String()
}

// Progress writes progress lines: on a terminal one line rewritten in place,
// otherwise a plain line each time the line changes. In place means \r and the erase
// line sequence with colour, and \r with spaces over the rest of the last line
// without (NO_COLOR: no escape codes at all).
type Progress struct {
	Terminal Terminal
	last     string
	open     bool
	width    int
}

// Update shows line; plain is the line without the elapsed time, which decides
// whether a plain line is due.
func (p *Progress) Update(b *strings.Builder, line, plain string) {
	if p.Terminal.TTY {
		p.rewrite(b, line)
		p.open = true
		return
	}
	if plain != p.last {
		b.WriteString(plain + "\n")
		p.last = plain
	}
}

// rewrite replaces the current terminal line with line.
func (p *Progress) rewrite(b *strings.Builder, line string) {
	w := visibleWidth(line)
	if p.Terminal.Color {
		b.WriteString("\r" + ansiEraseLine + line)
	} else {
		b.WriteString("\r" + line + strings.Repeat(" ", max(p.width-w, 0)))
		if p.width > w {
			// Move back over the padding so the cursor ends after the text.
			b.WriteString("\r" + line)
		}
	}
	p.width = w
}

// Finish ends the progress with a final line.
func (p *Progress) Finish(b *strings.Builder, line string) {
	if p.Terminal.TTY && p.open {
		p.rewrite(b, line)
		b.WriteString("\n")
	} else {
		b.WriteString(line + "\n")
	}
	p.open = false
	p.width = 0
}
