// Package names suggests known names close to a misspelled one, for the
// "unknown name (closest: ...)" errors of dtype, scale and tcast.
package names

import (
	"sort"
	"strings"
)

// maxLen bounds the strings EditDistance compares; longer ones are "far".
const maxLen = 64

// EditDistance returns the optimal-string-alignment distance between a and b
// (insertions, deletions, substitutions and swaps of two adjacent bytes each
// count one, so "mxpf4" is one edit from "mxfp4"), or a very large number when
// either is longer than 64 bytes.
func EditDistance(a, b string) int {
	if len(a) > maxLen || len(b) > maxLen {
		return 1 << 30
	}
	// d[i][j] is the distance between a[:i] and b[:j]; three rows suffice.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Closest returns up to n distinct names of known nearest to key (compared
// case-insensitively), nearest first, keeping only those within
// max(2, len(key)/3) edits.
func Closest(key string, known []string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	key = strings.ToLower(key)
	limit := max(2, len(key)/3)
	var cs []cand
	seen := map[string]bool{}
	for _, k := range known {
		if seen[k] {
			continue
		}
		seen[k] = true
		if d := EditDistance(key, strings.ToLower(k)); d <= limit {
			cs = append(cs, cand{k, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	out := make([]string, 0, min(n, len(cs)))
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// ClosestSpelling is Closest for names whose separators are often left out
// or changed ("q4km" for "Q4_K_M"): it compares the names without '_',
// '-' and '.' (case-insensitively), keeping those within max(2, len/3) edits
// of the key so compared, nearest first, ties broken by the distance of the
// names as written.
func ClosestSpelling(key string, known []string, n int) []string {
	type cand struct {
		name    string
		d, full int
	}
	strip := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '_' || r == '-' || r == '.' {
				return -1
			}
			return r
		}, strings.ToLower(s))
	}
	k := strip(key)
	limit := max(2, len(k)/3)
	var cs []cand
	seen := map[string]bool{}
	for _, name := range known {
		if seen[name] {
			continue
		}
		seen[name] = true
		if d := EditDistance(k, strip(name)); d <= limit {
			cs = append(cs, cand{name, d, EditDistance(strings.ToLower(key), strings.ToLower(name))})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].full < cs[j].full
	})
	out := make([]string, 0, min(n, len(cs)))
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}
