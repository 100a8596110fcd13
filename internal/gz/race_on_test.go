//go:build race

package gz

// raceEnabled: sync.Pool drops a share of what it is given under the race detector.
const raceEnabled = true
