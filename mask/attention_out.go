package mask

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Pairwise returns the boolean mask, structure and rules together: [B,Q,K],
// or [B,H,Q,K] for a value built from a per-head mask, when heads is 0; with
// heads ≥ 1, [B,heads,Q,K] (the [B,1,Q,K] that Hugging Face passes to
// scaled_dot_product_attention is heads 1). Element [b,(h,)i,j] is true when
// query i attends key j, the polarity of scaled_dot_product_attention's
// boolean attn_mask. A row can be all false (a padding query, or a causal
// row before any key): scaled_dot_product_attention gives NaN there and
// FlashAttention zero. heads below 0, or other than H for a per-head value,
// is an *InputError.
func (a *Attention) Pairwise(heads int) (*Mask, error) {
	if heads < 0 || (heads > 0 && a.heads > 0 && heads != a.heads) {
		return nil, &InputError{Op: "pairwise", Arg: "heads", Index: -1, Value: int64(heads),
			Reason: fmt.Sprintf("want 0, or ≥ 1 and equal to the mask's %d heads when it has them", a.heads)}
	}
	m, err := a.cache().pair.get(a.computePairwise)
	if err != nil {
		return nil, err
	}
	if heads == 0 || a.heads > 0 {
		return m.Clone(), nil
	}
	r, err := m.Reshape([]int{a.batch, 1, a.nq, a.nk})
	if err != nil {
		return nil, err
	}
	return r.Broadcast([]int{a.batch, heads, a.nq, a.nk})
}

func (a *Attention) computePairwise() (*Mask, error) {
	H := max(a.heads, 1)
	shape := []int{a.batch, a.nq, a.nk}
	if a.heads > 0 {
		shape = []int{a.batch, a.heads, a.nq, a.nk}
	}
	out, err := newMask("pairwise", shape)
	if err != nil {
		return nil, err
	}
	nq, nk := a.nq, a.nk
	rb := kernels.PackedLen(nk, 1)
	row, live := make([]byte, rb), make([]byte, rb)
	for b := range a.batch {
		kseg := a.kseg[b*nk : (b+1)*nk]
		x := rowCtx{a: a, b: b, origin: max(a.liveKeys(live, b), 0)}
		segRows := map[int32][]byte{} // the structure's row of each segment
		for h := range H {
			for i := range nq {
				s := a.qseg[b*nq+i]
				if s < 0 {
					continue
				}
				if a.pair != nil {
					clear(row)
					copyBits(row, 0, a.pair.bits, ((b*H+h)*nq+i)*nk, nk)
				} else {
					r, ok := segRows[s]
					if !ok {
						r = make([]byte, rb)
						for j, t := range kseg {
							if t == s {
								setBit(r, j, true)
							}
						}
						segRows[s] = r
					}
					copy(row, r)
				}
				x.i = i
				for _, r := range a.rules {
					r.apply(row, &x)
				}
				andBytes(row, live)
				copyBits(out.bits, ((b*H+h)*nq+i)*nk, row, 0, nk)
			}
		}
	}
	return out, nil
}

// BiasOptions selects the shape and the masked value of an additive bias.
// The zero value gives the shape of [Attention.Pairwise](0) and −Inf.
type BiasOptions struct {
	// Heads is as Pairwise's heads: 0 for the natural shape, ≥ 1 for
	// [B,Heads,Q,K].
	Heads int
	// Finite puts the most negative finite value of the type where the mask
	// is false, instead of −Inf: −3.4028235e38 (float32), −65504 (float16,
	// 0xFBFF), −3.3895314e38 (bfloat16, 0xFF7F), torch.finfo(dtype).min, as
	// Hugging Face's eager attention masks have it; a fully masked row then
	// gives a uniform softmax instead of NaN.
	Finite bool
}

// BiasFloat32 returns the additive attention bias of a, in the shape of
// [Attention.Pairwise] (returned too): 0 where a pair takes part in
// attention, −Inf where it does not (or the most negative finite float32 with
// o.Finite), the bias scaled_dot_product_attention builds from a boolean
// attn_mask (masked_fill of the negation with -inf).
func (a *Attention) BiasFloat32(o BiasOptions) ([]float32, []int, error) {
	m, err := a.Pairwise(o.Heads)
	if err != nil {
		return nil, nil, err
	}
	neg := float32(math.Inf(-1))
	if o.Finite {
		neg = -math.MaxFloat32
	}
	return fillBias(m, 0, neg), m.Shape(), nil
}

