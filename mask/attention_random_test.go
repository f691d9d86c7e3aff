package mask

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Random attention masks for the property tests and benchmarks.

// randomOptions shapes the masks random draws. The zero value draws two
// rows of 16 tokens, up to three packed sequences each, with random left and
// right padding.
type randomOptions struct {
	// Batch is the number of rows (0: 2).
	Batch int
	// Len is the number of tokens per row, queries and keys alike (0: 16).
	Len int
	// MaxSegments is the most sequences packed into one row (0: 3).
	MaxSegments int
	// NoPadding draws rows without padding.
	NoPadding bool
}

// random returns a self-attention mask in segment-ID form drawn from a PCG
// generator seeded with seed: each row holds some left padding, one to
// MaxSegments contiguous sequences numbered 0, 1, ... and some right padding
// (a row may be all padding). The same seed and options give the same mask.
func random(seed uint64, o randomOptions) (*Attention, error) {
	if o.Batch == 0 {
		o.Batch = 2
	}
	if o.Len == 0 {
		o.Len = 16
	}
	if o.MaxSegments == 0 {
		o.MaxSegments = 3
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Batch", o.Batch}, {"Len", o.Len}, {"MaxSegments", o.MaxSegments}} {
		if f.v < 0 {
			return nil, &InputError{Op: "random", Arg: f.name, Index: -1, Value: int64(f.v), Reason: "negative"}
		}
	}
	if o.Len > math.MaxInt32 || o.Batch > maxLen/max(o.Len, 1) {
		return nil, &InputError{Op: "random", Arg: "Len", Index: -1, Value: int64(o.Len), Reason: "too many tokens"}
	}
	r := rand.New(rand.NewPCG(seed, 0x6174746e))
	ids := make([]int32, o.Batch*o.Len)
	for b := range o.Batch {
		row := ids[b*o.Len : (b+1)*o.Len]
		for i := range row {
			row[i] = -1
		}
		lo, hi := 0, o.Len
		if !o.NoPadding {
			lo = r.IntN(o.Len/4 + 1)
			hi -= r.IntN(o.Len/4 + 1)
			hi = max(hi, lo)
		}
		n := hi - lo
		if n == 0 || o.MaxSegments == 0 {
			continue
		}
		segs := 1 + r.IntN(min(o.MaxSegments, n))
		// segs-1 distinct cut points in (lo, hi).
		cuts := r.Perm(n - 1)[:segs-1]
		for i := range cuts {
			cuts[i] += lo + 1
		}
		slices.Sort(cuts)
		cuts = append(append([]int{lo}, cuts...), hi)
		for s := 0; s+1 < len(cuts); s++ {
			for i := cuts[s]; i < cuts[s+1]; i++ {
				row[i] = int32(s)
			}
		}
	}
	return FromSegmentIDs(o.Batch, ids)
}
