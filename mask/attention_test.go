package mask

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expected masks of these tests are written out by hand as rows of 0 and
// 1, or copied from the pictures in the documentation of Hugging Face's
// masking utilities and FlashAttention.

// attnRows returns the [Q,K] slice of batch row b (head h) of the pairwise
// mask of a as one "0101" string per query.
func attnRows(t *testing.T, a *Attention, b, h int) []string {
	t.Helper()
	m, err := a.Pairwise(0)
	require.NoError(t, err)
	_, heads, nq, nk := a.Shape()
	base := (b*max(heads, 1) + h) * nq * nk
	out := make([]string, nq)
	for i := range nq {
		var sb strings.Builder
		for j := range nk {
			if m.Get(base + i*nk + j) {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
		out[i] = sb.String()
	}
	return out
}

// maskOf builds a mask of the given shape from rows of 0 and 1.
func maskOf(t *testing.T, shape []int, rows ...string) *Mask {
	t.Helper()
	var keep []bool
	for _, r := range rows {
		for _, c := range r {
			switch c {
			case '0':
				keep = append(keep, false)
			case '1':
				keep = append(keep, true)
			}
		}
	}
	m, err := FromBools(shape, keep)
	require.NoError(t, err)
	return m
}

// must returns a function that fails t on an error and returns the value.
func must(t *testing.T) func(*Attention, error) *Attention {
	return func(a *Attention, err error) *Attention {
		t.Helper()
		require.NoError(t, err)
		return a
	}
}

func TestAttentionBuilders(t *testing.T) {
	t.Run("padding", func(t *testing.T) {
		a := must(t)(FromPadding(maskOf(t, []int{2, 3}, "110", "011")))
		b, h, q, k := a.Shape()
		assert.Equal(t, [4]int{2, 0, 3, 3}, [4]int{b, h, q, k})
		assert.Equal(t, FormPadding, a.Form())
		assert.Equal(t, []string{"110", "110", "000"}, attnRows(t, a, 0, 0))
		assert.Equal(t, []string{"000", "011", "011"}, attnRows(t, a, 1, 0))
	})
	t.Run("segment ids", func(t *testing.T) {
		// Non-contiguous segment 0 and padding.
		a := must(t)(FromSegmentIDs(1, []int32{0, 0, 1, 0, -1}))
		assert.Equal(t, []string{"11010", "11010", "00100", "11010", "00000"}, attnRows(t, a, 0, 0))
	})
	t.Run("qk segment ids", func(t *testing.T) {
		// Segment 2 has queries but no keys, segment 1 keys but no queries.
		a := must(t)(FromQKSegmentIDs(1, []int32{0, 2, 3}, []int32{3, 0, 1, -1}))
		assert.Equal(t, []string{"0100", "0000", "1000"}, attnRows(t, a, 0, 0))
	})
	t.Run("cu_seqlens", func(t *testing.T) {
		a := must(t)(FromCuSeqlens([]int32{0, 2, 5}))
		b, _, q, k := a.Shape()
		assert.Equal(t, [3]int{1, 5, 5}, [3]int{b, q, k})
		assert.Equal(t, []string{"11000", "11000", "00111", "00111", "00111"}, attnRows(t, a, 0, 0))
	})
	t.Run("qk cu_seqlens", func(t *testing.T) {
		// Sequence 0: 1 query, 2 keys; sequence 1: 0 queries, 1 key;
		// sequence 2: 2 queries, 2 keys.
		a := must(t)(FromQKCuSeqlens([]int32{0, 1, 1, 3}, []int32{0, 2, 3, 5}))
		assert.Equal(t, []string{"11000", "00011", "00011"}, attnRows(t, a, 0, 0))
	})
	t.Run("lengths", func(t *testing.T) {
		a := must(t)(FromLengths([]int{2, 0, 3}, 3))
		assert.Equal(t, []string{"110", "110", "000"}, attnRows(t, a, 0, 0))
		assert.Equal(t, []string{"000", "000", "000"}, attnRows(t, a, 1, 0))
		assert.Equal(t, []string{"111", "111", "111"}, attnRows(t, a, 2, 0))
	})
	t.Run("qk lengths", func(t *testing.T) {
		a := must(t)(FromQKLengths([]int{1, 2}, 2, []int{3, 1}, 4))
		assert.Equal(t, []string{"1110", "0000"}, attnRows(t, a, 0, 0))
		assert.Equal(t, []string{"1000", "1000"}, attnRows(t, a, 1, 0))
	})
	t.Run("pairwise with heads", func(t *testing.T) {
		m := maskOf(t, []int{1, 2, 2, 3}, "100 011", "111 000")
		a := must(t)(FromPairwise(m))
		b, h, q, k := a.Shape()
		assert.Equal(t, [4]int{1, 2, 2, 3}, [4]int{b, h, q, k})
		assert.Equal(t, []string{"100", "011"}, attnRows(t, a, 0, 0))
		assert.Equal(t, []string{"111", "000"}, attnRows(t, a, 0, 1))
		// The builder copies its input.
		m.Set(0, false)
		assert.Equal(t, []string{"100", "011"}, attnRows(t, a, 0, 0))
	})
	t.Run("random is seeded", func(t *testing.T) {
		a := must(t)(random(7, randomOptions{Batch: 3, Len: 20}))
		b := must(t)(random(7, randomOptions{Batch: 3, Len: 20}))
		c := must(t)(random(8, randomOptions{Batch: 3, Len: 20}))
		qa, _, err := a.SegmentIDs()
		require.NoError(t, err)
		qb, _, _ := b.SegmentIDs()
		qc, _, _ := c.SegmentIDs()
		assert.Equal(t, qa, qb)
		assert.NotEqual(t, qa, qc)
		n := must(t)(random(3, randomOptions{NoPadding: true, MaxSegments: 1}))
		p, err := n.Padding()
		require.NoError(t, err)
		assert.True(t, p.All())
	})
}

func TestAttentionInputErrors(t *testing.T) {
	full := must(t)(FromLengths([]int{3, 3}, 3))
	for _, tc := range []struct {
		name  string
		err   error
		arg   string
		index int
		value int64
	}{
		{"cu decreasing", errOf(FromCuSeqlens([]int32{0, 3, 2, 5})), "cu_seqlens", 2, 2},
		{"cu not from 0", errOf(FromCuSeqlens([]int32{1, 3})), "cu_seqlens", 0, 1},
		{"cu empty", errOf(FromCuSeqlens(nil)), "cu_seqlens", -1, 0},
		{"cu_k decreasing", errOf(FromQKCuSeqlens([]int32{0, 1, 2}, []int32{0, 4, 3})), "cu_seqlens_k", 2, 3},
		{"cu lengths differ", errOf(FromQKCuSeqlens([]int32{0, 1, 2}, []int32{0, 4})), "cu_seqlens_k", -1, 2},
		{"length above n", errOf(FromLengths([]int{2, 5}, 4)), "lengths", 1, 5},
		{"negative length", errOf(FromLengths([]int{-1}, 4)), "lengths", 0, -1},
		{"key length above nk", errOf(FromQKLengths([]int{1}, 2, []int{4}, 3)), "key lengths", 0, 4},
		{"key lengths count", errOf(FromQKLengths([]int{1, 1}, 2, []int{1}, 3)), "key lengths", -1, 1},
		{"segment id below -1", errOf(FromSegmentIDs(2, []int32{0, 0, -2, 1})), "ids", 2, -2},
		{"key segment id below -1", errOf(FromQKSegmentIDs(1, []int32{0}, []int32{0, -3})), "key ids", 1, -3},
		{"batch 0", errOf(FromSegmentIDs(0, nil)), "batch", -1, 0},
		{"ids not a multiple of batch", errOf(FromSegmentIDs(2, []int32{0, 0, 0})), "ids", -1, 3},
		{"pairwise rank", errOf(FromPairwise(maskOf(t, []int{2, 2}, "1111"))), "mask", -1, 2},
		{"pairwise no heads", errOf(FromPairwise(maskOf(t, []int{1, 0, 2, 2}))), "mask", -1, 0},
		{"nil pairwise", errOf(FromPairwise(nil)), "mask", -1, 0},
		{"nil padding", errOf(FromPadding(nil)), "padding", -1, 0},
		{"padding rank", errOf(FromPadding(maskOf(t, []int{1, 1, 2}, "11"))), "padding", -1, 3},
		{"offsets count", errOf(full.Causal([]int{0, 1, 2})), "offsets", -1, 3},
		{"offset range", errOf(full.Causal([]int{0, math.MaxInt})), "offsets", 1, math.MaxInt},
		{"window left", errOf(full.SlidingWindow(-2, 0, nil)), "left", -1, -2},
		{"window right", errOf(full.SlidingWindow(1, -5, nil)), "right", -1, -5},
		{"chunk size", errOf(full.Chunked(0, nil)), "size", -1, 0},
		{"types length", errOf(full.TokenTypes([]int32{0, 1}, nil, Union)), "query types", -1, 2},
		{"key types length", errOf(full.TokenTypes(make([]int32, 6), make([]int32, 5), Union)), "key types", -1, 5},
		{"combine", errOf(full.TokenTypes(make([]int32, 6), nil, Combine(7))), "combine", -1, 7},
		{"key lengths above K", errOf(full.KeyLengths([]int{1, 4})), "lengths", 1, 4},
		{"key lengths count", errOf(full.KeyLengths([]int{1})), "lengths", -1, 1},
		{"random negative", errOf(random(1, randomOptions{Len: -1})), "Len", -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			assert.True(t, errors.Is(tc.err, ErrAttentionInput), "%v", tc.err)
			assert.False(t, errors.Is(tc.err, ErrNotRepresentable))
			var ie *InputError
			require.True(t, errors.As(tc.err, &ie))
			assert.Equal(t, tc.arg, ie.Arg)
			assert.Equal(t, tc.index, ie.Index)
			if tc.index >= 0 || tc.value != 0 {
				assert.Equal(t, tc.value, ie.Value)
			}
			assert.Contains(t, ie.Error(), tc.arg)
		})
	}
	// The message names argument, index and value.
	err := errOf(FromCuSeqlens([]int32{0, 3, 2}))
	assert.EqualError(t, err, "mask: from cu_seqlens: cu_seqlens[2] = 2: below cu_seqlens[1] = 3: cumulative lengths never decrease")
	// Output arguments.
	_, err = full.Pairwise(-1)
	assert.ErrorIs(t, err, ErrAttentionInput)
	h := must(t)(FromPairwise(maskOf(t, []int{1, 2, 1, 1}, "11")))
	_, err = h.Pairwise(3)
	assert.ErrorIs(t, err, ErrAttentionInput)
	_, err = full.Visualize(VisualizeOptions{Batch: 2})
	assert.ErrorIs(t, err, ErrAttentionInput)
	_, err = full.Visualize(VisualizeOptions{Head: 1})
	assert.ErrorIs(t, err, ErrAttentionInput)
	_, err = full.Visualize(VisualizeOptions{MaxWidth: -1})
	assert.ErrorIs(t, err, ErrAttentionInput)
}

func errOf(_ *Attention, err error) error { return err }

// TestHuggingFacePictures checks the masks drawn in the docstring of Hugging
// Face's sdpa_mask (5 queries and keys): causal, sliding window 3, chunked 3.
func TestHuggingFacePictures(t *testing.T) {
	full := must(t)(FromLengths([]int{5}, 5))
	causal := must(t)(full.Causal(nil))
	assert.Equal(t, []string{"10000", "11000", "11100", "11110", "11111"}, attnRows(t, causal, 0, 0))

	// sliding_window_causal_mask_function(3): kv_idx > q_idx - 3 and causal.
	window := []string{"10000", "11000", "11100", "01110", "00111"}
	w1 := must(t)(full.SlidingWindow(2, 0, nil))
	assert.Equal(t, window, attnRows(t, w1, 0, 0))
	w2 := must(t)(causal.SlidingWindow(2, -1, nil))
	assert.Equal(t, window, attnRows(t, w2, 0, 0))

	// chunked_causal_mask_function(3, left_padding 0).
	ch := must(t)(full.Chunked(3, nil))
	ch = must(t)(ch.Causal(nil))
	assert.Equal(t, []string{"10000", "11000", "11100", "00010", "00011"}, attnRows(t, ch, 0, 0))

	// sliding_window_bidirectional_overlay(1): |q_idx - kv_idx| <= 1.
	bi := must(t)(full.SymmetricWindow(1, nil))
	assert.Equal(t, []string{"11000", "11100", "01110", "00111", "00011"}, attnRows(t, bi, 0, 0))
}

// TestFlashAttentionPictures checks the bottom-right causal masks drawn in
// FlashAttention's docstrings and its window rule [i + sk - sq - left, i +
// sk - sq + right].
func TestFlashAttentionPictures(t *testing.T) {
	// seqlen_q = 2, seqlen_k = 5: offset 3.
	a := must(t)(FromQKLengths([]int{2}, 2, []int{5}, 5))
	c := must(t)(a.Causal([]int{3}))
	assert.Equal(t, []string{"11110", "11111"}, attnRows(t, c, 0, 0))
	// seqlen_q = 5, seqlen_k = 2: offset -3, the first three rows empty.
	a = must(t)(FromQKLengths([]int{5}, 5, []int{2}, 2))
	c = must(t)(a.Causal([]int{-3}))
	assert.Equal(t, []string{"00", "00", "00", "10", "11"}, attnRows(t, c, 0, 0))
	// window_size = (1, 2) with seqlen_q = 3, seqlen_k = 6: keys [i+2, i+5].
	a = must(t)(FromQKLengths([]int{3}, 3, []int{6}, 6))
	w := must(t)(a.SlidingWindow(1, 2, []int{3}))
	assert.Equal(t, []string{"001111", "000111", "000011"}, attnRows(t, w, 0, 0))
	// window_size = (-1, 0) is causal.
	w = must(t)(a.SlidingWindow(-1, 0, []int{3}))
	c = must(t)(a.Causal([]int{3}))
	assert.Equal(t, attnRows(t, c, 0, 0), attnRows(t, w, 0, 0))
}

// TestPyTorchCausalVariants checks the (3,4) examples of PyTorch's
// CausalVariant: UPPER_LEFT is offset 0, LOWER_RIGHT offset K − Q = 1.
func TestPyTorchCausalVariants(t *testing.T) {
	a := must(t)(FromQKLengths([]int{3}, 3, []int{4}, 4))
	ul := must(t)(a.Causal(nil))
	assert.Equal(t, []string{"1000", "1100", "1110"}, attnRows(t, ul, 0, 0))
	lr := must(t)(a.Causal([]int{1}))
	assert.Equal(t, []string{"1100", "1110", "1111"}, attnRows(t, lr, 0, 0))
}

func TestCausalOffsets(t *testing.T) {
	// Two rows of 3 queries over 5 keys (a KV cache of 2): one offset for
	// all, then one per row.
	a := must(t)(FromQKLengths([]int{3, 3}, 3, []int{5, 5}, 5))
	c := must(t)(a.Causal([]int{2}))
	for b := range 2 {
		assert.Equal(t, []string{"11100", "11110", "11111"}, attnRows(t, c, b, 0))
	}
	c = must(t)(a.Causal([]int{0, 1}))
	assert.Equal(t, []string{"10000", "11000", "11100"}, attnRows(t, c, 0, 0))
	assert.Equal(t, []string{"11000", "11100", "11110"}, attnRows(t, c, 1, 0))
	// An offset that reaches past the keys keeps them all.
	c = must(t)(a.Causal([]int{10}))
	assert.Equal(t, []string{"11111", "11111", "11111"}, attnRows(t, c, 0, 0))
	assert.Equal(t, "attention B=2 Q=3 K=5 from lengths, causal offsets [10 10]", c.String())
	// The receiver is unchanged.
	assert.Equal(t, []string{"11111", "11111", "11111"}, attnRows(t, a, 0, 0))
	assert.Equal(t, "attention B=2 Q=3 K=5 from lengths", a.String())
}

func TestChunkedLeftPadding(t *testing.T) {
	// Two padding tokens, then five real ones: chunks of 2 start at the
	// first real key (index 2): {2,3}, {4,5}, {6}.
	a := must(t)(FromPadding(maskOf(t, []int{1, 7}, "0011111")))
	c := must(t)(a.Chunked(2, nil))
	c = must(t)(c.Causal(nil))
	assert.Equal(t, []string{
		"0000000",
		"0000000",
		"0010000",
		"0011000",
		"0000100",
		"0000110",
		"0000001",
	}, attnRows(t, c, 0, 0))
	// With a KV cache: 2 queries at positions 5 and 6 (offset 5).
	kv := must(t)(FromQKLengths([]int{2}, 2, []int{7}, 7))
	c = must(t)(kv.Chunked(3, []int{5}))
	assert.Equal(t, []string{"0001110", "0000001"}, attnRows(t, c, 0, 0))
}

func TestTokenTypes(t *testing.T) {
	full := must(t)(FromLengths([]int{6}, 6))
	causal := must(t)(full.Causal(nil))
	// Text −1, image 0 at tokens 1-2, image 1 at tokens 4-5 (Hugging Face's
	// blockwise_overlay or-ed onto causal): each image attends itself both
	// ways.
	groups := []int32{-1, 0, 0, -1, 1, 1}
	u := must(t)(causal.TokenTypes(groups, nil, Union))
	assert.Equal(t, []string{
		"100000",
		"111000",
		"111000",
		"111100",
		"111111",
		"111111",
	}, attnRows(t, u, 0, 0))
	// In the other order the causal rule cuts the image blocks again.
	u2 := must(t)(full.TokenTypes(groups, nil, Union))
	u2 = must(t)(u2.Causal(nil))
	assert.Equal(t, attnRows(t, causal, 0, 0), attnRows(t, u2, 0, 0))
	// Intersect: attention only within a type; a negative type sees nothing.
	types := []int32{0, 0, 1, 1, 0, -1}
	x := must(t)(full.TokenTypes(types, nil, Intersect))
	assert.Equal(t, []string{
		"110010",
		"110010",
		"001100",
		"001100",
		"110010",
		"000000",
	}, attnRows(t, x, 0, 0))
	// Separate query and key types (Q ≠ K).
	qk := must(t)(FromQKLengths([]int{2}, 2, []int{3}, 3))
	x = must(t)(qk.TokenTypes([]int32{1, 2}, []int32{2, 1, 1}, Intersect))
	assert.Equal(t, []string{"011", "100"}, attnRows(t, x, 0, 0))
	_, err := qk.TokenTypes([]int32{1, 2}, nil, Intersect)
	assert.ErrorIs(t, err, ErrAttentionInput)
	// Padding stays padding under a union.
	p := must(t)(FromPadding(maskOf(t, []int{1, 3}, "110")))
	u = must(t)(p.TokenTypes([]int32{0, 0, 0}, nil, Union))
	assert.Equal(t, []string{"110", "110", "000"}, attnRows(t, u, 0, 0))
}

func TestKeyLengths(t *testing.T) {
	a := must(t)(FromLengths([]int{3, 2}, 3))
	k := must(t)(a.KeyLengths([]int{2, 3}))
	assert.Equal(t, []string{"110", "110", "110"}, attnRows(t, k, 0, 0))
	assert.Equal(t, []string{"110", "110", "000"}, attnRows(t, k, 1, 0))
	// The structure changed: lengths are now (3, 2) and (2, 2).
	q, kl, err := k.Lengths()
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, q)
	assert.Equal(t, []int{2, 2}, kl)
	// Queries and keys now differ, so there is no padding mask.
	_, err = k.Padding()
	assert.ErrorIs(t, err, ErrNotRepresentable)
	// The receiver is unchanged.
	p, err := a.Padding()
	require.NoError(t, err)
	assert.Equal(t, "[[1 1 1] [1 1 0]]", p.String())
	// Rules applied before cannot bring the masked keys back.
	full := must(t)(FromLengths([]int{3}, 3))
	u := must(t)(full.TokenTypes([]int32{0, 0, 0}, nil, Union))
	u = must(t)(u.KeyLengths([]int{1}))
	assert.Equal(t, []string{"100", "100", "100"}, attnRows(t, u, 0, 0))
	// On a pairwise mask.
	pw := must(t)(FromPairwise(maskOf(t, []int{1, 2, 3}, "111", "011")))
	pk := must(t)(pw.KeyLengths([]int{2}))
	assert.Equal(t, []string{"110", "010"}, attnRows(t, pk, 0, 0))
	q, kl, err = pk.TokenCounts()
	require.NoError(t, err)
	assert.Equal(t, []int{2}, q)
	assert.Equal(t, []int{2}, kl)
}

