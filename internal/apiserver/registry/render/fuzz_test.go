package render

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Whatever a Render's manifests hold, RedactSecrets does not panic, and what it
// returns holds no v1 Secret with data or stringData: a reader who may not read
// Secrets never gets their data, however the stream is written.
func FuzzRedactSecrets(f *testing.F) {
	for _, s := range []string{
		configMapDoc + "---\napiVersion: v1\ndata:\n  password: aHVudGVyMg==\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  token: s3cr3t\n",
		"---\napiVersion: v1\nkind: Secret\nmetadata: null\ndata: [1, 2]\nstringData: {a: {b: c}}\n",
		"---\napiVersion: v1\nkind: Secret\nmetadata:\n  annotations: {a: 1}\ndata:\n  k: '%%%'\n",
		"---\n{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"data\":{\"k\":\"dg==\"}}\n---\n",
		"---\n- a\n- Secret\n",
		"---\n{\"apiVersion\":\"v1\",\"kind\":\"Secr\\u0065t\",\"data\":{\"k\":\"dg==\"}}\n",
		"apiVersion: v1\nkind: Secret\ndata: {k: dg==}\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream string) {
		out, _, err := RedactSecrets(gzipped(t, stream))
		if err != nil {
			return // served without manifests
		}
		for _, doc := range strings.Split("\n"+gunzip(t, out), "\n---\n") {
			var obj map[string]interface{}
			if yaml.Unmarshal([]byte(doc), &obj) != nil {
				continue
			}
			if obj["apiVersion"] == "v1" && obj["kind"] == "Secret" && (obj["data"] != nil || obj["stringData"] != nil) {
				t.Fatalf("a redacted stream holds a Secret's data:\n%s", doc)
			}
		}
	})
}
