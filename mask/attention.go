package mask

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Form names a representation of an attention mask.
type Form int

// The forms an [Attention] is built from and converts to.
const (
	// FormPairwise is a boolean mask [B,Q,K] or [B,H,Q,K]: element
	// [b,(h,)i,j] is true when query i of batch row b may attend key j.
	FormPairwise Form = iota
	// FormPadding is a 2-D padding mask [B,L] (the attention_mask of Hugging
	// Face tokenizers): true for a real token, false for padding; queries
	// and keys are the same L tokens.
	FormPadding
	// FormSegments is query and key segment IDs [B,Q] and [B,K]: a query
	// attends the keys of its own segment; −1 marks padding.
	FormSegments
	// FormCuSeqlens is cumulative sequence lengths, int32 [N+1] for queries
	// and for keys, as FlashAttention's varlen functions take them: N
	// sequences packed one after another into one row of cu_q[N] queries and
	// cu_k[N] keys, sequence s holding queries cu_q[s]..cu_q[s+1]-1 and keys
	// cu_k[s]..cu_k[s+1]-1.
	FormCuSeqlens
	// FormLengths is per-batch lengths: row b holds one sequence of lq[b]
	// queries and lk[b] keys at its start, padding after them (right
	// padding).
	FormLengths
)

var formNames = [...]string{
	FormPairwise:  "pairwise",
	FormPadding:   "padding",
	FormSegments:  "segment ids",
	FormCuSeqlens: "cu_seqlens",
	FormLengths:   "lengths",
}

func (f Form) String() string {
	if f >= 0 && int(f) < len(formNames) {
		return formNames[f]
	}
	return fmt.Sprintf("Form(%d)", int(f))
}