func TestBias(t *testing.T) {
	a := must(t)(FromPadding(maskOf(t, []int{1, 3}, "110")))
	a = must(t)(a.Causal(nil))
	inf := float32(math.Inf(-1))
	f32, shape, err := a.BiasFloat32(BiasOptions{})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3, 3}, shape)
	assert.Equal(t, []float32{0, inf, inf, 0, 0, inf, inf, inf, inf}, f32)
	f32, _, err = a.BiasFloat32(BiasOptions{Finite: true})
	require.NoError(t, err)
	m := float32(-3.4028234663852886e38)
	assert.Equal(t, []float32{0, m, m, 0, 0, m, m, m, m}, f32)

	// IEEE binary16: −Inf is sign 1, exponent 11111, mantissa 0 = 0xFC00; the
	// most negative finite, −65504, is 0xFBFF.
	h, shape, err := a.BiasFloat16(BiasOptions{Heads: 2})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3, 3}, shape)
	row := []uint16{0x0000, 0xFC00, 0xFC00, 0x0000, 0x0000, 0xFC00, 0xFC00, 0xFC00, 0xFC00}
	assert.Equal(t, append(append([]uint16{}, row...), row...), h)
	h, _, err = a.BiasFloat16(BiasOptions{Finite: true})
	require.NoError(t, err)
	assert.Equal(t, []uint16{0, 0xFBFF, 0xFBFF, 0, 0, 0xFBFF, 0xFBFF, 0xFBFF, 0xFBFF}, h)

	// bfloat16: the top half of float32, −Inf 0xFF80, −max finite 0xFF7F.
	bf, _, err := a.BiasBFloat16(BiasOptions{})
	require.NoError(t, err)
	assert.Equal(t, []uint16{0, 0xFF80, 0xFF80, 0, 0, 0xFF80, 0xFF80, 0xFF80, 0xFF80}, bf)
	bf, _, err = a.BiasBFloat16(BiasOptions{Finite: true})
	require.NoError(t, err)
	assert.Equal(t, []uint16{0, 0xFF7F, 0xFF7F, 0, 0, 0xFF7F, 0xFF7F, 0xFF7F, 0xFF7F}, bf)

	_, _, err = a.BiasFloat16(BiasOptions{Heads: -1})
	assert.ErrorIs(t, err, ErrAttentionInput)
}

