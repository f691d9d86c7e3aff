// Package spans keeps the byte ranges of a file region that writers have
// filled, so that a writer taking pieces in any order (positioned writes
// from several goroutines) can refuse a piece that overlaps another and
// check at the end that the region is whole.
package spans

import (
	"fmt"
	"sort"
)

// Set is a set of disjoint half-open ranges [lo, hi) of int64, merged where
// they touch. The zero value is empty and ready to use. A Set is not safe for
// concurrent use.
type Set struct {
	r   []span // sorted by lo, disjoint, none touching
	len int64
}

type span struct{ lo, hi int64 }

// OverlapError is the error of Add for a range that overlaps one already in
// the set.
type OverlapError struct {
	Lo, Hi int64 // the range added
	At     int64 // the first byte that was already in the set
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("bytes %d to %d overlap bytes written before, from byte %d", e.Lo, e.Hi, e.At)
}

// Add puts [lo, hi) into the set. An empty range (lo ≥ hi) changes nothing.
// A range that overlaps the set is refused with an *OverlapError and leaves
// the set as it was.
func (s *Set) Add(lo, hi int64) error {
	if lo >= hi {
		return nil
	}
	// i is the first span that ends at or after lo: the only ones that can
	// touch or overlap [lo, hi) are i and i+1.
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].hi >= lo })
	if i < len(s.r) && s.r[i].lo < hi && s.r[i].hi > lo {
		return &OverlapError{Lo: lo, Hi: hi, At: max(lo, s.r[i].lo)}
	}
	if i+1 < len(s.r) && s.r[i+1].lo < hi {
		return &OverlapError{Lo: lo, Hi: hi, At: s.r[i+1].lo}
	}
	s.len += hi - lo
	joinLeft := i < len(s.r) && s.r[i].hi == lo
	next := i
	if joinLeft {
		next = i + 1
	}
	joinRight := next < len(s.r) && s.r[next].lo == hi
	switch {
	case joinLeft && joinRight:
		s.r[i].hi = s.r[next].hi
		s.r = append(s.r[:next], s.r[next+1:]...)
	case joinLeft:
		s.r[i].hi = hi
	case joinRight:
		s.r[next].lo = lo
	default:
		s.r = append(s.r, span{})
		copy(s.r[i+1:], s.r[i:])
		s.r[i] = span{lo, hi}
	}
	return nil
}

// Len returns the number of values in the set.
func (s *Set) Len() int64 { return s.len }

// Runs returns the number of disjoint ranges the set holds.
func (s *Set) Runs() int { return len(s.r) }

// Whole reports whether the set is exactly [0, n).
func (s *Set) Whole(n int64) bool {
	if n <= 0 {
		return len(s.r) == 0
	}
	return len(s.r) == 1 && s.r[0].lo == 0 && s.r[0].hi == n
}

// Hole returns the first value of [0, n) that is not in the set, and false
// when there is none.
func (s *Set) Hole(n int64) (int64, bool) {
	at := int64(0)
	for _, r := range s.r {
		if r.lo > at {
			break
		}
		at = max(at, r.hi)
	}
	return at, at < n
}