// BiasFloat16 is [Attention.BiasFloat32] as IEEE binary16 codes: 0x0000 where
// the mask is true, 0xFC00 (−Inf) where it is false, or 0xFBFF (−65504) with
// o.Finite. The codes come from the float32 → float16 encoder of package
// kernels.
func (a *Attention) BiasFloat16(o BiasOptions) ([]uint16, []int, error) {
	return a.bias16(o, kernels.Float32ToFloat16)
}

// BiasBFloat16 is [Attention.BiasFloat32] as bfloat16 codes: 0x0000 where the
// mask is true, 0xFF80 (−Inf) where it is false, or 0xFF7F (−3.3895314e38)
// with o.Finite. The codes come from the float32 → bfloat16 encoder of
// package kernels.
func (a *Attention) BiasBFloat16(o BiasOptions) ([]uint16, []int, error) {
	return a.bias16(o, kernels.Float32ToBFloat16)
}

func (a *Attention) bias16(o BiasOptions, enc func([]uint16, []float32, bool)) ([]uint16, []int, error) {
	m, err := a.Pairwise(o.Heads)
	if err != nil {
		return nil, nil, err
	}
	// −Inf encodes as −Inf without saturation and as −max finite with it.
	var codes [2]uint16
	enc(codes[:], []float32{0, float32(math.Inf(-1))}, o.Finite)
	return fillBias(m, codes[0], codes[1]), m.Shape(), nil
}

// fillBias returns one value per element of m: keep where it is true, drop
// where it is false.
func fillBias[T any](m *Mask, keep, drop T) []T {
	out := make([]T, m.n)
	for k, w := range m.bits {
		dst := out[8*k : min(8*k+8, m.n)]
		switch w {
		case 0xff:
			for i := range dst {
				dst[i] = keep
			}
		case 0:
			for i := range dst {
				dst[i] = drop
			}
		default:
			for i := range dst {
				if w>>i&1 != 0 {
					dst[i] = keep
				} else {
					dst[i] = drop
				}
			}
		}
	}
	return out
}

// retarget names to as the requested form of a conversion error.
func retarget(err error, to Form) error {
	var ce *ConversionError
	if errors.As(err, &ce) && ce.To != to {
		c := *ce
		c.To = to
		return &c
	}
	return err
}

// segments returns the structure as query and key segment IDs; for a
// pairwise structure they are derived (canonical) or a *ConversionError.
func (a *Attention) segments(to Form) ([2][]int32, error) {
	if a.pair == nil {
		return [2][]int32{a.qseg, a.kseg}, nil
	}
	s, err := a.cache().segs.get(a.segmentsFromPairwise)
	return s, retarget(err, to)
}

// segmentsFromPairwise finds the segments of a pairwise structure (with the
// padding KeyLengths added): the classes of identical non-empty query rows,
// which must see disjoint keys, numbered by their first query.
func (a *Attention) segmentsFromPairwise() ([2][]int32, error) {
	H := max(a.heads, 1)
	nq, nk := a.nq, a.nk
	fail := func(b, i int, format string, args ...any) ([2][]int32, error) {
		return [2][]int32{}, &ConversionError{From: a.form, To: FormSegments, Batch: b, Index: i, Reason: fmt.Sprintf(format, args...)}
	}
	plane := nq * nk
	for b := range a.batch {
		for h := 1; h < H; h++ {
			if d := diffBits(a.pair.bits, (b*H)*plane, (b*H+h)*plane, plane); d >= 0 {
				return fail(b, d/nk, "head %d differs from head 0 at query %d, key %d: the heads have no common structure", h, d/nk, d%nk)
			}
		}
	}
	qs, ks := make([]int32, a.batch*nq), make([]int32, a.batch*nk)
	for i := range ks {
		ks[i] = -1
	}
	rb := kernels.PackedLen(nk, 1)
	row, live := make([]byte, rb), make([]byte, rb)
	for b := range a.batch {
		a.liveKeys(live, b)
		keys := ks[b*nk : (b+1)*nk]
		classes := map[string]int32{}
		for i := range nq {
			a.pairRow(row, live, b, 0, i)
			first := nextBit(row, 0, nk, true)
			if first < 0 {
				qs[b*nq+i] = -1
				continue
			}
			id, ok := classes[string(row)]
			if !ok {
				id = int32(len(classes))
				for j := first; j >= 0; j = nextBit(row, j+1, nk, true) {
					if keys[j] >= 0 {
						return fail(b, i, "query %d sees key %d, as the queries of segment %d do, but not the same keys: not block-diagonal", i, j, keys[j])
					}
					keys[j] = id
				}
				classes[string(row)] = id
			}
			qs[b*nq+i] = id
		}
	}
	return [2][]int32{qs, ks}, nil
}

