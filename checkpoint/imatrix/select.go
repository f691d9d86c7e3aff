package imatrix

import "strings"

// Select returns a copy of m that keeps the entries llama-quantize's
// --include-weights and --exclude-weights keep: an entry whose name
// contains one of exclude is dropped, and when include is not empty only
// the entries whose names contain one of include stay. Both match plain
// substrings, not patterns. The copy shares the entries' values with m;
// its Metadata counts the entries kept, as llama-quantize's does.
func (m *Imatrix) Select(include, exclude []string) *Imatrix {
	out := *m
	out.Entries = nil
	out.idx = map[string]int{}
	for _, e := range m.Entries {
		if containsAny(e.Name, exclude) || (len(include) > 0 && !containsAny(e.Name, include)) {
			continue
		}
		out.idx[e.Name] = len(out.Entries)
		out.Entries = append(out.Entries, e)
	}
	return &out
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
