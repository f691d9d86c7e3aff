package mask

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refRule is a rule as the reference below evaluates it, one pair at a time,
// straight from the formulas in the documentation.
type refRule struct {
	kind        string // "causal", "window", "chunk", "types"
	off         []int  // one per batch row
	left, right int
	size        int
	qt, kt      []int32
	union       bool
}

// refAllowed decides pair (b, i, j) from segment IDs and rules without any
// bit manipulation: the structure, then each rule in order, then padding.
func refAllowed(qseg, kseg []int32, nq, nk int, rules []refRule, b, i, j int) bool {
	s, u := qseg[b*nq+i], kseg[b*nk+j]
	origin := 0
	for t := range nk {
		if kseg[b*nk+t] >= 0 {
			origin = t
			break
		}
	}
	return refChain(s >= 0 && s == u, rules, b, i, j, nq, nk, origin) && s >= 0 && u >= 0
}

// refChain applies the rules in order to the structure's verdict v.
func refChain(v bool, rules []refRule, b, i, j, nq, nk, origin int) bool {
	for _, r := range rules {
		c := i + r.off[b]
		var p bool
		switch r.kind {
		case "causal":
			p = j <= c
		case "window":
			p = (r.left < 0 || j >= c-r.left) && (r.right < 0 || j <= c+r.right)
		case "chunk":
			p = math.Floor(float64(c-origin)/float64(r.size)) == math.Floor(float64(j-origin)/float64(r.size))
		case "types":
			p = r.qt[b*nq+i] >= 0 && r.qt[b*nq+i] == r.kt[b*nk+j]
		}
		if r.union {
			v = v || p
		} else {
			v = v && p
		}
	}
	return v
}

// randomRules draws up to four rules and applies them to a.
func randomRules(t *testing.T, r *rand.Rand, a *Attention) (*Attention, []refRule) {
	B, _, nq, nk := a.Shape()
	var rules []refRule
	for range r.IntN(5) {
		off := make([]int, B)
		for b := range off {
			off[b] = r.IntN(2*nk+1) - nk
		}
		var err error
		var rr refRule
		switch r.IntN(4) {
		case 0:
			rr = refRule{kind: "causal", off: off}
			a, err = a.Causal(off)
		case 1:
			rr = refRule{kind: "window", off: off, left: r.IntN(nk+2) - 1, right: r.IntN(nk+2) - 1}
			a, err = a.SlidingWindow(rr.left, rr.right, off)
		case 2:
			rr = refRule{kind: "chunk", off: off, size: 1 + r.IntN(nk+1)}
			a, err = a.Chunked(rr.size, off)
		case 3:
			rr = refRule{kind: "types", qt: make([]int32, B*nq), kt: make([]int32, B*nk), union: r.IntN(2) == 0, off: make([]int, B)}
			for i := range rr.qt {
				rr.qt[i] = int32(r.IntN(4) - 1)
			}
			for i := range rr.kt {
				rr.kt[i] = int32(r.IntN(4) - 1)
			}
			combine := Intersect
			if rr.union {
				combine = Union
			}
			a, err = a.TokenTypes(rr.qt, rr.kt, combine)
		}
		require.NoError(t, err)
		rules = append(rules, rr)
	}
	return a, rules
}

// randomQKSegments draws query and key segment IDs in [-1, 3) for B rows.
func randomQKSegments(r *rand.Rand, B, nq, nk int) ([]int32, []int32) {
	q, k := make([]int32, B*nq), make([]int32, B*nk)
	for i := range q {
		q[i] = int32(r.IntN(4) - 1)
	}
	for i := range k {
		k[i] = int32(r.IntN(4) - 1)
	}
	return q, k
}