// Attention is an attention mask: which of K keys each of Q queries may
// attend, for each of B batch rows (and optionally H heads). It is built from
// any of the forms models use ([FromPairwise], [FromPadding],
// [FromSegmentIDs], [FromCuSeqlens], [FromLengths] or their QK variants);
// every other form is computed on demand and cached. Polarity is
// true = attend, as in PyTorch's scaled_dot_product_attention (a boolean
// attn_mask is True where the pair takes part in attention) and everywhere
// in this package.
//
// # Structure and rules
//
// A value is a sequence structure plus rules. The structure says which
// tokens are real and which sequence each belongs to: it is what the
// builder's form holds (a pairwise mask is its own structure). The rules are
// the transformations applied since: [Attention.Causal],
// [Attention.SlidingWindow], [Attention.Chunked] and [Attention.TokenTypes],
// each combined with the mask so far in the order they were applied
// (intersect, or union for TokenTypes with [Union]). Padding is applied
// last, as Hugging Face's masking utilities apply the 2-D padding mask on
// top of every other mask function: no rule makes a padding token attend or
// be attended. [Attention.KeyLengths] changes the structure (keys past a
// length become padding).
//
// The boolean mask ([Attention.Pairwise]) and the additive biases
// ([Attention.BiasFloat32], [Attention.BiasFloat16], [Attention.BiasBFloat16])
// hold structure and rules. The structural forms ([Attention.Padding],
// [Attention.SegmentIDs], [Attention.CuSeqlens], [Attention.Lengths],
// [Attention.TokenCounts], [Attention.PositionIDs]) describe the structure
// only: they are what a variable-length kernel takes alongside its causal
// flag and window size, as FlashAttention's varlen functions take
// cu_seqlens, causal and window_size separately.
//
// # Pairwise meaning of each form
//
//   - padding pad [B,L]: Q = K = L, and query i attends key j when pad[b,i]
//     and pad[b,j]. Hugging Face's padding_mask_function masks keys only;
//     the two agree everywhere but on the rows of padding queries, which
//     attend nothing here (their outputs are discarded by any loss).
//   - segment IDs q [B,Q], k [B,K]: query i attends key j when q[b,i] =
//     k[b,j] ≥ 0, Hugging Face's packed_sequence_mask_function with −1 as
//     padding. Segments need not be contiguous for this form.
//   - cu_seqlens: one batch row of packed sequences (B = 1, Q = cu_q[N],
//     K = cu_k[N]); query and key of the same sequence attend each other.
//   - lengths lq, lk: query i < lq[b] attends key j < lk[b].
//
// # Conversions
//
// The structural forms convert into each other exactly where the target can
// hold the structure; elsewhere the conversion is a *[ConversionError]
// (errors.Is [ErrNotRepresentable]) naming the batch row and index that
// show it:
//
//   - pairwise → segment IDs: each batch row (all heads equal) must be
//     block-diagonal up to order: the non-empty query rows fall into classes
//     of identical rows whose key sets are disjoint. The IDs come out
//     canonical (numbered 0, 1, ... by first query), so the caller's own ID
//     values are not kept, and a segment with queries but no keys (or keys
//     but no queries) becomes padding.
//   - → padding: Q = K, equal query and key IDs, at most one segment per row.
//   - → lengths: on each side a row is one segment from index 0 on, then
//     padding (the same segment on both sides).
//   - → cu_seqlens: the layout of FlashAttention's unpad_input: padding is
//     dropped and the batch rows are concatenated, so each sequence's real
//     tokens must be contiguous and in the same order on the query and key
//     side. The batch rows and the places of padding are lost: padding [B,L]
//     → cu_seqlens → FromCuSeqlens gives the packed row, one batch row.
//     Sequences with no query and no key vanish on the way back.
//   - every form → pairwise is exact; pairwise → a structural form is exact
//     once the structure exists (what the ID values were is lost).
//
// # Positions
//
// Rules place query i of batch row b at position i + offset[b] and key j at
// j, as Hugging Face's masks place queries at cache_position: with a KV
// cache of P tokens and Q new ones, K = P + Q and offset = P, which is the
// bottom-right alignment of FlashAttention's causal mask and of PyTorch's
// causal_lower_right (offset K − Q). Offset 0 everywhere is the top-left
// alignment of scaled_dot_product_attention's is_causal. For right-padded
// rows of lq[b] queries and lk[b] keys (FlashAttention's varlen sequences
// laid out in a padded batch), the bottom-right offset is lk[b] − lq[b].
// Offsets are given per rule: nil for 0, one value for every row, or one per
// batch row.
//
// Rules see the positions of a whole row, not of each packed sequence: in a
// packed row whose sequences have as many queries as keys, laid out alike
// (training, prefill), causal and window rules on the row are
// FlashAttention's per-sequence ones, because the structure already keeps
// each sequence to itself; with seqlen_q ≠ seqlen_k per sequence they are
// not, and such sequences belong one per batch row ([FromQKLengths]) with
// the offsets above.
//
// An Attention is immutable: transformations return a new value and leave
// the receiver alone. It is safe for concurrent use; the first call that
// needs a derived form computes it once, and every output is a fresh copy.
// The zero Attention is an empty pairwise mask (B = Q = K = 0).
type Attention struct {
	batch, heads, nq, nk int // heads is 0 when there is no head dimension
	form                 Form
	pair                 *Mask   // the pairwise structure, or nil
	qseg, kseg           []int32 // segment IDs, −1 = padding; for a pairwise structure 0 (real) or −1
	rules                []rule
	src                  source // the builder's input, returned as given while the structure is unchanged
	c                    *attnCache
}

// source keeps the builder's own input, so that asking a value for the form
// it was built from gives that input back unchanged.
type source struct {
	valid      bool
	pad        *Mask
	cuQ, cuK   []int32
	lenQ, lenK []int
}

// attnCache holds the derived forms, each computed at most once.
type attnCache struct {
	pair    lazy[*Mask]
	segs    lazy[[2][]int32]
	padding lazy[*Mask]
	cu      lazy[[2][]int32]
	lengths lazy[[2][]int]
}

// zeroCache serves every zero Attention, which are all the same empty mask.
var zeroCache attnCache

func (a *Attention) cache() *attnCache {
	if a.c == nil {
		return &zeroCache
	}
	return a.c
}