// diffBits returns the first i < n where the bits of b from x+i and from
// y+i differ, or -1.
func diffBits(b []byte, x, y, n int) int {
	for i := 0; i < n; i += 56 {
		k := min(n-i, 56)
		if d := bitsAt(b, x+i, k) ^ bitsAt(b, y+i, k); d != 0 {
			for t := range k {
				if d>>t&1 != 0 {
					return i + t
				}
			}
		}
	}
	return -1
}

// SegmentIDs returns the structure as query segment IDs [B,Q] and key
// segment IDs [B,K], row-major, −1 for padding: the caller's IDs for a value
// built by FromSegmentIDs or FromQKSegmentIDs (after KeyLengths with its
// padding), 0 for the real tokens of padding and lengths forms, the sequence
// index s for cu_seqlens, and canonical IDs (0, 1, ... by first query) for a
// pairwise mask, which must be block-diagonal (see [Attention]) or the
// result is a *ConversionError. For self-attention the two slices are equal.
func (a *Attention) SegmentIDs() (q, k []int32, err error) {
	s, err := a.segments(FormSegments)
	if err != nil {
		return nil, nil, err
	}
	return slices.Clone(s[0]), slices.Clone(s[1]), nil
}

// Padding returns the structure as a 2-D padding mask [B,L] (true = real
// token): the builder's mask for a value built by FromPadding. It exists when
// Q = K and every row holds at most one sequence, with the same tokens real
// on the query and the key side; otherwise the result is a
// *ConversionError.
func (a *Attention) Padding() (*Mask, error) {
	if a.src.valid && a.form == FormPadding {
		return a.src.pad.Clone(), nil
	}
	m, err := a.cache().padding.get(a.computePadding)
	if err != nil {
		return nil, err
	}
	return m.Clone(), nil
}

func (a *Attention) computePadding() (*Mask, error) {
	s, err := a.segments(FormPadding)
	if err != nil {
		return nil, err
	}
	fail := func(b, i int, format string, args ...any) (*Mask, error) {
		return nil, &ConversionError{From: a.form, To: FormPadding, Batch: b, Index: i, Reason: fmt.Sprintf(format, args...)}
	}
	if a.nq != a.nk {
		return fail(-1, -1, "%d queries and %d keys: a padding mask has one length", a.nq, a.nk)
	}
	n := a.nq
	out, err := newMask("padding", []int{a.batch, n})
	if err != nil {
		return nil, err
	}
	for b := range a.batch {
		id := int32(-1)
		for i := range n {
			q, k := s[0][b*n+i], s[1][b*n+i]
			if q != k {
				return fail(b, i, "query segment %d and key segment %d: a padding mask gives a token one role", q, k)
			}
			if q < 0 {
				continue
			}
			if id >= 0 && q != id {
				return fail(b, i, "a second sequence (segment %d after %d): a padding mask holds one sequence per row", q, id)
			}
			id = q
			setBit(out.bits, b*n+i, true)
		}
	}
	return out, nil
}

// Lengths returns the structure as per-row query and key lengths: the
// builder's lengths for a value built by FromLengths or FromQKLengths. It
// exists when, on each side, every row is one sequence from index 0 on and
// padding after it (the same sequence on both sides when both are
// non-empty); otherwise the result is a *ConversionError. [Attention.TokenCounts]
// counts the real tokens of any structure.
func (a *Attention) Lengths() (q, k []int, err error) {
	if a.src.valid && a.form == FormLengths {
		return slices.Clone(a.src.lenQ), slices.Clone(a.src.lenK), nil
	}
	l, err := a.cache().lengths.get(a.computeLengths)
	if err != nil {
		return nil, nil, err
	}
	return slices.Clone(l[0]), slices.Clone(l[1]), nil
}