// TestRulesAgainstReference compares the pairwise mask of random structures
// under random rule chains with the pair-by-pair reference.
func TestRulesAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		B, nq, nk := 1+r.IntN(3), r.IntN(12), r.IntN(12)
		qseg, kseg := randomQKSegments(r, B, nq, nk)
		a := must(t)(FromQKSegmentIDs(B, qseg, kseg))
		if n%3 == 0 { // also through KeyLengths
			lens := make([]int, B)
			for b := range lens {
				lens[b] = r.IntN(nk + 1)
				for j := lens[b]; j < nk; j++ {
					kseg[b*nk+j] = -1
				}
			}
			a = must(t)(a.KeyLengths(lens))
		}
		a, rules := randomRules(t, r, a)
		m, err := a.Pairwise(0)
		require.NoError(t, err)
		require.Equal(t, []int{B, nq, nk}, m.Shape())
		for b := range B {
			for i := range nq {
				for j := range nk {
					want := refAllowed(qseg, kseg, nq, nk, rules, b, i, j)
					if m.At(b, i, j) != want {
						t.Fatalf("case %d (%v): [%d,%d,%d] = %v, want %v", n, a, b, i, j, !want, want)
					}
				}
			}
		}
	}
}

// TestPairwiseRulesAgainstReference does the same over random per-head
// pairwise structures: the reference applies the rules to each head's bit.
func TestPairwiseRulesAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 100 {
		B, H, nq, nk := 1+r.IntN(2), 1+r.IntN(3), r.IntN(10), 1+r.IntN(70)
		keep := make([]bool, B*H*nq*nk)
		for i := range keep {
			keep[i] = r.IntN(3) > 0
		}
		m := mustM(t)(FromBools([]int{B, H, nq, nk}, keep))
		a := must(t)(FromPairwise(m))
		a, rules := randomRules(t, r, a)
		got := mustM(t)(a.Pairwise(0))
		for b := range B {
			for h := range H {
				for i := range nq {
					for j := range nk {
						want := refChain(m.At(b, h, i, j), rules, b, i, j, nq, nk, 0)
						if got.At(b, h, i, j) != want {
							t.Fatalf("case %d (%v): [%d,%d,%d,%d] = %v, want %v", n, a, b, h, i, j, !want, want)
						}
					}
				}
			}
		}
	}
}

func mustM(t *testing.T) func(*Mask, error) *Mask {
	return func(m *Mask, err error) *Mask {
		t.Helper()
		require.NoError(t, err)
		return m
	}
}

func mustI32(t *testing.T) func([]int32, []int32, error) ([]int32, []int32) {
	return func(q, k []int32, err error) ([]int32, []int32) {
		t.Helper()
		require.NoError(t, err)
		return q, k
	}
}

func mustInts(t *testing.T) func([]int, []int, error) ([]int, []int) {
	return func(q, k []int, err error) ([]int, []int) {
		t.Helper()
		require.NoError(t, err)
		return q, k
	}
}

