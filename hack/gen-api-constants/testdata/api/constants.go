package api

// Reasons of a condition. They are short.
const (
	// ReasonGood: all is well.
	ReasonGood = "Good"
	// ReasonBad is a <bad> state | with a pipe.
	ReasonBad = "Bad"
	unexported = "x"
)

// Mode is typed: documented with its type, not here.
type Mode string

// Modes.
const (
	// ModeA is a mode.
	ModeA Mode = "A"
)

// GroupName is the API group.
const GroupName = "example.io"

// Port is not a string.
const Port = 8080
