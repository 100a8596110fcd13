package backup

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// The S3 store against an S3 server (gofakes3): what Put writes, Open reads back
// byte for byte, List names only the backups under the prefix, Delete removes.
func TestS3Store(t *testing.T) {
	mem := s3mem.New()
	if err := mem.CreateBucket("convoy"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "id")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	st, name, err := Open("s3://convoy/daily/", S3Options{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Insecure: true})
	if err != nil || name != "" {
		t.Fatalf("Open: %v, %q", err, name)
	}
	body := strings.Repeat("convoy backup bytes ", 100000)
	for _, n := range []string{Name(testTime(0)), Name(testTime(1))} {
		if err := st.Put(t.Context(), n, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	other, _, _ := Open("s3://convoy/other/", S3Options{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Insecure: true})
	if err := other.Put(t.Context(), Name(testTime(2)), strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	r, err := st.Open(t.Context(), Name(testTime(1)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != body {
		t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(body))
	}
	names, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{Name(testTime(0)), Name(testTime(1))}, names); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if err := st.Delete(t.Context(), Name(testTime(0))); err != nil {
		t.Fatal(err)
	}
	if names, _ := st.List(t.Context()); len(names) != 1 {
		t.Errorf("after Delete: %v", names)
	}
}
