package registry

import "strings"

// DidYouMean is " (did you mean K?)" for the name K of known nearest to
// name, case aside, at most within edits away; "" when none is that near.
// How near is near enough is the caller's: a suite's keys are short,
// an engine's setting names long.
func DidYouMean(name string, known []string, within int) string {
	best, dist := "", within+1
	for _, k := range known {
		if d := EditDistance(strings.ToLower(name), strings.ToLower(k)); d < dist {
			best, dist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// EditDistance is the Levenshtein distance between a and b, in bytes: the
// nearness every "did you mean" of dbio judges names by.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
