package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// The filter answers convoy's resource requests with 503, Retry-After and a message
// naming etcd after quorumFailures failed probes, and passes everything else.
func TestEtcdQuorumFilter(t *testing.T) {
	lost := errors.New("context deadline exceeded")
	resource := &request.RequestInfo{IsResourceRequest: true, APIGroup: "convoy.kumodo.io", Resource: "releases", Verb: "get"}
	other := &request.RequestInfo{IsResourceRequest: true, APIGroup: "", Resource: "namespaces", Verb: "get"}
	health := &request.RequestInfo{IsResourceRequest: false, Path: "/readyz"}
	type want struct {
		Code       int
		RetryAfter string
		Message    string
	}
	passed := want{Code: http.StatusOK}
	refused := want{Code: http.StatusServiceUnavailable, RetryAfter: "1",
		Message: "convoy's storage (etcd) has no quorum: context deadline exceeded; the API answers again when a majority of etcd's members is back (docs/operations.md)"}
	cases := map[string]struct {
		probes []error
		info   *request.RequestInfo
		want   want
	}{
		"no probe yet":                      {info: resource, want: passed},
		"etcd answers":                      {probes: []error{nil}, info: resource, want: passed},
		"one slow probe (leader election)":  {probes: []error{nil, lost}, info: resource, want: passed},
		"two failed probes":                 {probes: []error{lost, lost}, info: resource, want: refused},
		"back after a good probe":           {probes: []error{lost, lost, lost, nil}, info: resource, want: passed},
		"a failure after recovery is alone": {probes: []error{lost, lost, nil, lost}, info: resource, want: passed},
		"health checks pass without quorum": {probes: []error{lost, lost}, info: health, want: passed},
		"other groups pass without quorum":  {probes: []error{lost, lost}, info: other, want: passed},
		"no request info passes":            {probes: []error{lost, lost}, want: passed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := &etcdQuorum{}
			for _, err := range tc.probes {
				q.observe(context.Background(), err)
			}
			h := q.filter(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }), Codecs)
			r := httptest.NewRequest(http.MethodGet, "/apis/convoy.kumodo.io/v1alpha1/namespaces/a/releases/b", nil)
			r.Header.Set("Accept", "application/json")
			if tc.info != nil {
				r = r.WithContext(request.WithRequestInfo(r.Context(), tc.info))
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			got := want{Code: w.Code, RetryAfter: w.Header().Get("Retry-After")}
			if w.Code != http.StatusOK {
				var s metav1.Status
				if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
					t.Fatalf("the body is not a Status: %v: %s", err, w.Body)
				}
				got.Message = s.Message
				if s.Reason != metav1.StatusReasonServiceUnavailable || s.Details == nil || s.Details.RetryAfterSeconds != 1 {
					t.Errorf("Status %+v, want reason ServiceUnavailable with retryAfterSeconds 1", s)
				}
				if !strings.Contains(w.Header().Get("Content-Type"), "json") {
					t.Errorf("Content-Type %q, want JSON", w.Header().Get("Content-Type"))
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
		})
	}
}
