package gguf

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tensorcast-go/tensorcast/dtype"
)

// Splitting blocks into codes, scales and mins, and laying them out again:
// the view of a block tensor as one code per element and, per sub-block
// (the elements sharing one scale), the decoded scale and the decoded
// offset, such that every element's value is
//
//	code·scale − min
//
// in float32, exactly as ggml's dequantizer computes it (the product
// rounded first). Scales and mins are the float32 products ggml forms from
// a super-block's float16 scale and a sub-block's integer scale (d·sc,
// dmin·m), or the float16 scales of the 32-element types widened; min is 0
// for the types without one, and −m for Q4_1 and Q5_1 (which add m).
//
// Codes are the element codes in the two's complement of their width for
// the signed types (Q3_K: 3 bits, q in −4..3; Q5_0: 5 bits, −16..15; Q6_K: 6
// bits, −32..31; Q8_K: 8 bits), the stored code for the unsigned ones (Q2_K
// 0..3, Q4_1 and Q4_K 0..15, Q5_1 and Q5_K 0..31), the table index for
// IQ4_NL and IQ4_XS (value = scale·IQ4NLValues[index]) and for the IQ grid
// types IQ1_S … IQ3_S (value = scale·IQValues(t)[index]: the grid's level,
// signed or shifted; a block's levels must be points of its grid).

// blockView is a block type in the views of UnpackBlocks and SplitBlocks:
// the elements sharing one scale, the width of a code, whether codes are
// two's complement and sub-blocks have a min, and which view takes it.
type blockView struct {
	sub, bits   int
	signed, min bool
	// unpack and pack lay one block out as codes, scales and mins and
	// back, for UnpackBlocks and PackBlocks (nil for SplitBlocks' types).
	unpack func(x []byte, q []int, s, m []float32)
	pack   func(y []byte, q []int, s, m []float32) string
}

// views lists the block types with a view.
var views = map[Type]blockView{
	TypeQ4_0:    {sub: 32, bits: 4, signed: true},
	TypeQ8_0:    {sub: 32, bits: 8, signed: true},
	TypeMXFP4:   {sub: 32, bits: 4},
	TypeNVFP4:   {sub: 16, bits: 4},
	TypeQ4_1:    {sub: 32, bits: 4, min: true, unpack: unpackQ4_1, pack: packQ4_1},
	TypeQ5_0:    {sub: 32, bits: 5, signed: true, unpack: unpackQ5_0, pack: packQ5_0},
	TypeQ5_1:    {sub: 32, bits: 5, min: true, unpack: unpackQ5_1, pack: packQ5_1},
	TypeIQ4_NL:  {sub: 32, bits: 4, unpack: unpackIQ4_NL, pack: packIQ4_NL},
	TypeQ2_K:    {sub: 16, bits: 2, min: true, unpack: unpackQ2_K, pack: packQ2_K},
	TypeQ3_K:    {sub: 16, bits: 3, signed: true, unpack: unpackQ3_K, pack: packQ3_K},
	TypeQ4_K:    {sub: 32, bits: 4, min: true, unpack: unpackQ4_K, pack: packQ4_K},
	TypeQ5_K:    {sub: 32, bits: 5, min: true, unpack: unpackQ5_K, pack: packQ5_K},
	TypeQ6_K:    {sub: 16, bits: 6, signed: true, unpack: unpackQ6_K, pack: packQ6_K},
	TypeQ8_K:    {sub: 256, bits: 8, signed: true, unpack: unpackQ8_K, pack: packQ8_K},
	TypeIQ4_XS:  {sub: 32, bits: 4, unpack: unpackIQ4_XS, pack: packIQ4_XS},
	TypeIQ2_XXS: iqView(TypeIQ2_XXS), TypeIQ2_XS: iqView(TypeIQ2_XS), TypeIQ2_S: iqView(TypeIQ2_S),
	TypeIQ3_XXS: iqView(TypeIQ3_XXS), TypeIQ3_S: iqView(TypeIQ3_S), TypeIQ1_S: iqView(TypeIQ1_S),
	TypeIQ1_M: iqView(TypeIQ1_M),
	TypeTQ1_0: {sub: 256, bits: 2},
	TypeTQ2_0: {sub: 256, bits: 2},
	TypeQ1_0:  {sub: 128, bits: 1},
	TypeQ2_0:  {sub: 64, bits: 2},
}

// iqView is the view of an IQ grid type: its kernels' (kernels.IQView).
func iqView(t Type) blockView {
	v := codecs[t].View
	return blockView{sub: v.Sub, bits: bits.Len(uint(len(v.Values) - 1)),
		unpack: func(x []byte, q []int, s, _ []float32) { v.Unpack(x, q, s) },
		pack:   func(y []byte, q []int, s, _ []float32) string { return v.Pack(y, q, s) }}
}

