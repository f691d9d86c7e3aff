package sparsity

import (
	"fmt"
	"strconv"
	"strings"
)

// Pattern is N:M structured sparsity: N elements kept out of every group of M
// consecutive elements along an axis. N counts kept (dense) values, as in
// NVIDIA's "2:4" and TensorCast's n<N>m<M>, not pruned ones as in the Wanda and
// SparseGPT code. Valid patterns have 1 ≤ N < M ≤ 16 with M a power of two.
type Pattern struct {
	N int // kept per group
	M int // group size
}

// Common patterns.
var (
	P24 = Pattern{2, 4} // 2:4, the semi-structured sparsity of sparse tensor cores
	P12 = Pattern{1, 2} // 1:2, what float32 2:4 kernels use
	P48 = Pattern{4, 8}
)

// ParsePattern reads "N:M" (as "2:4") or TensorCast's "nNmM" (as "n2m4") and
// checks it (a *PatternError otherwise).
func ParsePattern(s string) (Pattern, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	var ns, ms string
	var ok bool
	if ns, ms, ok = strings.Cut(t, ":"); !ok {
		if rest, found := strings.CutPrefix(t, "n"); found {
			ns, ms, ok = strings.Cut(rest, "m")
		}
	}
	if !ok {
		return Pattern{}, &PatternError{Pattern: s, Reason: `want "N:M" (as "2:4") or "nNmM" (as "n2m4")`}
	}
	n, err1 := strconv.Atoi(ns)
	m, err2 := strconv.Atoi(ms)
	if err1 != nil || err2 != nil || len(ns) > 2 || len(ms) > 2 {
		return Pattern{}, &PatternError{Pattern: s, Reason: "N and M must be small decimal integers"}
	}
	p := Pattern{n, m}
	if err := p.check(s); err != nil {
		return Pattern{}, err
	}
	return p, nil
}

// String returns "N:M".
func (p Pattern) String() string { return fmt.Sprintf("%d:%d", p.N, p.M) }

// Validate returns a *PatternError unless 1 ≤ N < M ≤ 16 and M is a power of
// two.
func (p Pattern) Validate() error { return p.check(p.String()) }

func (p Pattern) check(as string) error {
	switch {
	case p.M < 2 || p.M > 16 || p.M&(p.M-1) != 0:
		return &PatternError{Pattern: as, Reason: fmt.Sprintf("M=%d is not 2, 4, 8 or 16", p.M)}
	case p.N < 1 || p.N >= p.M:
		return &PatternError{Pattern: as, Reason: fmt.Sprintf("N=%d is not in 1..%d (1 ≤ N < M)", p.N, p.M-1)}
	}
	return nil
}

// Density returns N/M, the fraction of elements kept.
func (p Pattern) Density() float64 { return float64(p.N) / float64(p.M) }

// IndexBits returns the bits of one in-group index, log2(M): 2 for 2:4.
func (p Pattern) IndexBits() int {
	b := 0
	for 1<<b < p.M {
		b++
	}
	return b
}
