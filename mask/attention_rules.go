package mask

import (
	"fmt"
	"math"
	"slices"
)

// A rule is a transformation kept with the structure and applied to each
// query row of the pairwise mask in turn.
type rule interface {
	// apply changes row, the K key bits of query i of batch row b.
	apply(row []byte, x *rowCtx)
	String() string
}

// rowCtx is what a rule may read about the row it changes.
type rowCtx struct {
	a      *Attention
	b, i   int
	origin int // the first real key of row b (0 if none)
}

// posLimit bounds positions and window sizes in rule arithmetic, far above
// any index of a mask (maxLen) and far below overflow.
const posLimit = math.MaxInt >> 5

// offsets resolves a rule's per-batch query offsets: nil for 0, one value
// for every row, or one per row.
func (a *Attention) offsets(op string, off []int) ([]int, error) {
	out := make([]int, a.batch)
	switch len(off) {
	case 0:
	case 1:
		for b := range out {
			out[b] = off[0]
		}
	case a.batch:
		copy(out, off)
	default:
		return nil, &InputError{Op: op, Arg: "offsets", Index: -1, Value: int64(len(off)),
			Reason: fmt.Sprintf("%d offsets for batch %d: want 0, 1 or %d", len(off), a.batch, a.batch)}
	}
	for b, v := range off {
		if v < -maxLen || v > maxLen {
			return nil, &InputError{Op: op, Arg: "offsets", Index: b, Value: int64(v), Reason: "out of range"}
		}
	}
	return out, nil
}

func (a *Attention) with(r rule) *Attention {
	return a.derive(append(slices.Clip(a.rules), r))
}

// clearOutside clears the bits of row (n keys) outside [lo, hi).
func clearOutside(row []byte, n, lo, hi int) {
	lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
	if hi <= lo {
		setRange(row, 0, n, false)
		return
	}
	setRange(row, 0, lo, false)
	setRange(row, hi, n, false)
}

func offsetString(off []int) string {
	if !slices.ContainsFunc(off, func(v int) bool { return v != 0 }) {
		return ""
	}
	return fmt.Sprintf(" offsets %v", off)
}

// Causal returns a with causal attention applied: query i of batch row b may
// attend key j only when j ≤ i + offsets[b]. Offsets are nil (0 for every
// row: scaled_dot_product_attention's is_causal, the mask
// ones(Q,K).tril(0), aligned to the top left), one value for every row, or
// one per row. Hugging Face's causal_mask_function is kv_idx ≤ q_idx with
// queries at cache_position, so a KV cache of P tokens before Q new ones (K =
// P + Q) is offset P; FlashAttention aligns its causal mask to the bottom
// right, offset K − Q (seqlen_q = 2, seqlen_k = 5 keeps 1 1 1 1 0 / 1 1 1 1
// 1), and a negative offset leaves the first rows empty as FlashAttention
// does when Q > K. Wrong offsets are an *InputError.
func (a *Attention) Causal(offsets []int) (*Attention, error) {
	off, err := a.offsets("causal", offsets)
	if err != nil {
		return nil, err
	}
	return a.with(causalRule{off}), nil
}

type causalRule struct{ off []int }

func (r causalRule) apply(row []byte, x *rowCtx) {
	clearOutside(row, x.a.nk, 0, x.i+r.off[x.b]+1)
}

func (r causalRule) String() string { return "causal" + offsetString(r.off) }

// SlidingWindow returns a with sliding-window (local) attention applied:
// query i of batch row b, at position c = i + offsets[b], may attend key j
// only when c − left ≤ j ≤ c + right, both ends inclusive, as
// FlashAttention's window_size=(left, right); −1 leaves that side unbounded
// (FlashAttention's (-1, -1) is full attention). FlashAttention aligns the
// window to the bottom right, so its window_size over seqlen_q queries and
// seqlen_k keys is offset seqlen_k − seqlen_q here.
//
// Hugging Face's sliding_window=W for a causal model (sliding_window_overlay:
// kv_idx > q_idx − W, with causal_mask_function) keeps the W keys c−W+1..c:
// SlidingWindow(W−1, 0, offsets), or SlidingWindow(W−1, -1) after Causal.
// Its bidirectional sliding window (|q_idx − kv_idx| ≤ W) is
// SlidingWindow(W, W) or [Attention.SymmetricWindow](W). left or right below
// −1 is an *InputError.
func (a *Attention) SlidingWindow(left, right int, offsets []int) (*Attention, error) {
	for _, s := range []struct {
		name string
		v    int
	}{{"left", left}, {"right", right}} {
		if s.v < -1 {
			return nil, &InputError{Op: "sliding window", Arg: s.name, Index: -1, Value: int64(s.v),
				Reason: fmt.Sprintf("window size %d: want ≥ 0, or −1 for no bound", s.v)}
		}
	}
	off, err := a.offsets("sliding window", offsets)
	if err != nil {
		return nil, err
	}
	return a.with(windowRule{left, right, off}), nil
}

// SymmetricWindow is SlidingWindow(w, w, offsets): the keys at most w
// positions before or after the query's position.
func (a *Attention) SymmetricWindow(w int, offsets []int) (*Attention, error) {
	return a.SlidingWindow(w, w, offsets)
}

type windowRule struct {
	left, right int
	off         []int
}

func (r windowRule) apply(row []byte, x *rowCtx) {
	c := x.i + r.off[x.b]
	lo, hi := -posLimit, posLimit
	if r.left >= 0 {
		lo = c - min(r.left, posLimit)
	}
	if r.right >= 0 {
		hi = c + min(r.right, posLimit) + 1
	}
	clearOutside(row, x.a.nk, lo, hi)
}

