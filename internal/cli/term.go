package cli

import (
	"io"
	"regexp"
	"unicode/utf8"

	"golang.org/x/term"
)

// Terminal is what an output stream can show.
type Terminal struct {
	// TTY: a terminal; progress lines update in place with \r and erase-line.
	TTY bool
	// Color: ANSI colours are allowed (a terminal and no NO_COLOR).
	Color bool
}

// isTerminal reports whether w is a terminal: a file with a terminal's descriptor.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// ANSI sequences the plugin writes.
const (
	ansiReset     = "\x1b[0m"
	ansiRed       = "\x1b[31m"
	ansiGreen     = "\x1b[32m"
	ansiYellow    = "\x1b[33m"
	ansiBold      = "\x1b[1m"
	ansiEraseLine = "\x1b[2K"
)

// paint wraps s in the colour code when colour is on.
func (t Terminal) paint(code, s string) string {
	if !t.Color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// status colours a condition status or a health: green good, red bad, yellow pending.
func (t Terminal) status(s string) string {
	switch s {
	case "True", "Healthy", "Succeeded", "Ready", "Reachable", "Complete":
		return t.paint(ansiGreen, s)
	case "False", "Degraded", "Failed", "Missing", "RolledBack", "Unreachable", "Halted":
		return t.paint(ansiRed, s)
	case "", "-":
		return s
	default:
		return t.paint(ansiYellow, s)
	}
}

var ansiSequence = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// visibleWidth is the number of runes of s without ANSI sequences.
func visibleWidth(s string) int {
	return utf8.RuneCountInString(ansiSequence.ReplaceAllString(s, ""))
}