func (a *Attention) computeLengths() ([2][]int, error) {
	s, err := a.segments(FormLengths)
	if err != nil {
		return [2][]int{}, err
	}
	out := [2][]int{make([]int, a.batch), make([]int, a.batch)}
	for b := range a.batch {
		var ids [2]int32
		for side, n := range [2]int{a.nq, a.nk} {
			row := s[side][b*n : (b+1)*n]
			l, id := 0, int32(-1)
			for l < n && row[l] >= 0 && (id < 0 || row[l] == id) {
				id = row[l]
				l++
			}
			for t := l; t < n; t++ {
				if row[t] != -1 {
					what := [2]string{"query", "key"}[side]
					return [2][]int{}, &ConversionError{From: a.form, To: FormLengths, Batch: b, Index: t,
						Reason: fmt.Sprintf("%s %d (segment %d) follows padding or another sequence: not one right-padded sequence", what, t, row[t])}
				}
			}
			out[side][b], ids[side] = l, id
		}
		if ids[0] >= 0 && ids[1] >= 0 && ids[0] != ids[1] {
			return [2][]int{}, &ConversionError{From: a.form, To: FormLengths, Batch: b, Index: 0,
				Reason: fmt.Sprintf("the queries are segment %d and the keys segment %d: they do not attend each other", ids[0], ids[1])}
		}
	}
	return out, nil
}

// TokenCounts returns the number of real (non-padding) queries and keys of
// each batch row, wherever they are placed. For a pairwise structure a real
// query is one that attends some key and a real key one that some query
// attends (in any head), before the rules: this needs no block structure.
func (a *Attention) TokenCounts() (q, k []int, err error) {
	q, k = make([]int, a.batch), make([]int, a.batch)
	if a.pair != nil {
		a.pairCounts(q, k)
		return q, k, nil
	}
	for b := range a.batch {
		for _, v := range a.qseg[b*a.nq : (b+1)*a.nq] {
			if v >= 0 {
				q[b]++
			}
		}
		for _, v := range a.kseg[b*a.nk : (b+1)*a.nk] {
			if v >= 0 {
				k[b]++
			}
		}
	}
	return q, k, nil
}

// pairCounts counts the non-empty query rows and key columns of a pairwise
// structure (with KeyLengths' padding), over all heads.
func (a *Attention) pairCounts(q, k []int) {
	H := max(a.heads, 1)
	nq, nk := a.nq, a.nk
	rb := kernels.PackedLen(nk, 1)
	row, live, cols := make([]byte, rb), make([]byte, rb), make([]byte, rb)
	for b := range a.batch {
		a.liveKeys(live, b)
		clear(cols)
		for i := range nq {
			seen := false
			for h := range H {
				a.pairRow(row, live, b, h, i)
				for t := range row {
					cols[t] |= row[t]
				}
				seen = seen || nextBit(row, 0, nk, true) >= 0
			}
			if seen {
				q[b]++
			}
		}
		k[b] = countRange(cols, 0, nk)
	}
}

// liveKeys sets live (ceil(K/8) bytes) to the real keys of batch row b, those
// with a segment ID ≥ 0, and returns the first of them, or -1.
func (a *Attention) liveKeys(live []byte, b int) int {
	clear(live)
	first := -1
	for j, s := range a.kseg[b*a.nk : (b+1)*a.nk] {
		if s >= 0 {
			setBit(live, j, true)
			if first < 0 {
				first = j
			}
		}
	}
	return first
}

// pairRow sets row (ceil(K/8) bytes) to the keys that query i of head h of
// batch row b attends in a pairwise structure, restricted to live (from
// liveKeys).
func (a *Attention) pairRow(row, live []byte, b, h, i int) {
	clear(row)
	copyBits(row, 0, a.pair.bits, ((b*max(a.heads, 1)+h)*a.nq+i)*a.nk, a.nk)
	andBytes(row, live)
}

// andBytes ands src into dst, byte by byte.
func andBytes(dst, src []byte) {
	for k := range dst {
		dst[k] &= src[k]
	}
}

// CuSeqlens returns the structure as FlashAttention varlen's cumulative
// sequence lengths for queries and keys, int32 [N+1] each, starting at 0:
// the builder's arrays for a value built by FromCuSeqlens or
// FromQKCuSeqlens. Otherwise they describe the layout of FlashAttention's
// unpad_input: padding dropped, batch rows concatenated in order, and within
// a row the sequences in the order their tokens come (a sequence with
// queries but no keys, or keys but no queries, is a sequence with one length
// 0). Each sequence's real tokens must be contiguous in that layout, in the
// same order on both sides, and the totals must fit int32; otherwise the
// result is a *ConversionError.
func (a *Attention) CuSeqlens() (q, k []int32, err error) {
	if a.src.valid && a.form == FormCuSeqlens {
		return slices.Clone(a.src.cuQ), slices.Clone(a.src.cuK), nil
	}
	cu, err := a.cache().cu.get(a.computeCu)
	if err != nil {
		return nil, nil, err
	}
	return slices.Clone(cu[0]), slices.Clone(cu[1]), nil
}