type lazy[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (l *lazy[T]) get(f func() (T, error)) (T, error) {
	l.once.Do(func() { l.v, l.err = f() })
	return l.v, l.err
}

// Shape returns the batch size B, the number of heads H (0 when the mask has
// no head dimension), the number of queries Q and of keys K.
func (a *Attention) Shape() (batch, heads, queries, keys int) {
	return a.batch, a.heads, a.nq, a.nk
}

// Form returns the form the value was built from.
func (a *Attention) Form() Form { return a.form }

// String describes the value: its shape, form and rules.
func (a *Attention) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "attention B=%d", a.batch)
	if a.heads > 0 {
		fmt.Fprintf(&sb, " H=%d", a.heads)
	}
	fmt.Fprintf(&sb, " Q=%d K=%d from %s", a.nq, a.nk, a.form)
	for _, r := range a.rules {
		sb.WriteString(", ")
		sb.WriteString(r.String())
	}
	return sb.String()
}

// derive returns a copy of a sharing its structure, with rules and a fresh
// cache.
func (a *Attention) derive(rules []rule) *Attention {
	out := *a
	out.rules = rules
	out.c = &attnCache{}
	return &out
}

func newAttention(form Form, batch, heads, nq, nk int) *Attention {
	return &Attention{batch: batch, heads: heads, nq: nq, nk: nk, form: form, c: &attnCache{}}
}

// FromPairwise returns the attention mask whose pairwise form is m: [B,Q,K],
// or [B,H,Q,K] with a mask per head. Element [b,(h,)i,j] is true when query
// i may attend key j (the polarity of scaled_dot_product_attention's boolean
// attn_mask). m is copied. A rank other than 3 or 4 is an *InputError.
func FromPairwise(m *Mask) (*Attention, error) {
	if m == nil {
		return nil, &InputError{Op: "from pairwise", Arg: "mask", Index: -1, Reason: "nil"}
	}
	shape := m.Shape()
	var a *Attention
	switch len(shape) {
	case 3:
		a = newAttention(FormPairwise, shape[0], 0, shape[1], shape[2])
	case 4:
		if shape[1] == 0 {
			return nil, &InputError{Op: "from pairwise", Arg: "mask", Index: -1, Value: 0,
				Reason: fmt.Sprintf("shape %v: no heads (use [B,Q,K] for a mask shared by all heads)", shape)}
		}
		a = newAttention(FormPairwise, shape[0], shape[1], shape[2], shape[3])
	default:
		return nil, &InputError{Op: "from pairwise", Arg: "mask", Index: -1, Value: int64(len(shape)),
			Reason: fmt.Sprintf("shape %v: want [B,Q,K] or [B,H,Q,K]", shape)}
	}
	a.pair = m.Clone()
	a.qseg = make([]int32, a.batch*a.nq)
	a.kseg = make([]int32, a.batch*a.nk)
	a.src.valid = true
	return a, nil
}

// FromPadding returns the attention mask of a 2-D padding mask pad [B,L]
// (true = real token, false = padding), as a tokenizer's attention_mask:
// Q = K = L, and query i attends key j when both are real. A rank other than
// 2 is an *InputError. pad is copied.
func FromPadding(pad *Mask) (*Attention, error) {
	if pad == nil {
		return nil, &InputError{Op: "from padding", Arg: "padding", Index: -1, Reason: "nil"}
	}
	shape := pad.Shape()
	if len(shape) != 2 {
		return nil, &InputError{Op: "from padding", Arg: "padding", Index: -1, Value: int64(len(shape)),
			Reason: fmt.Sprintf("shape %v: want [B,L]", shape)}
	}
	a := newAttention(FormPadding, shape[0], 0, shape[1], shape[1])
	a.qseg = make([]int32, a.batch*a.nq)
	for i := range a.qseg {
		if !getBit(pad.bits, i) {
			a.qseg[i] = -1
		}
	}
	a.kseg = a.qseg
	a.src = source{valid: true, pad: pad.Clone()}
	return a, nil
}

