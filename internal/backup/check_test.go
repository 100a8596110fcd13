package backup

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	here := Target{Prefix: "/registry/convoy.kumodo.io", Served: []string{"convoy.kumodo.io/v1alpha1"}}
	cases := map[string]struct {
		header  Header
		trailer Trailer
		want    string // part of the error; empty: restorable
	}{
		"same prefix, served version": {
			Header{Prefix: "/registry/convoy.kumodo.io"}, Trailer{APIVersions: []string{"convoy.kumodo.io/v1alpha1"}}, ""},
		"same prefix with a trailing slash": {
			Header{Prefix: "/registry/convoy.kumodo.io/"}, Trailer{APIVersions: []string{"convoy.kumodo.io/v1alpha1"}}, ""},
		"an empty backup": {
			Header{Prefix: "/registry/convoy.kumodo.io"}, Trailer{}, ""},
		"another prefix": {
			Header{Prefix: "/convoy-staging"}, Trailer{APIVersions: []string{"convoy.kumodo.io/v1alpha1"}},
			`the backup holds the keys of etcd prefix "/convoy-staging" and convoy here uses "/registry/convoy.kumodo.io"`},
		"a newer API version": {
			Header{Prefix: "/registry/convoy.kumodo.io"}, Trailer{APIVersions: []string{"convoy.kumodo.io/v1alpha1", "convoy.kumodo.io/v1beta1"}},
			"the backup holds convoy.kumodo.io/v1beta1 objects, which this convoy does not read (it reads convoy.kumodo.io/v1alpha1): it was taken by a newer convoy"},
		"another group": {
			Header{Prefix: "/registry/convoy.kumodo.io"}, Trailer{APIVersions: []string{"apps/v1"}},
			"the backup holds apps/v1 objects, which are not convoy's"},
		"not JSON": {
			Header{Prefix: "/registry/convoy.kumodo.io"}, Trailer{APIVersions: []string{""}},
			"objects that are not JSON"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Check(tc.header, tc.trailer, here)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("Check allowed the restore, want an error with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("Check said %q, want %q", err, tc.want)
			}
		})
	}
}
