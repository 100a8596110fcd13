package testenv

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
)

// FailWrites makes the writes (any method but GET) whose URL path ends in Path fail
// while Armed, for a client whose rest.Config.WrapTransport is Wrap: a request that
// never reaches the server, as when the connection breaks. With a Limit, the write
// after Limit failures disarms it and goes through.
type FailWrites struct {
	Path  string
	Limit int32
	Armed atomic.Bool
	// Failed counts the writes made to fail.
	Failed atomic.Int32
}

// Wrap is a rest.Config.WrapTransport.
func (f *FailWrites) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if f.Armed.Load() && req.Method != http.MethodGet && strings.HasSuffix(req.URL.Path, f.Path) {
			if f.Limit == 0 || f.Failed.Load() < f.Limit {
				f.Failed.Add(1)
				return nil, errors.New("injected failure of a write")
			}
			f.Armed.Store(false)
		}
		return rt.RoundTrip(req)
	})
}
