package benchenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// HTTPGet is the body of GET url, within 30 s; "" when it does not answer 200 (why is
// printed on stderr).
func HTTPGet(ctx context.Context, c *http.Client, url string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := Fetch(ctx, c, url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return ""
	}
	return b
}

// Fetch is the body of GET url, or an error when it does not answer 200.
func Fetch(ctx context.Context, c *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err // names the method and the URL
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %.200s", url, resp.Status, b)
	}
	return string(b), nil
}

// Sample is one line of a Prometheus text exposition.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Samples returns the samples of metric name.
func Samples(text, name string) []Sample {
	var out []Sample
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		s := Sample{Labels: map[string]string{}}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			parseLabels(rest[1:end], s.Labels)
			rest = rest[end+1:]
		}
		fs := strings.Fields(rest)
		if len(fs) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fs[0], 64)
		if err != nil {
			continue
		}
		s.Value = v
		out = append(out, s)
	}
	return out
}

func parseLabels(s string, into map[string]string) {
	for len(s) > 0 {
		eq := strings.Index(s, `="`)
		if eq < 0 {
			return
		}
		key := strings.TrimLeft(s[:eq], ", ")
		s = s[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				val.WriteByte(s[i])
				continue
			}
			if s[i] == '"' {
				break
			}
			val.WriteByte(s[i])
		}
		into[key] = val.String()
		if i >= len(s) {
			return
		}
		s = s[i+1:]
	}
}

// Counts groups the samples of name by the values of keys ("verb resource ...").
func Counts(text, name string, keys ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range Samples(text, name) {
		var parts []string
		for _, k := range keys {
			if v := s.Labels[k]; v != "" {
				parts = append(parts, v)
			}
		}
		out[strings.Join(parts, " ")] += s.Value
	}
	return out
}

// Delta is after − before, without the zero entries.
func Delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, a := range after {
		if v := a - before[k]; v != 0 {
			d[k] = v
		}
	}
	return d
}

// Mean is the count and sum of a histogram between two snapshots.
type Mean struct {
	Count, Sum float64
}

// HistMeans is the count and sum of histogram name between the texts a and b, by keys.
func HistMeans(a, b, name string, keys ...string) map[string]Mean {
	sa, sb := Counts(a, name+"_sum", keys...), Counts(b, name+"_sum", keys...)
	ca, cb := Counts(a, name+"_count", keys...), Counts(b, name+"_count", keys...)
	out := map[string]Mean{}
	for k := range cb {
		if c := cb[k] - ca[k]; c > 0 {
			out[k] = Mean{Count: c, Sum: sb[k] - sa[k]}
		}
	}
	return out
}

// Total is the sum of m.
func Total(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

// SumWhere totals the entries whose key satisfies pred.
func SumWhere(m map[string]float64, pred func(key string) bool) float64 {
	var t float64
	for k, v := range m {
		if pred(k) {
			t += v
		}
	}
	return t
}

// Filter is the entries of m whose key satisfies pred.
func Filter(m map[string]float64, pred func(string) bool) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if pred(k) {
			out[k] = v
		}
	}
	return out
}

var writeVerbs = []string{"POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY", "CREATE", "UPDATE"}

// IsWrite says whether a key that starts with a verb or method is a write.
func IsWrite(key string) bool {
	verb, _, _ := strings.Cut(key, " ")
	return slices.Contains(writeVerbs, strings.ToUpper(verb))
}

// Is409 says whether a key ends with the code 409.
func Is409(key string) bool { return strings.HasSuffix(key, " 409") }

// KV is one entry of a map.
type KV struct {
	K string
	V float64
}

// Top is the n largest entries of m.
func Top(m map[string]float64, n int) []KV {
	var s []KV
	for k, v := range m {
		s = append(s, KV{k, v})
	}
	sort.Slice(s, func(i, j int) bool {
		if s[i].V != s[j].V {
			return s[i].V > s[j].V
		}
		return s[i].K < s[j].K
	})
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// FmtMap is the n largest entries of m as "key: value, …".
func FmtMap(m map[string]float64, n int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, e := range Top(m, n) {
		parts = append(parts, fmt.Sprintf("%s: %.0f", e.K, e.V))
	}
	if len(m) > n {
		parts = append(parts, "…")
	}
	return strings.Join(parts, ", ")
}

// FmtCPU is CPU seconds by process, largest first.
func FmtCPU(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