// run is one sequence's tokens on one side of a row, padding skipped.
type run struct {
	id    int32
	n, at int // token count, index of the first token
}

// runs splits a row into runs of equal IDs, padding skipped, or returns the
// index of a token whose ID came in an earlier run.
func runs(row []int32) ([]run, int) {
	var out []run
	seen := map[int32]bool{}
	for t, id := range row {
		if id < 0 {
			continue
		}
		if len(out) > 0 && out[len(out)-1].id == id {
			out[len(out)-1].n++
			continue
		}
		if seen[id] {
			return nil, t
		}
		seen[id] = true
		out = append(out, run{id, 1, t})
	}
	return out, -1
}

func (a *Attention) computeCu() ([2][]int32, error) {
	s, err := a.segments(FormCuSeqlens)
	if err != nil {
		return [2][]int32{}, err
	}
	fail := func(b, i int, format string, args ...any) ([2][]int32, error) {
		return [2][]int32{}, &ConversionError{From: a.form, To: FormCuSeqlens, Batch: b, Index: i, Reason: fmt.Sprintf(format, args...)}
	}
	cq, ck := []int32{0}, []int32{0}
	tq, tk := 0, 0
	for b := range a.batch {
		qr, bad := runs(s[0][b*a.nq : (b+1)*a.nq])
		if bad >= 0 {
			return fail(b, bad, "query %d is in segment %d, which ended before it: not contiguous", bad, s[0][b*a.nq+bad])
		}
		kr, bad := runs(s[1][b*a.nk : (b+1)*a.nk])
		if bad >= 0 {
			return fail(b, bad, "key %d is in segment %d, which ended before it: not contiguous", bad, s[1][b*a.nk+bad])
		}
		inQ, inK := map[int32]bool{}, map[int32]bool{}
		for _, r := range qr {
			inQ[r.id] = true
		}
		for _, r := range kr {
			inK[r.id] = true
		}
		emit := func(nq, nk int) {
			tq, tk = tq+nq, tk+nk
			cq, ck = append(cq, int32(min(tq, math.MaxInt32))), append(ck, int32(min(tk, math.MaxInt32)))
		}
		i, j := 0, 0
		for i < len(qr) || j < len(kr) {
			if i < len(qr) && j < len(kr) && qr[i].id == kr[j].id {
				emit(qr[i].n, kr[j].n)
				i, j = i+1, j+1
				continue
			}
			qOnly := i < len(qr) && !inK[qr[i].id]
			kOnly := j < len(kr) && !inQ[kr[j].id]
			switch {
			case qOnly && (!kOnly || qr[i].id < kr[j].id):
				emit(qr[i].n, 0)
				i++
			case kOnly:
				emit(0, kr[j].n)
				j++
			default:
				return fail(b, qr[i].at, "segment %d comes before segment %d among the queries but not among the keys", qr[i].id, kr[j].id)
			}
		}
		if tq > math.MaxInt32 || tk > math.MaxInt32 {
			return fail(b, -1, "%d queries and %d keys in total: beyond int32", tq, tk)
		}
	}
	return [2][]int32{cq, ck}, nil
}

// PositionIDs returns the position of every query [B,Q] and key [B,K] within
// its sequence, counting from 0 (restarting at each sequence of a packed row,
// as the position_ids of packed-sequence training and of Hugging Face's
// DataCollatorWithFlattening), and pad at padding tokens. For a padded batch
// and pad 1 this is Hugging Face's attention_mask.cumsum(-1) − 1 filled with
// 1 at padding. A sequence that is not contiguous counts its own tokens only.
// Queries and keys are counted separately: with a KV cache of P tokens, add
// P to the query positions. The structure of a pairwise mask must exist (see
// [Attention.SegmentIDs]).
func (a *Attention) PositionIDs(pad int32) (q, k []int32, err error) {
	s, err := a.segments(FormSegments)
	if err != nil {
		return nil, nil, err
	}
	return positions(s[0], a.batch, a.nq, pad), positions(s[1], a.batch, a.nk, pad), nil
}

func positions(ids []int32, batch, n int, pad int32) []int32 {
	out := make([]int32, len(ids))
	for b := range batch {
		count := map[int32]int32{}
		for t := b * n; t < (b+1)*n; t++ {
			if ids[t] < 0 {
				out[t] = pad
				continue
			}
			out[t] = count[ids[t]]
			count[ids[t]]++
		}
	}
	return out
}
