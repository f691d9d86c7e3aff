// Package golden compares a test's output with its golden file, line by
// line, for the tests that keep digests or listings under testdata/ or
// api/.
package golden

import "strings"

// Diff lists the lines only in want, each after "- ", and the lines only
// in got, after "+ ", in their orders; "" when both hold the same lines.
func Diff(want, got string) string {
	w, g := lineSet(want), lineSet(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// lineSet returns the lines of s.
func lineSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		m[l] = true
	}
	return m
}