// TestRuleProperties checks identities between rules on random structures.
func TestRuleProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 200 {
		a := must(t)(random(uint64(n), randomOptions{Batch: 1 + r.IntN(3), Len: 1 + r.IntN(40), MaxSegments: 1 + r.IntN(4)}))
		B, _, _, nk := a.Shape()
		off := make([]int, B)
		for b := range off {
			off[b] = r.IntN(9) - 4
		}
		w := r.IntN(nk + 1)
		pair := func(x *Attention, err error) *Mask {
			t.Helper()
			require.NoError(t, err)
			return mustM(t)(x.Pairwise(0))
		}
		causal := must(t)(a.Causal(off))
		// causal ∧ window(w, unbounded right) = window(w, 0).
		assert.True(t, pair(causal.SlidingWindow(w, -1, off)).Equal(pair(a.SlidingWindow(w, 0, off))), "case %d", n)
		// Order does not matter between intersections.
		assert.True(t, pair(must(t)(a.SlidingWindow(w, 2, off)).Causal(off)).Equal(pair(causal.SlidingWindow(w, 2, off))))
		// window(-1, 0) is causal; window(-1, -1) changes nothing.
		assert.True(t, pair(a.SlidingWindow(-1, 0, off)).Equal(pair(causal, nil)))
		assert.True(t, pair(a.SlidingWindow(-1, -1, off)).Equal(pair(a, nil)))
		// Symmetric window is (w, w).
		assert.True(t, pair(a.SymmetricWindow(w, off)).Equal(pair(a.SlidingWindow(w, w, off))))
		// Causal is idempotent; a causal mask is within the structure.
		cm := pair(causal, nil)
		assert.True(t, pair(causal.Causal(off)).Equal(cm))
		sub := mustM(t)(cm.AndNot(pair(a, nil)))
		assert.False(t, sub.Any())
		// Chunks of 1 keep at most the diagonal (shifted by the offset).
		one := pair(a.Chunked(1, nil))
		assert.True(t, mustM(t)(one.AndNot(pair(a.SlidingWindow(0, 0, nil)))).Count() == 0)
		// Intersecting with the segment IDs themselves changes nothing;
		// a union with all −1 types neither.
		q, _ := mustI32(t)(a.SegmentIDs())
		assert.True(t, pair(a.TokenTypes(q, nil, Intersect)).Equal(pair(a, nil)))
		none := make([]int32, len(q))
		for i := range none {
			none[i] = -1
		}
		assert.True(t, pair(causal.TokenTypes(none, nil, Union)).Equal(cm))
		// Rules leave the structural forms alone.
		cu1, _ := mustI32(t)(a.CuSeqlens())
		cu2, _ := mustI32(t)(must(t)(causal.Chunked(3, nil)).CuSeqlens())
		assert.Equal(t, cu1, cu2)
		p1, _ := mustI32(t)(a.PositionIDs(-1))
		p2, _ := mustI32(t)(causal.PositionIDs(-1))
		assert.Equal(t, p1, p2)
	}
}

// TestBiasProperty checks on random masks that every bias is 0 exactly where
// the mask is true and −Inf (or the finite minimum) exactly where it is false.
func TestBiasProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 50 {
		a := must(t)(random(uint64(n), randomOptions{Batch: 1 + r.IntN(3), Len: 1 + r.IntN(30)}))
		a = must(t)(a.Causal([]int{r.IntN(5)}))
		heads := r.IntN(3)
		m := mustM(t)(a.Pairwise(heads))
		f32, shape, err := a.BiasFloat32(BiasOptions{Heads: heads})
		require.NoError(t, err)
		require.Equal(t, m.Shape(), shape)
		f16, _, err := a.BiasFloat16(BiasOptions{Heads: heads})
		require.NoError(t, err)
		bf, _, err := a.BiasBFloat16(BiasOptions{Heads: heads})
		require.NoError(t, err)
		fin, _, err := a.BiasFloat16(BiasOptions{Heads: heads, Finite: true})
		require.NoError(t, err)
		require.Len(t, f32, m.Len())
		for i := range m.Len() {
			if m.Get(i) {
				require.Equal(t, uint32(0), math.Float32bits(f32[i]))
				require.Equal(t, uint16(0x0000), f16[i])
				require.Equal(t, uint16(0x0000), bf[i])
				require.Equal(t, uint16(0x0000), fin[i])
			} else {
				require.True(t, math.IsInf(float64(f32[i]), -1))
				require.Equal(t, uint16(0xFC00), f16[i])
				require.Equal(t, uint16(0xFF80), bf[i])
				require.Equal(t, uint16(0xFBFF), fin[i])
			}
		}
	}
}

// canonical renumbers segment IDs 0, 1, ... by first appearance in each row.
func canonical(ids []int32, B, n int) []int32 {
	out := make([]int32, len(ids))
	for b := range B {
		m := map[int32]int32{}
		for t := b * n; t < (b+1)*n; t++ {
			if ids[t] < 0 {
				out[t] = -1
				continue
			}
			if _, ok := m[ids[t]]; !ok {
				m[ids[t]] = int32(len(m))
			}
			out[t] = m[ids[t]]
		}
	}
	return out
}