// IQValues returns the value of each code of the IQ grid type t in the view
// of UnpackBlocks (the sub-block scale times it is the element), ascending,
// and nil for the other types: the grid's levels negated and as they are,
// or for IQ1 each level shifted by −1/8 and by +1/8.
func IQValues(t Type) []float32 {
	if c, ok := codecs[t]; ok && c.View != nil {
		return append([]float32(nil), c.View.Values...)
	}
	return nil
}

// SubBlockSize returns the number of elements sharing one scale in blocks
// of type t (16 for Q2_K, Q3_K, Q6_K and NVFP4, 256 for Q8_K, TQ1_0 and
// TQ2_0, 128 for Q1_0, 64 for Q2_0, 32 for the other types of
// UnpackBlocks and SplitBlocks), or 0 for a type without one.
func SubBlockSize(t Type) int { return views[t].sub }

// HasMin reports whether blocks of type t store an offset per sub-block
// (Q2_K, Q4_K, Q5_K, Q4_1, Q5_1).
func HasMin(t Type) bool { return views[t].min }

// CodeBits returns the width of an element code of type t in the view of
// UnpackBlocks or SplitBlocks (1 for Q1_0; 2 for Q2_K, Q2_0, TQ1_0 and
// TQ2_0; 3 for Q3_K; 5 for Q5_0, Q5_1 and Q5_K; 6 for Q6_K; 8 for Q8_K and
// Q8_0; 4 for the others), or 0 for a type without one.
func CodeBits(t Type) int { return views[t].bits }

// SignedCodes reports whether the codes of type t are two's complement
// integers (Q3_K, Q5_0, Q6_K, Q8_K, Q4_0, Q8_0).
func SignedCodes(t Type) bool { return views[t].signed }

// unpackable lists the types UnpackBlocks and PackBlocks take.
func unpackable(t Type) bool { return views[t].unpack != nil }

// checkUnpack panics unless the lengths fit n elements of type t.
func checkUnpack(fn string, t Type, codes []uint8, scales, mins []float32, nbytes int) {
	if !unpackable(t) {
		panic(fmt.Sprintf("gguf: %s: no codec for %v", fn, t))
	}
	checkBlocks(fn, len(codes), nbytes, t.BlockSize(), t.BlockBytes())
	ns := len(codes) / SubBlockSize(t)
	if len(scales) != ns || (HasMin(t) && len(mins) != ns) {
		panic(fmt.Sprintf("gguf: %s: %d elements of %v need %d scales (and mins), got %d and %d",
			fn, len(codes), t, ns, len(scales), len(mins)))
	}
}

// UnpackBlocks splits blocks of type t (Q2_K..Q6_K, Q8_K, IQ4_XS, IQ4_NL,
// Q4_1, Q5_0, Q5_1) into codes (one per element, in row order), scales and,
// for the types with one, mins (one each per sub-block), as described
// above; code·scale − min in float32 is the value ggml decodes. mins may be
// nil for a type without mins. The lengths must fit len(codes) elements;
// it panics otherwise.
func UnpackBlocks(t Type, codes []uint8, scales, mins []float32, src []byte) {
	checkUnpack("UnpackBlocks", t, codes, scales, mins, len(src))
	bs, bb, sub := t.BlockSize(), t.BlockBytes(), SubBlockSize(t)
	ns := bs / sub
	unpack := views[t].unpack
	var q [256]int
	for b := range len(codes) / bs {
		x := src[b*bb : (b+1)*bb]
		s := scales[b*ns : (b+1)*ns]
		var m []float32
		if HasMin(t) {
			m = mins[b*ns : (b+1)*ns]
		}
		unpack(x, q[:bs], s, m)
		mask := 1<<CodeBits(t) - 1
		for i, c := range q[:bs] {
			codes[b*bs+i] = uint8(c & mask)
		}
	}
}

// PackError reports codes, scales or mins that blocks of a type cannot
// hold: a code out of range, a float16 scale that is not one, or sub-block
// scales (or mins) that are not products D·l of one float16 D per
// super-block and integers l in the type's range.
type PackError struct {
	Type  Type
	Block int // the block
	Msg   string
}

func (e *PackError) Error() string {
	return fmt.Sprintf("gguf: packing %v: block %d: %s", e.Type, e.Block, e.Msg)
}

