package cli

import "sort"

// maxSuggestionDistance is the largest edit distance of a "did you mean" suggestion.
const maxSuggestionDistance = 2

// DidYouMean returns the candidates within edit distance 2 of name (a prefix match
// also counts), closest first, then by name; at most three.
func DidYouMean(name string, candidates []string) []string {
	type scored struct {
		name string
		d    int
	}
	var found []scored
	for _, c := range candidates {
		if c == name {
			continue
		}
		d := Levenshtein(name, c)
		if d <= maxSuggestionDistance || (len(name) >= 3 && len(c) > len(name) && c[:len(name)] == name) {
			found = append(found, scored{c, d})
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].d != found[j].d {
			return found[i].d < found[j].d
		}
		return found[i].name < found[j].name
	})
	out := []string{}
	for i := 0; i < len(found) && i < 3; i++ {
		out = append(out, found[i].name)
	}
	return out
}

// Levenshtein is the edit distance between a and b (insertions, deletions and
// substitutions of runes).
func Levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