func TestPairwiseHeads(t *testing.T) {
	a := must(t)(FromCuSeqlens([]int32{0, 1, 3}))
	m, err := a.Pairwise(1)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 1, 3, 3}, m.Shape())
	assert.Equal(t, "[[[[1 0 0] [0 1 1] [0 1 1]]]]", m.String())
	m, err = a.Pairwise(2)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3, 3}, m.Shape())
	assert.Equal(t, "[[[[1 0 0] [0 1 1] [0 1 1]] [[1 0 0] [0 1 1] [0 1 1]]]]", m.String())
	// A per-head mask keeps its heads, and rules act on each.
	h := must(t)(FromPairwise(maskOf(t, []int{1, 2, 2, 2}, "11 11", "01 11")))
	c := must(t)(h.Causal(nil))
	assert.Equal(t, []string{"10", "11"}, attnRows(t, c, 0, 0))
	assert.Equal(t, []string{"00", "11"}, attnRows(t, c, 0, 1))
	m, err = c.Pairwise(2)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 2, 2}, m.Shape())
}

func TestPositionIDs(t *testing.T) {
	// Packed sequences of 2 and 3 tokens restart at 0.
	a := must(t)(FromCuSeqlens([]int32{0, 2, 5}))
	q, k, err := a.PositionIDs(-1)
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 1, 0, 1, 2}, q)
	assert.Equal(t, q, k)
	// Left padding with pad 1: attention_mask [0 0 1 1 1] gives cumsum − 1 =
	// [-1 -1 0 1 2], filled with 1 at padding.
	p := must(t)(FromPadding(maskOf(t, []int{2, 5}, "00111", "11100")))
	q, _, err = p.PositionIDs(1)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 1, 0, 1, 2, 0, 1, 2, 1, 1}, q)
	// Separate query and key sides; a non-contiguous segment counts its own.
	s := must(t)(FromQKSegmentIDs(1, []int32{0, 1, 0}, []int32{1, 1, -1, 0}))
	q, k, err = s.PositionIDs(-1)
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 0, 1}, q)
	assert.Equal(t, []int32{0, 1, -1, 0}, k)
}

