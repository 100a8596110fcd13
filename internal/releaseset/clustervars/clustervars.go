// Package clustervars is the substitution that spec.clusterOverrides of a ReleaseSet
// makes in its string values: the one grammar that the ReleaseSet controller expands
// and the API server validates.
//
// The references, in a string value, anywhere in it:
//
//	$(cluster.name)              the Cluster's name
//	$(cluster.labels['<key>'])   the value of the Cluster's label <key> ("" when it has none);
//	                             <key> is a label key (an optional DNS-subdomain prefix and "/",
//	                             then a name), in single quotes
//	$$(                          a literal "$(": the text after it is not a reference
//
// Anything else that begins with "$(" is malformed: Expand leaves it as written (with
// the rest of the string expanded), and Problems reports it, so that the API server
// rejects it before the controller sees it.
package clustervars

import (
	"fmt"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

const (
	nameRef     = "$(cluster.name)"
	labelPrefix = "$(cluster.labels['"
	labelSuffix = "'])"
	escape      = "$$("
)

// Allowed says, for people, which references there are.
const Allowed = `$(cluster.name), $(cluster.labels['<label key>']), or $$( for a literal "$("`

// Expand is s with every reference replaced for the Cluster name of labels labels;
// malformed references are left as written.
func Expand(s, name string, labels map[string]string) string {
	if !strings.Contains(s, "$(") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, escape):
			b.WriteString("$(")
			i += len(escape)
			continue
		case strings.HasPrefix(rest, nameRef):
			b.WriteString(name)
			i += len(nameRef)
			continue
		}
		if key, n, ok := labelRef(rest); ok && len(utilvalidation.IsQualifiedName(key)) == 0 {
			b.WriteString(labels[key])
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// Problems describes each malformed reference of s, for people: what it is and which
// forms are allowed. None: s is fine.
func Problems(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, escape):
			i += len(escape)
			continue
		case strings.HasPrefix(rest, nameRef):
			i += len(nameRef)
			continue
		case !strings.HasPrefix(rest, "$("):
			i++
			continue
		}
		if key, n, ok := labelRef(rest); ok {
			if msgs := utilvalidation.IsQualifiedName(key); len(msgs) > 0 {
				out = append(out, fmt.Sprintf("%s: %q is not a label key: %s", rest[:n], key, strings.Join(msgs, "; ")))
			}
			i += n
			continue
		}
		out = append(out, fmt.Sprintf("%s is not a reference the set replaces; use %s", quoteRef(rest), Allowed))
		i += len("$(")
	}
	return out
}

// labelRef reads a $(cluster.labels['<key>']) at the start of s: the key and the
// reference's length.
func labelRef(s string) (key string, n int, ok bool) {
	rest, found := strings.CutPrefix(s, labelPrefix)
	if !found {
		return "", 0, false
	}
	end := strings.Index(rest, labelSuffix)
	if end < 0 || strings.ContainsAny(rest[:end], "'") {
		return "", 0, false
	}
	return rest[:end], len(labelPrefix) + end + len(labelSuffix), true
}

// quoteRef is the malformed reference at the start of s as a message shows it: up to
// its ")", quoted; at most 60 bytes of it.
func quoteRef(s string) string {
	const most = 60
	end := strings.IndexByte(s, ')')
	switch {
	case end < 0 && len(s) <= most:
		return fmt.Sprintf("%q (without its \")\")", s)
	case end < 0 || end >= most:
		return fmt.Sprintf("%q…", s[:min(len(s), most)])
	}
	return fmt.Sprintf("%q", s[:end+1])
}