// FromSegmentIDs returns the self-attention mask (Q = K) of segment IDs ids
// [batch, L], row-major: a token attends the tokens of its own segment, and
// ID −1 marks padding, which attends nothing and is attended by nothing (the
// packed-sequence mask of Hugging Face, with padding). Segments need not be
// contiguous. An ID below −1, a batch ≤ 0 or a length that is not a multiple
// of batch is an *InputError.
func FromSegmentIDs(batch int, ids []int32) (*Attention, error) {
	return fromSegments("from segment ids", batch, ids, nil)
}

// FromQKSegmentIDs is [FromSegmentIDs] with separate query IDs q [batch, Q]
// and key IDs k [batch, K]: query i attends key j when q[b,i] = k[b,j] ≥ 0.
func FromQKSegmentIDs(batch int, q, k []int32) (*Attention, error) {
	if k == nil {
		return nil, &InputError{Op: "from qk segment ids", Arg: "key ids", Index: -1, Reason: "nil (use FromSegmentIDs for self-attention)"}
	}
	return fromSegments("from qk segment ids", batch, q, k)
}

func fromSegments(op string, batch int, q, k []int32) (*Attention, error) {
	if batch <= 0 {
		return nil, &InputError{Op: op, Arg: "batch", Index: -1, Value: int64(batch), Reason: fmt.Sprintf("batch %d: want at least 1", batch)}
	}
	names := [2]string{"query ids", "key ids"}
	if k == nil {
		names[0] = "ids"
	}
	for s, ids := range [2][]int32{q, k} {
		if s == 1 && k == nil {
			break
		}
		if len(ids)%batch != 0 {
			return nil, &InputError{Op: op, Arg: names[s], Index: -1, Value: int64(len(ids)),
				Reason: fmt.Sprintf("%d ids are not a multiple of batch %d", len(ids), batch)}
		}
		if err := checkIDs(op, names[s], ids); err != nil {
			return nil, err
		}
	}
	a := newAttention(FormSegments, batch, 0, len(q)/batch, len(q)/batch)
	a.qseg = slices.Clone(q)
	a.kseg = a.qseg
	if k != nil {
		a.nk = len(k) / batch
		a.kseg = slices.Clone(k)
	}
	a.src.valid = true
	return a, nil
}

func checkIDs(op, arg string, ids []int32) error {
	for i, v := range ids {
		if v < -1 {
			return &InputError{Op: op, Arg: arg, Index: i, Value: int64(v), Reason: "below −1 (−1 marks padding)"}
		}
	}
	return nil
}

// FromCuSeqlens returns the self-attention mask of packed sequences given by
// their cumulative lengths cu [N+1] (FlashAttention's cu_seqlens, int32): one
// batch row of cu[N] tokens, sequence s holding tokens cu[s]..cu[s+1]-1, each
// token attending the tokens of its own sequence. cu must start at 0 and
// never decrease (an empty sequence is allowed); anything else is an
// *InputError naming the element.
func FromCuSeqlens(cu []int32) (*Attention, error) {
	if err := checkCu("from cu_seqlens", "cu_seqlens", cu); err != nil {
		return nil, err
	}
	a := newAttention(FormCuSeqlens, 1, 0, int(cu[len(cu)-1]), int(cu[len(cu)-1]))
	a.qseg = cuToIDs(cu)
	a.kseg = a.qseg
	a.src = source{valid: true, cuQ: slices.Clone(cu), cuK: slices.Clone(cu)}
	return a, nil
}

// FromQKCuSeqlens is [FromCuSeqlens] with separate cumulative lengths for
// queries (cu_seqlens_q) and keys (cu_seqlens_k), of equal length N+1: one
// batch row of q[N] queries and k[N] keys, the queries of sequence s
// attending its keys.
func FromQKCuSeqlens(q, k []int32) (*Attention, error) {
	op := "from qk cu_seqlens"
	if err := checkCu(op, "cu_seqlens_q", q); err != nil {
		return nil, err
	}
	if err := checkCu(op, "cu_seqlens_k", k); err != nil {
		return nil, err
	}
	if len(q) != len(k) {
		return nil, &InputError{Op: op, Arg: "cu_seqlens_k", Index: -1, Value: int64(len(k)),
			Reason: fmt.Sprintf("%d elements, cu_seqlens_q has %d", len(k), len(q))}
	}
	a := newAttention(FormCuSeqlens, 1, 0, int(q[len(q)-1]), int(k[len(k)-1]))
	a.qseg, a.kseg = cuToIDs(q), cuToIDs(k)
	a.src = source{valid: true, cuQ: slices.Clone(q), cuK: slices.Clone(k)}
	return a, nil
}

