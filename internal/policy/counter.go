package policy

import "sync"

// Key names a Release: namespace and name. types.NamespacedName converts to it.
type Key struct {
	Namespace string
	Name      string
}

// CounterUpdate says how a reconcile changes the failure count.
type CounterUpdate string

const (
	// CounterKeep means a non-transient failure leaves the count as it is.
	CounterKeep CounterUpdate = "Keep"
	// CounterIncrement means a transient failure adds one.
	CounterIncrement CounterUpdate = "Increment"
	// CounterReset means a success or a hold resets it to zero.
	CounterReset CounterUpdate = "Reset"
)

// counterUpdateFor maps the kind of a reconcile's result to its counter update.
func counterUpdateFor(k Kind) CounterUpdate {
	switch k {
	case KindTransient:
		return CounterIncrement
	case KindFailure:
		return CounterKeep
	default:
		return CounterReset
	}
}

// FailureCounter counts the consecutive transient failures of each Release, in memory
// only: a restart of the controller resets every count. It is safe for concurrent use.
// The zero value is ready to use.
type FailureCounter struct {
	mu     sync.Mutex
	counts map[Key]int
}

// NewFailureCounter returns an empty counter.
func NewFailureCounter() *FailureCounter { return &FailureCounter{} }

// Get returns the count of key; zero when it has none.
func (c *FailureCounter) Get(key Key) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key]
}

// Increment adds one to the count of key and returns the new count.
func (c *FailureCounter) Increment(key Key) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[Key]int{}
	}
	c.counts[key]++
	return c.counts[key]
}

// Reset sets the count of key to zero (and forgets key); also for a deleted Release.
func (c *FailureCounter) Reset(key Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.counts, key)
}

// Update applies u to the count of key and returns the new count.
func (c *FailureCounter) Update(key Key, u CounterUpdate) int {
	switch u {
	case CounterIncrement:
		return c.Increment(key)
	case CounterReset:
		c.Reset(key)
		return 0
	default:
		return c.Get(key)
	}
}
