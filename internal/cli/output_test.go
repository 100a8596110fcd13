package cli

import (
	"bytes"
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

func TestPrintObjectJSONAndYAMLParse(t *testing.T) {
	list := &v1.ReleaseList{Items: releases()}
	for _, format := range outputFormats {
		var b bytes.Buffer
		if err := printObject(&b, format, list); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		data := b.Bytes()
		if format == "yaml" {
			var err error
			if data, err = yaml.YAMLToJSON(data); err != nil {
				t.Fatalf("-o yaml does not parse: %v", err)
			}
		}
		var got v1.ReleaseList
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("-o %s does not parse: %v\n%s", format, err, b.String())
		}
		if got.Kind != "ReleaseList" || got.APIVersion != v1.SchemeGroupVersion.String() || len(got.Items) != 3 || got.Items[1].Name != "redis" {
			t.Errorf("-o %s: kind %q apiVersion %q items %d", format, got.Kind, got.APIVersion, len(got.Items))
		}
	}
}

func TestCheckOutputFormat(t *testing.T) {
	for _, ok := range []string{"", "yaml", "json"} {
		if err := checkOutputFormat(ok); err != nil {
			t.Errorf("checkOutputFormat(%q) = %v", ok, err)
		}
	}
	if err := checkOutputFormat("wide"); ExitCode(err) != ExitUsage {
		t.Errorf("checkOutputFormat(wide) = %v, want a usage error", err)
	}
}