func (r windowRule) String() string {
	return fmt.Sprintf("window(%d, %d)%s", r.left, r.right, offsetString(r.off))
}

// Chunked returns a with chunked attention applied (Llama 4's local layers):
// positions are cut into chunks of size tokens, and query i of batch row b, at
// position c = i + offsets[b], may attend key j only when both lie in the
// same chunk. As Hugging Face's chunked_overlay, chunks are counted from the
// first real key of each row (so left padding shifts them): with o that key's
// index, the condition is ⌊(c − o)/size⌋ = ⌊(j − o)/size⌋. Chunks do not
// restart at the sequences of a packed row. Hugging Face's
// chunked_causal_mask_function is Chunked then Causal. size < 1 is an
// *InputError.
func (a *Attention) Chunked(size int, offsets []int) (*Attention, error) {
	if size < 1 {
		return nil, &InputError{Op: "chunked", Arg: "size", Index: -1, Value: int64(size), Reason: "chunk size must be at least 1"}
	}
	off, err := a.offsets("chunked", offsets)
	if err != nil {
		return nil, err
	}
	return a.with(chunkRule{size, off}), nil
}

type chunkRule struct {
	size int
	off  []int
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func (r chunkRule) apply(row []byte, x *rowCtx) {
	c := floorDiv(x.i+r.off[x.b]-x.origin, r.size)
	lo := x.origin + c*r.size
	clearOutside(row, x.a.nk, lo, lo+r.size)
}

func (r chunkRule) String() string { return fmt.Sprintf("chunked(%d)%s", r.size, offsetString(r.off)) }

// Combine says how [Attention.TokenTypes] combines its rule with the mask.
type Combine int

const (
	// Intersect keeps a pair only when the mask and the token types allow it.
	Intersect Combine = iota
	// Union keeps a pair when the mask or the token types allow it.
	Union
)

func (c Combine) String() string {
	if c == Union {
		return "union"
	}
	return "intersect"
}

// TokenTypes returns a with a token-type rule: query i and key j of batch
// row b match when q[b,i] = k[b,j] ≥ 0 (a negative type matches nothing).
// With [Intersect] a pair is kept when it was kept and matches (attention
// only within a type); with [Union] when it was kept or matches, as Hugging
// Face's blockwise_overlay is or-ed onto a causal mask so that the tokens of
// one image (one group ID, text −1) attend each other in both directions.
// Padding stays padding either way. q is [B,Q] and k [B,K], row-major; k nil
// uses q for the keys (Q = K). Wrong lengths are an *InputError.
func (a *Attention) TokenTypes(q, k []int32, combine Combine) (*Attention, error) {
	if k == nil {
		k = q
		if a.nq != a.nk {
			return nil, &InputError{Op: "token types", Arg: "key types", Index: -1,
				Reason: fmt.Sprintf("nil with %d queries and %d keys: give key types", a.nq, a.nk)}
		}
	}
	for _, s := range []struct {
		name string
		v    []int32
		n    int
	}{{"query types", q, a.batch * a.nq}, {"key types", k, a.batch * a.nk}} {
		if len(s.v) != s.n {
			return nil, &InputError{Op: "token types", Arg: s.name, Index: -1, Value: int64(len(s.v)),
				Reason: fmt.Sprintf("%d types, want %d", len(s.v), s.n)}
		}
	}
	if combine != Intersect && combine != Union {
		return nil, &InputError{Op: "token types", Arg: "combine", Index: -1, Value: int64(combine), Reason: "neither Intersect nor Union"}
	}
	return a.with(typesRule{slices.Clone(q), slices.Clone(k), combine}), nil
}

type typesRule struct {
	q, k    []int32
	combine Combine
}

func (r typesRule) apply(row []byte, x *rowCtx) {
	nk := x.a.nk
	t := r.q[x.b*x.a.nq+x.i]
	keys := r.k[x.b*nk : (x.b+1)*nk]
	if r.combine == Union {
		if t < 0 {
			return
		}
		for j, v := range keys {
			if v == t {
				setBit(row, j, true)
			}
		}
		return
	}
	if t < 0 {
		setRange(row, 0, nk, false)
		return
	}
	for j, v := range keys {
		if v != t {
			setBit(row, j, false)
		}
	}
}

func (r typesRule) String() string { return "token types (" + r.combine.String() + ")" }

// KeyLengths returns a with the keys j ≥ lens[b] of each batch row b made
// padding: no query attends them, whatever the rules (the key side of
// FlashAttention's seqused_k, or of a KV cache filled to lens[b]). It changes
// the structure, so the structural forms see it, and the value no longer
// gives its builder's input back verbatim. lens needs one length per batch
// row, each in [0, K]; anything else is an *InputError.
func (a *Attention) KeyLengths(lens []int) (*Attention, error) {
	if len(lens) != a.batch {
		return nil, &InputError{Op: "key lengths", Arg: "lengths", Index: -1, Value: int64(len(lens)),
			Reason: fmt.Sprintf("%d lengths for batch %d", len(lens), a.batch)}
	}
	for b, l := range lens {
		if l < 0 || l > a.nk {
			return nil, &InputError{Op: "key lengths", Arg: "lengths", Index: b, Value: int64(l),
				Reason: fmt.Sprintf("outside [0, %d]", a.nk)}
		}
	}
	kseg := slices.Clone(a.kseg)
	for b, l := range lens {
		for j := l; j < a.nk; j++ {
			kseg[b*a.nk+j] = -1
		}
	}
	out := a.derive(slices.Clip(a.rules))
	out.kseg = kseg
	out.src = source{}
	return out, nil
}