func TestStructuralOutputs(t *testing.T) {
	// Padding [[1 1 0] [0 1 1]]: unpadded, the rows are sequences of 2 and 2.
	a := must(t)(FromPadding(maskOf(t, []int{2, 3}, "110", "011")))
	q, k, err := a.CuSeqlens()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 2, 4}, q)
	assert.Equal(t, []int32{0, 2, 4}, k)
	qs, ks, err := a.SegmentIDs()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 0, -1, -1, 0, 0}, qs)
	assert.Equal(t, qs, ks)
	qc, kc, err := a.TokenCounts()
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, qc)
	assert.Equal(t, []int{2, 2}, kc)
	// Row 1 is left-padded: no lengths form.
	_, _, err = a.Lengths()
	var ce *ConversionError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, ConversionError{From: FormPadding, To: FormLengths, Batch: 1, Index: 1,
		Reason: "query 1 (segment 0) follows padding or another sequence: not one right-padded sequence"}, *ce)

	// Lengths (2 queries, 3 keys) and (1, 0) as cu_seqlens: a sequence with
	// no keys keeps its place.
	l := must(t)(FromQKLengths([]int{2, 1}, 2, []int{3, 0}, 4))
	q, k, err = l.CuSeqlens()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 2, 3}, q)
	assert.Equal(t, []int32{0, 3, 3}, k)

	// cu_seqlens with an empty key side and an empty query side.
	cu := must(t)(FromQKCuSeqlens([]int32{0, 2, 2}, []int32{0, 0, 3}))
	qs, ks, err = cu.SegmentIDs()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 0}, qs)
	assert.Equal(t, []int32{1, 1, 1}, ks)
	s := must(t)(FromQKSegmentIDs(1, qs, ks))
	q, k, err = s.CuSeqlens()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 2, 2}, q)
	assert.Equal(t, []int32{0, 0, 3}, k)
}

func TestConversionErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a      func(t *testing.T) *Attention
		to     Form
		batch  int
		index  int
		reason string
	}{
		{"causal pairwise has no segments", func(t *testing.T) *Attention {
			return must(t)(FromPairwise(maskOf(t, []int{1, 3, 3}, "100", "110", "111")))
		}, FormSegments, 0, 1, "query 1 sees key 0, as the queries of segment 0 do, but not the same keys: not block-diagonal"},
		{"heads differ", func(t *testing.T) *Attention {
			return must(t)(FromPairwise(maskOf(t, []int{2, 2, 1, 2}, "11 11", "11 10")))
		}, FormSegments, 1, 0, "head 1 differs from head 0 at query 0, key 1: the heads have no common structure"},
		{"two sequences have no padding mask", func(t *testing.T) *Attention {
			return must(t)(FromCuSeqlens([]int32{0, 1, 3}))
		}, FormPadding, 0, 1, "a second sequence (segment 1 after 0): a padding mask holds one sequence per row"},
		{"queries and keys differ", func(t *testing.T) *Attention {
			return must(t)(FromQKLengths([]int{1}, 2, []int{2}, 2))
		}, FormPadding, 0, 1, "query segment -1 and key segment 0: a padding mask gives a token one role"},
		{"Q ≠ K has no padding mask", func(t *testing.T) *Attention {
			return must(t)(FromQKLengths([]int{1}, 1, []int{2}, 2))
		}, FormPadding, -1, -1, "1 queries and 2 keys: a padding mask has one length"},
		{"split sequence has no cu_seqlens", func(t *testing.T) *Attention {
			return must(t)(FromSegmentIDs(1, []int32{0, 1, 0}))
		}, FormCuSeqlens, 0, 2, "query 2 is in segment 0, which ended before it: not contiguous"},
		{"order differs between sides", func(t *testing.T) *Attention {
			return must(t)(FromQKSegmentIDs(1, []int32{0, 1}, []int32{1, 0}))
		}, FormCuSeqlens, 0, 0, "segment 0 comes before segment 1 among the queries but not among the keys"},
		{"different sequences on the two sides", func(t *testing.T) *Attention {
			return must(t)(FromQKSegmentIDs(1, []int32{0, -1}, []int32{1, -1}))
		}, FormLengths, 0, 0, "the queries are segment 0 and the keys segment 1: they do not attend each other"},
		{"pairwise error names the requested form", func(t *testing.T) *Attention {
			return must(t)(FromPairwise(maskOf(t, []int{1, 2, 2}, "10", "11")))
		}, FormCuSeqlens, 0, 1, "query 1 sees key 0, as the queries of segment 0 do, but not the same keys: not block-diagonal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.a(t)
			var err error
			switch tc.to {
			case FormSegments:
				_, _, err = a.SegmentIDs()
			case FormPadding:
				_, err = a.Padding()
			case FormLengths:
				_, _, err = a.Lengths()
			case FormCuSeqlens:
				_, _, err = a.CuSeqlens()
			}
			require.ErrorIs(t, err, ErrNotRepresentable)
			assert.NotErrorIs(t, err, ErrAttentionInput)
			var ce *ConversionError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, ConversionError{From: a.Form(), To: tc.to, Batch: tc.batch, Index: tc.index, Reason: tc.reason}, *ce)
		})
	}
}

