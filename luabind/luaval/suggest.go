package luaval

import (
	"fmt"
	"sort"
	"strings"
)

// UnknownKey explains an unknown key: the nearest valid key when it is
// close enough to be a typo, otherwise the whole list, so the user never
// has to open the docs to find the spelling.
func UnknownKey(key string, valid []string) string {
	if o, ok := keyOwners[key]; ok {
		return fmt.Sprintf("unknown key (%s is an option of %s only: %s)", key, o.call, o.why)
	}
	if other, ok := apiNames[key]; ok && Contains(valid, other) {
		return fmt.Sprintf("unknown key (this API calls it %s)", other)
	}
	if best, ok := Nearest(key, valid); ok {
		return fmt.Sprintf("unknown key (did you mean %s?)", best)
	}
	sorted := append([]string(nil), valid...)
	sort.Strings(sorted)
	return fmt.Sprintf("unknown key (valid keys: %s)", strings.Join(sorted, ", "))
}

// apiNames are keys one API names differently from another: the valid
// key a request table of that API takes instead.
var apiNames = map[string]string{"max_tokens": "max_output_tokens", "prompt": "input", "messages": "input",
	"system": "instructions", "instructions": "system"}

// keyOwners are keys that only one call takes, where a user may well
// look for them elsewhere: the error names the call rather than guessing a
// typo.
var keyOwners = map[string]struct{ call, why string }{
	"prefix_hit": {"llm.synthetic", "it builds each prompt for a target prefix-cache hit rate, where a pool's or a trace's prompts are the data's own"},
}

// Nearest returns the valid key with the smallest edit distance to key,
// if that distance is small relative to the key's length.
func Nearest(key string, valid []string) (string, bool) {
	best, bestDist := "", -1
	for _, v := range valid {
		d := editDistance(strings.ToLower(key), v)
		if bestDist < 0 || d < bestDist || (d == bestDist && v < best) {
			best, bestDist = v, d
		}
	}
	limit := max(2, len([]rune(key))/3)
	return best, bestDist >= 0 && bestDist <= limit
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
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