func checkCu(op, arg string, cu []int32) error {
	if len(cu) == 0 {
		return &InputError{Op: op, Arg: arg, Index: -1, Reason: "empty: want N+1 ≥ 1 elements starting at 0"}
	}
	if cu[0] != 0 {
		return &InputError{Op: op, Arg: arg, Index: 0, Value: int64(cu[0]), Reason: "must be 0"}
	}
	for i := 1; i < len(cu); i++ {
		if cu[i] < cu[i-1] {
			return &InputError{Op: op, Arg: arg, Index: i, Value: int64(cu[i]),
				Reason: fmt.Sprintf("below %s[%d] = %d: cumulative lengths never decrease", arg, i-1, cu[i-1])}
		}
	}
	return nil
}

// cuToIDs gives token t of the packed row the index of its sequence.
func cuToIDs(cu []int32) []int32 {
	ids := make([]int32, cu[len(cu)-1])
	for s := 0; s+1 < len(cu); s++ {
		for t := cu[s]; t < cu[s+1]; t++ {
			ids[t] = int32(s)
		}
	}
	return ids
}

// FromLengths returns the self-attention mask of right-padded sequences:
// len(lens) batch rows of n tokens, row b holding one sequence of lens[b]
// tokens at its start and padding after them. A length below 0 or above n is
// an *InputError naming the row.
func FromLengths(lens []int, n int) (*Attention, error) {
	a, err := fromLengths("from lengths", [2]string{"lengths", "n"}, lens, n, lens, n)
	if err != nil {
		return nil, err
	}
	a.kseg = a.qseg
	return a, nil
}

// FromQKLengths is [FromLengths] with nq query and nk key positions per row
// and separate lengths: query i < q[b] attends key j < k[b]. q and k must have
// one length per batch row each.
func FromQKLengths(q []int, nq int, k []int, nk int) (*Attention, error) {
	if len(k) != len(q) {
		return nil, &InputError{Op: "from qk lengths", Arg: "key lengths", Index: -1, Value: int64(len(k)),
			Reason: fmt.Sprintf("%d lengths, query lengths have %d", len(k), len(q))}
	}
	return fromLengths("from qk lengths", [2]string{"query lengths", "nq"}, q, nq, k, nk)
}

func fromLengths(op string, names [2]string, q []int, nq int, k []int, nk int) (*Attention, error) {
	kn := [2]string{"key lengths", "nk"}
	for s, l := range [2][]int{q, k} {
		name, n := names, nq
		if s == 1 {
			name, n = kn, nk
		}
		if n < 0 || n > math.MaxInt32 {
			return nil, &InputError{Op: op, Arg: name[1], Index: -1, Value: int64(n), Reason: fmt.Sprintf("%d is not a sequence length", n)}
		}
		for b, v := range l {
			if v < 0 || v > n {
				return nil, &InputError{Op: op, Arg: name[0], Index: b, Value: int64(v), Reason: fmt.Sprintf("outside [0, %d]", n)}
			}
		}
	}
	a := newAttention(FormLengths, len(q), 0, nq, nk)
	a.qseg, a.kseg = lengthIDs(q, nq), lengthIDs(k, nk)
	a.src = source{valid: true, lenQ: slices.Clone(q), lenK: slices.Clone(k)}
	return a, nil
}

func lengthIDs(lens []int, n int) []int32 {
	ids := make([]int32, len(lens)*n)
	for b, l := range lens {
		for i := l; i < n; i++ {
			ids[b*n+i] = -1
		}
	}
	return ids
}
