package render

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/render/charttest"
)

func TestLoadChartOfHelmPackaging(t *testing.T) {
	// The charts under testdata load with Helm's own loader too: the tests render
	// what Helm would.
	for _, name := range []string{"web", "crds", "hooks", "waves", "kubeversion"} {
		if _, err := loader.LoadArchive(bytes.NewReader(packageChart(t, name, "1.0.0"))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A fetched archive that render cannot load gives the reason of what is wrong with
// it, naming the Release and the chart.
func TestChartLoadErrors(t *testing.T) {
	cases := map[string]struct {
		archive []byte
		reason  string
		msgHas  string
	}{
		"unknown chart apiVersion": {
			archive: charttest.RawArchive(t, "future", "apiVersion: v9\nname: future\nversion: 1.0.0\n"),
			reason:  v1alpha1.ReasonUnsupported, msgHas: `chart apiVersion "v9"`,
		},
		"library chart": {
			archive: charttest.RawArchive(t, "lib", "apiVersion: v2\nname: lib\nversion: 1.0.0\ntype: library\n"),
			reason:  v1alpha1.ReasonUnsupported, msgHas: `type "library"`,
		},
		"not a gzip archive": {
			archive: []byte("this is no archive"),
			reason:  v1alpha1.ReasonSourceNotReady, msgHas: "not a gzip'd tar",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rel := testRelease("web", "https://charts.example.com", "web")
			_, err := Render(context.Background(), Request{Release: rel, Capabilities: defaultCaps,
				Chart: Chart{What: "web 1.0.0", Digest: "sha256:" + sha256Hex(tc.archive), Archive: tc.archive}})
			if diff := cmp.Diff(tc.reason, reasons.Of(err, "")); diff != "" {
				t.Fatalf("reason (-want +got):\n%s\nerror: %v", diff, err)
			}
			if !strings.Contains(err.Error(), tc.msgHas) {
				t.Errorf("error %q does not say %q", err, tc.msgHas)
			}
			if !strings.HasPrefix(err.Error(), "Release team-a/web: chart web 1.0.0") {
				t.Errorf("error %q does not name the Release and the chart", err)
			}
		})
	}
}