// unpad returns the pairwise mask of a's real tokens, concatenated over the
// batch rows, as one [1,T,T] mask (FlashAttention's unpad_input applied to
// the mask): what a mask built from a's cu_seqlens must equal.
func unpad(t *testing.T, a *Attention, qseg []int32) *Mask {
	B, _, nq, _ := a.Shape()
	m := mustM(t)(a.Pairwise(0))
	type tok struct{ b, i int }
	var toks []tok
	for b := range B {
		for i := range nq {
			if qseg[b*nq+i] >= 0 {
				toks = append(toks, tok{b, i})
			}
		}
	}
	out := mustM(t)(New([]int{1, len(toks), len(toks)}))
	for x, p := range toks {
		for y, q := range toks {
			if p.b == q.b && m.At(p.b, p.i, q.i) {
				out.SetAt(true, 0, x, y)
			}
		}
	}
	return out
}

// TestRoundTrips converts random structures between every pair of forms
// where the conversion is defined, and checks that it is undefined exactly
// where the documentation says.
func TestRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for n := range 300 {
		o := randomOptions{Batch: 1 + r.IntN(3), Len: 1 + r.IntN(24), MaxSegments: 1 + r.IntN(3), NoPadding: r.IntN(4) == 0}
		a := must(t)(random(uint64(n), o))
		B, L := o.Batch, o.Len
		ids, _ := mustI32(t)(a.SegmentIDs())
		p := mustM(t)(a.Pairwise(0))
		name := fmt.Sprintf("case %d %v", n, ids)

		// Segments ↔ pairwise: canonical IDs back.
		fp := must(t)(FromPairwise(p))
		q2, k2 := mustI32(t)(fp.SegmentIDs())
		assert.Equal(t, canonical(ids, B, L), q2, name)
		assert.Equal(t, q2, k2, name)
		assert.True(t, mustM(t)(fp.Pairwise(0)).Equal(p), name)

		// Rows with at most one sequence have a padding mask; others none.
		oneSeq, prefix := true, true
		for b := range B {
			row := ids[b*L : (b+1)*L]
			first, last := -1, -1
			for i, v := range row {
				if v >= 0 {
					if first < 0 {
						first = i
					}
					last = i
					if v != row[first] {
						oneSeq = false
					}
				}
			}
			if first > 0 || (first >= 0 && slices.Contains(row[first:last+1], -1)) {
				prefix = false
			}
		}
		pad, err := a.Padding()
		if !oneSeq {
			assert.ErrorIs(t, err, ErrNotRepresentable, name)
		} else {
			require.NoError(t, err, name)
			for i, v := range ids {
				assert.Equal(t, v >= 0, pad.Get(i), name)
			}
			fpad := must(t)(FromPadding(pad))
			assert.True(t, mustM(t)(fpad.Pairwise(0)).Equal(p), name)
			assert.True(t, mustM(t)(fp.Padding()).Equal(pad), name) // from the pairwise mask too
			// padding → segments → padding.
			s, _ := mustI32(t)(fpad.SegmentIDs())
			assert.True(t, mustM(t)(must(t)(FromSegmentIDs(B, s)).Padding()).Equal(pad), name)
			assert.True(t, mustM(t)(fpad.Padding()).Equal(pad), name)
		}

		// Right-padded single sequences have lengths.
		lq, lk, err := a.Lengths()
		if !(oneSeq && prefix) {
			assert.ErrorIs(t, err, ErrNotRepresentable, name)
		} else {
			require.NoError(t, err, name)
			assert.Equal(t, lq, lk)
			fl := must(t)(FromLengths(lq, L))
			assert.True(t, mustM(t)(fl.Pairwise(0)).Equal(p), name)
			l2, _ := mustInts(t)(fl.Lengths())
			assert.Equal(t, lq, l2)
			l3, _ := mustInts(t)(must(t)(FromPadding(mustM(t)(fl.Padding()))).Lengths())
			assert.Equal(t, lq, l3, name)
		}
		counts, _ := mustInts(t)(a.TokenCounts())
		for b := range B {
			c := 0
			for _, v := range ids[b*L : (b+1)*L] {
				if v >= 0 {
					c++
				}
			}
			assert.Equal(t, c, counts[b])
		}

		// Contiguous sequences always have cu_seqlens: the run lengths in
		// order, the unpadded mask.
		cq, ck := mustI32(t)(a.CuSeqlens())
		assert.Equal(t, cq, ck)
		want := []int32{0}
		for b := range B {
			prev := int32(-1)
			for _, v := range ids[b*L : (b+1)*L] {
				switch {
				case v < 0:
				case v == prev:
					want[len(want)-1]++
				default:
					want = append(want, want[len(want)-1]+1)
					prev = v
				}
			}
		}
		assert.Equal(t, want, cq, name)
		fc := must(t)(FromCuSeqlens(cq))
		assert.True(t, mustM(t)(fc.Pairwise(0)).Equal(unpad(t, a, ids)), name)
		c2, _ := mustI32(t)(fc.CuSeqlens())
		assert.Equal(t, cq, c2)
		// cu_seqlens → segments → cu_seqlens, and → pairwise → cu_seqlens.
		s, _ := mustI32(t)(fc.SegmentIDs())
		c3, _ := mustI32(t)(must(t)(FromSegmentIDs(1, s)).CuSeqlens())
		assert.Equal(t, cq, c3, name)
		c4, _ := mustI32(t)(must(t)(FromPairwise(mustM(t)(fc.Pairwise(0)))).CuSeqlens())
		assert.Equal(t, cq, c4, name)
		// Position IDs restart at every sequence.
		pos, _ := mustI32(t)(fc.PositionIDs(-1))
		for s := 0; s+1 < len(cq); s++ {
			for i := cq[s]; i < cq[s+1]; i++ {
				assert.Equal(t, i-cq[s], pos[i])
			}
		}
	}
}

