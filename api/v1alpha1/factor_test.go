package v1alpha1

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestFactorJSON(t *testing.T) {
	type holder struct {
		Factor *Factor `json:"factor,omitempty"`
	}
	cases := map[string]struct {
		in, out string
		value   float64
		wantErr bool
	}{
		"integer":       {in: `{"factor":2}`, out: `{"factor":2}`, value: 2},
		"fraction":      {in: `{"factor":1.5}`, out: `{"factor":1.5}`, value: 1.5},
		"quoted":        {in: `{"factor":"1.5"}`, out: `{"factor":1.5}`, value: 1.5},
		"below one":     {in: `{"factor":0.5}`, out: `{"factor":0.5}`, value: 0.5},
		"unset":         {in: `{}`, out: `{}`},
		"null":          {in: `{"factor":null}`, out: `{}`},
		"not a number":  {in: `{"factor":"fast"}`, wantErr: true},
		"not finite":    {in: `{"factor":"1e999"}`, wantErr: true},
		"a JSON object": {in: `{"factor":{}}`, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var h holder
			err := json.Unmarshal([]byte(tc.in), &h)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("decoding %s: no error, want one", tc.in)
				}
				return
			}
			if err != nil {
				t.Fatalf("decoding %s: %v", tc.in, err)
			}
			out, err := json.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.out {
				t.Errorf("round trip of %s = %s, want %s", tc.in, out, tc.out)
			}
			if h.Factor != nil {
				if v, _ := h.Factor.Float64(); v != tc.value {
					t.Errorf("value = %v, want %v", v, tc.value)
				}
			}
		})
	}
}

func TestSyncOptionsFromQuery(t *testing.T) {
	cases := map[string]struct {
		query   map[string][]string
		want    bool
		wantErr bool
	}{
		"none":       {query: map[string][]string{}},
		"true":       {query: map[string][]string{"force": {"true"}}, want: true},
		"false":      {query: map[string][]string{"force": {"false"}}},
		"bare":       {query: map[string][]string{"force": {""}}, want: true},
		"not a bool": {query: map[string][]string{"force": {"yes-please"}}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var opts SyncOptions
			values := url.Values(tc.query)
			err := convertURLValuesToSyncOptions(&values, &opts)
			if (err != nil) != tc.wantErr || opts.Force != tc.want {
				t.Errorf("force = %v, err = %v; want %v, error %v", opts.Force, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestSyncOptionsRenderFromQuery(t *testing.T) {
	full := "sha256:" + strings.Repeat("9a", 32)
	cases := map[string]struct {
		query   map[string][]string
		want    SyncOptions
		wantErr bool
	}{
		"no render: a plain /sync":     {query: map[string][]string{}},
		"a full ref":                   {query: map[string][]string{"render": {full}}, want: SyncOptions{Render: full}},
		"the short form":               {query: map[string][]string{"render": {"9a9a9a9a9a"}}, want: SyncOptions{Render: "9a9a9a9a9a"}},
		"with force":                   {query: map[string][]string{"render": {full}, "force": {"true"}}, want: SyncOptions{Force: true, Render: full}},
		"the last of two":              {query: map[string][]string{"render": {"0000000000", full}}, want: SyncOptions{Render: full}},
		"upper case":                   {query: map[string][]string{"render": {"9A9A9A9A9A"}}, wantErr: true},
		"a prefix of another length":   {query: map[string][]string{"render": {"9a9a9a"}}, wantErr: true},
		"sha256: with too few digits":  {query: map[string][]string{"render": {"sha256:9a9a9a9a9a"}}, wantErr: true},
		"empty: not a ref":             {query: map[string][]string{"render": {""}}, wantErr: true},
		"a malformed one with a force": {query: map[string][]string{"render": {"latest"}, "force": {"true"}}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var opts SyncOptions
			values := url.Values(tc.query)
			err := convertURLValuesToSyncOptions(&values, &opts)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && opts != tc.want {
				t.Errorf("options = %+v, want %+v", opts, tc.want)
			}
		})
	}
}