// PackBlocks is the inverse of UnpackBlocks: it lays codes, scales and mins
// out as blocks of type t in dst, and writes no block whose decoded values
// would differ from code·scale − min. The super-block scales of the
// K-quants and IQ4_XS are recovered from the sub-block scales: any float16
// D and integers l in range with float32(D·l) equal to each scale (the
// product of a float16 and an integer of at most 8 bits is exact in
// float32, so UnpackBlocks' output always has one). Values that do not fit
// give a *PackError; lengths that do not fit panic.
func PackBlocks(t Type, dst []byte, codes []uint8, scales, mins []float32) error {
	checkUnpack("PackBlocks", t, codes, scales, mins, len(dst))
	bs, bb, sub := t.BlockSize(), t.BlockBytes(), SubBlockSize(t)
	ns := bs / sub
	pack := views[t].pack
	var q [256]int
	for b := range len(codes) / bs {
		mask := 1<<CodeBits(t) - 1
		for i, c := range codes[b*bs : (b+1)*bs] {
			if int(c) > mask {
				return &PackError{t, b, fmt.Sprintf("code %#x of element %d is wider than %d bits", c, i, CodeBits(t))}
			}
			q[i] = int(c)
			if SignedCodes(t) && q[i] > mask>>1 {
				q[i] -= mask + 1
			}
		}
		var m []float32
		if HasMin(t) {
			m = mins[b*ns : (b+1)*ns]
		}
		y := dst[b*bb : (b+1)*bb]
		clear(y)
		if msg := pack(y, q[:bs], scales[b*ns:(b+1)*ns], m); msg != "" {
			return &PackError{t, b, msg}
		}
	}
	return nil
}

// f16Exact returns the float16 code of v and whether it holds v exactly
// (±Inf included: a block's stored infinity packs back as itself).
func f16Exact(v float32) (uint16, bool) {
	h := uint16(fmtF16.EncodeWith(v, dtype.Options{Overflow: dtype.OverflowIEEE}))
	return h, math.Float32bits(fmtF16.Decode(uint32(h))) == math.Float32bits(v)
}

// splitScales finds a float16 D and integers l[j] in [lo, hi] with
// float32(D·l[j]) = s[j], bit for bit, for every j, and reports whether
// there is one.
func splitScales(s []float32, lo, hi int, l []int) (uint16, bool) {
	var amax float32
	top := -1
	for j, v := range s {
		if !finiteF32(v) {
			return splitNonFinite(s, lo, hi, l)
		}
		if a := float32(math.Abs(float64(v))); top < 0 || a > amax {
			amax, top = a, j
		}
	}
	if top < 0 {
		return 0, true // no sub-blocks
	}
	if amax == 0 { // zeros of either sign
		return splitExhaustive(s, lo, hi, l, []uint16{0, 0x8000})
	}
	// Try every integer for the largest scale, largest magnitude (and
	// negative) first.
	for k := max(hi, -lo); k >= 1; k-- {
		for _, lt := range [2]int{-k, k} {
			if lt < lo || lt > hi {
				continue
			}
			D := s[top] / float32(lt)
			h, ok := f16Exact(D)
			if !ok || D*float32(lt) != s[top] {
				continue
			}
			if fitsAll(s, D, lo, hi, l) {
				return h, true
			}
		}
	}
	return 0, false
}

// splitNonFinite is splitScales for scales holding a NaN or an infinity,
// which only a non-finite D gives: every float16 NaN and infinity that one
// of them suggests is tried.
func splitNonFinite(s []float32, lo, hi int, l []int) (uint16, bool) {
	cands := []uint16{0x7C00, 0xFC00, 0x7E00, 0xFE00}
	for _, v := range s {
		if !finiteF32(v) {
			h := uint16(fmtF16.Encode(v))
			cands = append(cands, h, h^0x8000)
		}
	}
	return splitExhaustive(s, lo, hi, l, cands)
}

// splitExhaustive tries each candidate D, searching every integer in
// [lo, hi] for each scale.
func splitExhaustive(s []float32, lo, hi int, l []int, cands []uint16) (uint16, bool) {
	for _, h := range cands {
		D := fmtF16.Decode(uint32(h))
		ok := true
		for j, v := range s {
			found := false
			for c := lo; c <= hi && !found; c++ {
				if math.Float32bits(D*float32(c)) == math.Float32bits(v) {
					l[j], found = c, true
				}
			}
			if ok = found; !ok {
				break
			}
		}
		if ok {
			return h, true
		}
	}
	return 0, false
}

// finiteF32 reports whether v is neither NaN nor an infinity.
func finiteF32(v float32) bool { return math.Float32bits(v)&0x7f800000 != 0x7f800000 }

// fitsAll sets l[j] = s[j]/D rounded and reports whether each is in [lo, hi]
// with float32(D·l[j]) = s[j] (bit for bit, so −0 ≠ +0).
func fitsAll(s []float32, D float32, lo, hi int, l []int) bool {
	for j, v := range s {
		r := math.RoundToEven(float64(v / D))
		if r < float64(lo) || r > float64(hi) {
			return false
		}
		l[j] = int(r)
		if math.Float32bits(D*float32(l[j])) != math.Float32bits(v) {
			return false
		}
	}
	return true
}
