package render

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

const configMapDoc = "---\napiVersion: v1\ndata:\n  password: not-a-secret\nkind: ConfigMap\nmetadata:\n  name: c\n"

// sha256("hunter2") and sha256("s3cr3t").
const (
	hunter2 = "sha256:f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7"
	s3cr3t  = "sha256:4e738ca5563c06cfd0018299933d58db1dd8bf97f6973dc99bf6cdc64b5550bd"
)

func TestRedactSecrets(t *testing.T) {
	cases := map[string]struct {
		stream      string
		want        string
		wantChanged bool
	}{
		"no Secret: the manifests as stored": {
			stream: configMapDoc + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
			want:   configMapDoc + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
		},
		"a Secret's data and stringData become digests; the other documents stay byte for byte": {
			stream: configMapDoc +
				"---\napiVersion: v1\ndata:\n  password: aHVudGVyMg==\nkind: Secret\nmetadata:\n  name: s\n  namespace: team-a\nstringData:\n  token: s3cr3t\ntype: Opaque\n" +
				"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n",
			want: configMapDoc +
				"---\napiVersion: v1\nkind: Secret\nmetadata:\n  annotations:\n    convoy.kumodo.io/redacted-data: '{\"password\":\"" + hunter2 + "\",\"token\":\"" + s3cr3t + "\"}'\n  name: s\n  namespace: team-a\ntype: Opaque\n" +
				"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n",
			wantChanged: true,
		},
		"a Secret that is a chart hook, last in the stream": {
			stream:      "---\napiVersion: v1\nkind: Secret\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n  name: h\nstringData:\n  token: s3cr3t\n",
			want:        "---\napiVersion: v1\nkind: Secret\nmetadata:\n  annotations:\n    convoy.kumodo.io/redacted-data: '{\"token\":\"" + s3cr3t + "\"}'\n    helm.sh/hook: pre-install\n  name: h\n",
			wantChanged: true,
		},
		"a Secret of another group is not a core Secret": {
			stream: "---\napiVersion: example.com/v1\nkind: Secret\nmetadata:\n  name: x\nspec:\n  data: kept\n",
			want:   "---\napiVersion: example.com/v1\nkind: Secret\nmetadata:\n  name: x\nspec:\n  data: kept\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := gzipped(t, tc.stream)
			out, changed, err := RedactSecrets(in)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, gunzip(t, out)); diff != "" {
				t.Errorf("redacted stream (-want +got):\n%s", diff)
			}
			if !changed && !bytes.Equal(in, out) {
				t.Errorf("unchanged manifests were re-encoded")
			}
		})
	}
	if _, _, err := RedactSecrets([]byte("not gzip")); err == nil {
		t.Error("manifests that are not gzip: no error")
	}
}

type accessFunc func(namespace string) bool

func (f accessFunc) MayReadSecrets(_ context.Context, namespace string) bool { return f(namespace) }

// A user who may read the Secrets of the namespace gets the Render as stored; another
// gets a copy with digests, and the stored object is not changed; manifests that cannot
// be read are not served to them at all.
func TestForUser(t *testing.T) {
	secret := "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  token: s3cr3t\n"
	stored := &convoyv1alpha1.Render{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "team-a"}, Manifests: gzipped(t, secret)}
	r := &redactingREST{access: accessFunc(func(ns string) bool { return ns == "team-a" })}

	if got := r.forUser(context.Background(), newAccessCache(r.access), stored); got != stored {
		t.Errorf("a Secret reader got a copy")
	}
	other := stored.DeepCopy()
	other.Namespace = "team-b"
	got := r.forUser(context.Background(), newAccessCache(r.access), other).(*convoyv1alpha1.Render)
	if bytes.Contains([]byte(gunzip(t, got.Manifests)), []byte("s3cr3t\n")) {
		t.Errorf("the Secret's data is served to a user who may not read it:\n%s", gunzip(t, got.Manifests))
	}
	if gunzip(t, other.Manifests) != secret {
		t.Errorf("redacting changed the stored object")
	}
	broken := other.DeepCopy()
	broken.Manifests = []byte("not gzip")
	if got := r.forUser(context.Background(), newAccessCache(r.access), broken).(*convoyv1alpha1.Render); got.Manifests != nil {
		t.Errorf("unreadable manifests are served: %q", got.Manifests)
	}
}
