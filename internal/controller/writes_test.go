package controller

import (
	"testing"

	"kumodo.io/convoy/internal/policy"
)

func TestWriteLogPredates(t *testing.T) {
	web := policy.Key{Namespace: "team", Name: "web"}
	api := policy.Key{Namespace: "team", Name: "api"}
	cases := []struct {
		name    string
		written string // the resourceVersion of the last write to web; "" for none
		key     policy.Key
		rv      string
		want    bool
	}{
		{name: "no write yet", key: web, rv: "10"},
		{name: "older than the last write", written: "12", key: web, rv: "11", want: true},
		{name: "much older, more digits in the write", written: "100", key: web, rv: "99", want: true},
		{name: "the last write itself", written: "12", key: web, rv: "12"},
		{name: "newer than the last write", written: "12", key: web, rv: "13"},
		{name: "another Release", written: "12", key: api, rv: "11"},
		{name: "a resourceVersion that does not compare", written: "12", key: web, rv: "abc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := &writeLog{}
			w.record(web, c.written)
			if got := w.predates(c.key, c.rv); got != c.want {
				t.Errorf("predates(%v, %q) after a write at %q = %v, want %v", c.key, c.rv, c.written, got, c.want)
			}
		})
	}
}

func TestWriteLogForget(t *testing.T) {
	web := policy.Key{Namespace: "team", Name: "web"}
	w := &writeLog{}
	w.record(web, "12")
	w.forget(web)
	if w.predates(web, "11") {
		t.Error("a forgotten Release still predates its last write")
	}
}