// TestQKRoundTrips covers forms with separate query and key sides.
func TestQKRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 200 {
		// QK lengths → segment IDs → lengths (through segments: exact).
		B, nq, nk := 1+r.IntN(3), r.IntN(8), r.IntN(8)
		lq, lk := make([]int, B), make([]int, B)
		for b := range B {
			lq[b], lk[b] = r.IntN(nq+1), r.IntN(nk+1)
		}
		a := must(t)(FromQKLengths(lq, nq, lk, nk))
		q, k := mustI32(t)(a.SegmentIDs())
		s := must(t)(FromQKSegmentIDs(B, q, k))
		gq, gk := mustInts(t)(s.Lengths())
		assert.Equal(t, lq, gq)
		assert.Equal(t, lk, gk)
		assert.True(t, mustM(t)(s.Pairwise(0)).Equal(mustM(t)(a.Pairwise(0))))
		// Through the pairwise mask a side whose partner is empty is lost.
		gq, gk = mustInts(t)(must(t)(FromPairwise(mustM(t)(a.Pairwise(0)))).Lengths())
		for b := range B {
			if lq[b] == 0 || lk[b] == 0 {
				assert.Equal(t, 0, gq[b])
				assert.Equal(t, 0, gk[b])
			} else {
				assert.Equal(t, lq[b], gq[b])
				assert.Equal(t, lk[b], gk[b])
			}
		}

		// QK cu_seqlens (sides may be empty, never both) → segments → cu.
		N := r.IntN(5)
		cq, ck := []int32{0}, []int32{0}
		full := true
		for range N {
			a, b := int32(r.IntN(4)), int32(r.IntN(4))
			if a == 0 && b == 0 {
				a = 1
			}
			full = full && a > 0 && b > 0
			cq, ck = append(cq, cq[len(cq)-1]+a), append(ck, ck[len(ck)-1]+b)
		}
		c := must(t)(FromQKCuSeqlens(cq, ck))
		q, k = mustI32(t)(c.SegmentIDs())
		g1, g2 := mustI32(t)(must(t)(FromQKSegmentIDs(1, q, k)).CuSeqlens())
		assert.Equal(t, cq, g1, "%v %v", cq, ck)
		assert.Equal(t, ck, g2, "%v %v", cq, ck)
		if full {
			g1, g2 = mustI32(t)(must(t)(FromPairwise(mustM(t)(c.Pairwise(0)))).CuSeqlens())
			assert.Equal(t, cq, g1)
			assert.Equal(t, ck, g2)
		}
	}
}

