package ui

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The UI answers only requests for its loopback host, and a write only with the
// X-Convoy-UI header and from its own origin: another site's page open in the
// same browser cannot make the user sync or pin (CSRF), nor read through a DNS
// name that points at 127.0.0.1 (rebinding).
func TestGuard(t *testing.T) {
	cases := map[string]struct {
		method, host, origin string
		header               bool
		want                 int
	}{
		"a read on loopback":                {method: "GET", host: "127.0.0.1:8080", want: 200},
		"a read on localhost":               {method: "GET", host: "localhost:8080", want: 200},
		"a read for another host name":      {method: "GET", host: "evil.example.com:8080", want: 403},
		"a write with the header":           {method: "POST", host: "127.0.0.1:8080", header: true, want: 200},
		"a write from the page's origin":    {method: "POST", host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080", header: true, want: 200},
		"a write without the header":        {method: "POST", host: "127.0.0.1:8080", want: 403},
		"a write from another origin":       {method: "POST", host: "127.0.0.1:8080", origin: "http://evil.example.com", header: true, want: 403},
		"a write for another host, trusted": {method: "POST", host: "evil.example.com:8080", header: true, want: 403},
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "http://"+tc.host+"/api/releases/a/b/sync", nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.header {
				r.Header.Set("X-Convoy-UI", "1")
			}
			w := httptest.NewRecorder()
			guard(ok).ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Errorf("status %d, want %d: %s", w.Code, tc.want, w.Body.String())
			}
		})
	}
}
