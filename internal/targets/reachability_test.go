package targets

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kumodo.io/convoy/internal/testenv"
)

// A remote cluster's requests through a link that holds connections fail within the
// read answer timeout, not at the first TCP timeout; the next ones fail at once with
// ErrUnreachable (no worker waits for a cluster known not to answer), and once the
// link passes again the probe finds the cluster back and requests go through.
func TestAClusterThatDoesNotAnswerFailsFastUntilItAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	t.Cleanup(srv.Close)
	link, err := testenv.NewLink(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	url := "http://" + link.Addr()
	r := newReachability(url)
	c := &http.Client{Transport: r.wrap(http.DefaultTransport.(*http.Transport).Clone())}
	get := func() (time.Duration, error) {
		start := time.Now()
		resp, err := c.Get(url + "/api/v1/namespaces/a/configmaps/b")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		return time.Since(start), err
	}
	if _, err := get(); err != nil {
		t.Fatalf("a GET through the link: %v", err)
	}

	link.Hang()
	took, err := get()
	if err == nil || took > ReadAnswerTimeout+2*time.Second {
		t.Errorf("a GET through the hanging link: %v after %s; want an error within %s", err, took, ReadAnswerTimeout)
	}
	took, err = get()
	if !errors.Is(err, ErrUnreachable) || took > time.Second {
		t.Errorf("the next GET: %v after %s; want ErrUnreachable at once", err, took)
	}
	if r.Down() == nil {
		t.Error("the cluster is not marked down")
	}

	link.Pass()
	testenv.Eventually(t, t.Context(), "requests to go through again", 10*time.Second, func() (bool, string) {
		_, err := get()
		return err == nil, errString(err)
	})
	testenv.Eventually(t, t.Context(), "the probe to stop", 5*time.Second, func() (bool, string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return !r.probing, "still probing"
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestAnswerTimeout(t *testing.T) {
	cases := map[string]struct {
		method, url string
		want        time.Duration
	}{
		"a GET":                      {http.MethodGet, "https://h/api/v1/namespaces/a/configmaps/b", ReadAnswerTimeout},
		"a list":                     {http.MethodGet, "https://h/apis/apps/v1/deployments?labelSelector=x&limit=500", ReadAnswerTimeout},
		"a watch":                    {http.MethodGet, "https://h/apis/apps/v1/deployments?watch=true&resourceVersion=5", 0},
		"a watch of the old path":    {http.MethodGet, "https://h/api/v1/watch/namespaces/a/pods", 0},
		"a server-side apply":        {http.MethodPatch, "https://h/api/v1/namespaces/a/configmaps/b?fieldManager=convoy", WriteAnswerTimeout},
		"a create":                   {http.MethodPost, "https://h/api/v1/namespaces/a/configmaps", WriteAnswerTimeout},
		"a delete":                   {http.MethodDelete, "https://h/api/v1/namespaces/a/configmaps/b", WriteAnswerTimeout},
		"a watch=false list is read": {http.MethodGet, "https://h/api/v1/pods?watch=false", ReadAnswerTimeout},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.url, nil)
			if got := answerTimeout(req); got != tc.want {
				t.Errorf("answerTimeout(%s %s) = %s, want %s", tc.method, tc.url, got, tc.want)
			}
		})
	}
}