// TestAttentionConcurrent reads every derived form of one value from many
// goroutines at once (run with -race) and checks they all agree.
func TestAttentionConcurrent(t *testing.T) {
	a := must(t)(random(42, randomOptions{Batch: 4, Len: 64, MaxSegments: 1}))
	a = must(t)(a.Causal(nil))
	pw := must(t)(FromPairwise(mustM(t)(a.Pairwise(0))))
	want := mustM(t)(a.Pairwise(0))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, v := range []*Attention{a, pw} {
				m, err := v.Pairwise(g % 3)
				if err != nil {
					errs <- err
					return
				}
				if g%3 == 0 && !m.Equal(want) {
					errs <- fmt.Errorf("goroutine %d: pairwise differs", g)
				}
				if _, err := v.Padding(); v == a && err != nil {
					errs <- err
				}
				v.SegmentIDs()
				v.CuSeqlens()
				v.Lengths()
				v.TokenCounts()
				v.PositionIDs(0)
				v.BiasBFloat16(BiasOptions{})
				if _, err := v.Visualize(VisualizeOptions{Batch: g % 4}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestAttentionOutputsAreCopies changes every output and checks that the
// value does not see it.
func TestAttentionOutputsAreCopies(t *testing.T) {
	a := must(t)(FromPadding(maskOf(t, []int{1, 3}, "110")))
	m := mustM(t)(a.Pairwise(0))
	m.SetRange(0, m.Len(), true)
	assert.Equal(t, []string{"110", "110", "000"}, attnRows(t, a, 0, 0))
	p := mustM(t)(a.Padding())
	p.Set(2, true)
	assert.Equal(t, "[[1 1 0]]", mustM(t)(a.Padding()).String())
	q, _ := mustI32(t)(a.SegmentIDs())
	q[2] = 0
	q, _ = mustI32(t)(a.SegmentIDs())
	assert.Equal(t, []int32{0, 0, -1}, q)
	c, _ := mustI32(t)(a.CuSeqlens())
	c[1] = 9
	c, _ = mustI32(t)(a.CuSeqlens())
	assert.Equal(t, []int32{0, 2}, c)
	l, _ := mustInts(t)(a.Lengths())
	l[0] = 3
	l, _ = mustInts(t)(a.Lengths())
	assert.Equal(t, []int{2}, l)

	cu := []int32{0, 1, 3}
	f := must(t)(FromCuSeqlens(cu))
	cu[1] = 2
	c, _ = mustI32(t)(f.CuSeqlens())
	assert.Equal(t, []int32{0, 1, 3}, c)
	lens := []int{1}
	fl := must(t)(FromLengths(lens, 2))
	lens[0] = 2
	l, _ = mustInts(t)(fl.Lengths())
	assert.Equal(t, []int{1}, l)
	types := []int32{0, 1, 1}
	tt := must(t)(must(t)(FromLengths([]int{3}, 3)).TokenTypes(types, nil, Intersect))
	types[0] = 1
	assert.Equal(t, []string{"100", "011", "011"}, attnRows(t, tt, 0, 0))
}
