package ggufmix

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// TargetTypes are the types a size target (Fit) chooses among: the block
// types of llama-quantize's mixes from IQ1_S (1.56 bits per weight) to
// Q8_0 (8.5), with IQ4_NL and Q5_0 for rows that are not whole super-blocks
// of 256.
var TargetTypes = []gguf.Type{
	gguf.TypeIQ1_S, gguf.TypeIQ1_M, gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS, gguf.TypeIQ2_S,
	gguf.TypeQ2_K, gguf.TypeIQ3_XXS, gguf.TypeIQ3_S, gguf.TypeQ3_K, gguf.TypeIQ4_XS,
	gguf.TypeIQ4_NL, gguf.TypeQ4_K, gguf.TypeQ5_0, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ8_0,
}

// Tunable reports whether a size target chooses d's type: d is a tensor
// of the blocks that the mix quantizes, and no option asked for its type.
// The token embedding and the output head keep the mix's types: by the
// model's output, a target that chose theirs too did worse (docs/GGUF.md,
// "Size targets").
func (d Decision) Tunable() bool {
	return d.Quantize && !d.Asked && d.Category != Output && d.Category != TokenEmbd
}

// Candidates returns the TargetTypes a size target may give d, of row
// length rowLen: those whose block divides the row, and, when the tensor
// has no importance vector (imp false), none that llama-quantize
// quantizes only with one (Decision.NeedsImatrix).
func Candidates(d Decision, rowLen int, imp bool) []gguf.Type {
	var out []gguf.Type
	for _, t := range TargetTypes {
		if misfit(t, rowLen) == "" && (imp || !needsImatrix(Mix{}, d.Category, t)) {
			out = append(out, t)
		}
	}
	return out
}

// A Candidate is one type a size target may give a tensor, with what it
// costs there.
type Candidate struct {
	Type gguf.Type
	// Bytes is the tensor's size in the file in that type.
	Bytes int64
	// Err is its error in that type, in units common to every tensor:
	// convert's is the noise-to-signal ratio of the tensor's outputs
	// (Σ importance·error² over Σ importance·value²), as the noises of the
	// layers a signal goes through add up.
	Err float64
}

// ErrTargetTooSmall is matched by the error of Fit for a budget below
// the smallest candidates' total.
var ErrTargetTooSmall = errors.New("size target too small")

// TargetError reports a size target that the smallest candidate types do
// not meet.
type TargetError struct {
	// Budget is the bytes the target leaves for the tensors it chooses
	// types for, and Least what their smallest candidates take.
	Budget, Least int64
}

// Error returns a message such as "size target too small: the tensors it
// chooses types for take 1200 bytes at least, and it leaves them 1000".
func (e *TargetError) Error() string {
	return fmt.Sprintf("%v: the tensors it chooses types for take %d bytes at least, and it leaves them %d",
		ErrTargetTooSmall, e.Least, e.Budget)
}

// Unwrap returns ErrTargetTooSmall.
func (e *TargetError) Unwrap() error { return ErrTargetTooSmall }

// Fit gives each decision ds[i] that has candidates (cands[i] not empty)
// one of their types, so that their Bytes sum to at most budget with a
// small sum of Err. It starts every tensor at its smallest candidate and
// takes, while the budget allows, the upgrade of most error saved per
// byte (along each tensor's lower convex hull of error against bytes).
// Until the first upgrade that does not fit, that is the Lagrangian
// solution: the least total error of any choice within the bytes its
// upgrades sum to. Past it, smaller upgrades that still fit are taken,
// which only lower the error. An Err that is not a number counts as
// +Inf. A budget below the smallest candidates' total is a *TargetError.
func Fit(ds []Decision, cands [][]Candidate, budget int64) error {
	hulls := make([][]Candidate, len(ds))
	var total int64
	for i, c := range cands {
		if len(c) > 0 {
			hulls[i] = lowerHull(c)
			total += hulls[i][0].Bytes
		}
	}
	if total > budget {
		return &TargetError{Budget: budget, Least: total}
	}
	at := make([]int, len(ds))
	var q upgrades
	for i, h := range hulls {
		if len(h) > 1 {
			q = append(q, upgrade{i, slope(h[0], h[1])})
		}
	}
	heap.Init(&q)
	for q.Len() > 0 {
		u := heap.Pop(&q).(upgrade)
		h, k := hulls[u.i], at[u.i]
		if more := h[k+1].Bytes - h[k].Bytes; total+more <= budget {
			total += more
			at[u.i] = k + 1
			if k+2 < len(h) {
				heap.Push(&q, upgrade{u.i, slope(h[k+1], h[k+2])})
			}
		}
	}
	for i, h := range hulls {
		if h != nil {
			ds[i].retype(h[at[i]].Type, len(cands[i]))
		}
	}
	return nil
}

// retype gives d the type a size target chose for it among n candidates.
func (d *Decision) retype(t gguf.Type, n int) {
	d.Type, d.Fallback = t, false
	d.Reason = fmt.Sprintf("size target: %v, of %d candidate types", t, n)
	d.NeedsImatrix = needsImatrix(Mix{}, d.Category, t)
}

// lowerHull returns the candidates of c on the lower convex hull of error
// against bytes, by increasing bytes and decreasing error: those that a
// Lagrangian choice (least Err + λ·Bytes for some λ ≥ 0) can take.
func lowerHull(c []Candidate) []Candidate {
	s := slices.Clone(c)
	for i := range s {
		if s[i].Err != s[i].Err {
			s[i].Err = math.Inf(1)
		}
	}
	slices.SortStableFunc(s, func(a, b Candidate) int {
		if a.Bytes != b.Bytes {
			return int(min(max(a.Bytes-b.Bytes, -1), 1))
		}
		switch {
		case a.Err < b.Err:
			return -1
		case a.Err > b.Err:
			return 1
		}
		return 0
	})
	var h []Candidate
	for _, p := range s {
		if len(h) > 0 && p.Err >= h[len(h)-1].Err {
			continue // no better than a smaller one
		}
		for len(h) >= 2 && slope(h[len(h)-2], h[len(h)-1]) <= slope(h[len(h)-1], p) {
			h = h[:len(h)-1] // above the chord to p
		}
		h = append(h, p)
	}
	return h
}

// slope is the error saved per byte from a to b.
func slope(a, b Candidate) float64 { return (a.Err - b.Err) / float64(b.Bytes-a.Bytes) }

// upgrade is tensor i's next step along its hull, saving slope per byte.
type upgrade struct {
	i     int
	slope float64
}

// upgrades is a max-heap of upgrades by slope, then by tensor index.
type upgrades []upgrade

func (q upgrades) Len() int { return len(q) }
func (q upgrades) Less(a, b int) bool {
	if q[a].slope != q[b].slope {
		return q[a].slope > q[b].slope
	}
	return q[a].i < q[b].i
}
func (q upgrades) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *upgrades) Push(x any)   { *q = append(*q, x.(upgrade)) }
func (q *upgrades) Pop() any {
	old := *q
	u := old[len(old)-1]
	*q = old[:len(old)-1]
	return u
}