func TestSegmentsFromPairwise(t *testing.T) {
	// Blocks out of order, a padding query (row 2) and a key nobody sees
	// (key 4): canonical IDs by first query.
	m := maskOf(t, []int{1, 5, 5},
		"00011",
		"11100",
		"00000",
		"00011",
		"11100",
	)
	a := must(t)(FromPairwise(m))
	q, k, err := a.SegmentIDs()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 1, -1, 0, 1}, q)
	assert.Equal(t, []int32{1, 1, 1, 0, 0}, k)
	_, _, err = a.CuSeqlens()
	assert.ErrorIs(t, err, ErrNotRepresentable) // key order 1, 0 against query order 0, 1
	qc, kc, err := a.TokenCounts()
	require.NoError(t, err)
	assert.Equal(t, []int{4}, qc)
	assert.Equal(t, []int{5}, kc)
	// Token counts need no block structure.
	c := must(t)(FromPairwise(maskOf(t, []int{1, 3, 3}, "000", "110", "111")))
	qc, kc, err = c.TokenCounts()
	require.NoError(t, err)
	assert.Equal(t, []int{2}, qc)
	assert.Equal(t, []int{3}, kc)
}

func TestFormString(t *testing.T) {
	assert.Equal(t, "pairwise", FormPairwise.String())
	assert.Equal(t, "cu_seqlens", FormCuSeqlens.String())
	assert.Equal(t, "Form(9)", Form(9).String())
	assert.Equal(t, "union", Union.String())
	assert.Equal(t, "intersect", Intersect.String())
	a := must(t)(FromPairwise(maskOf(t, []int{1, 2, 1, 3}, "111 111")))
	a = must(t)(a.SlidingWindow(1, -1, nil))
	a = must(t)(a.Chunked(4, []int{1}))
	a = must(t)(a.TokenTypes([]int32{0}, []int32{0, 0, 0}, Union))
	assert.Equal(t, "attention B=1 H=2 Q=1 K=3 from pairwise, window(1, -1), chunked(4) offsets [1], token types (union)", a.String())
}

func TestZeroAttention(t *testing.T) {
	var a Attention
	b, h, q, k := a.Shape()
	assert.Equal(t, [4]int{0, 0, 0, 0}, [4]int{b, h, q, k})
	m, err := a.Pairwise(0)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 0}, m.Shape())
	p, err := a.Padding()
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0}, p.Shape())
	cu, _, err := a.CuSeqlens()
	require.NoError(t, err)
	assert.Equal(t, []int32{0}, cu)
	c, err := a.Causal(nil)
	require.NoError(t, err)
	_, err = c.Pairwise(2)
	require.NoError(t, err)
	assert.Equal(t, "attention B=0 Q=0 K=0 from pairwise", a.String())
}
