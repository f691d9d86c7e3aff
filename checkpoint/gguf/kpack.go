package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
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
// 0..3, Q4_1 and Q4_K 0..15, Q5_1 and Q5_K 0..31) and the table index for
// IQ4_NL and IQ4_XS (value = scale·IQ4NLValues[index]).

// blockView is a block type in the views of UnpackBlocks and SplitBlocks:
// the elements sharing one scale, the width of a code, whether codes are
// two's complement and sub-blocks have a min, and which view takes it.
type blockView struct {
	sub, bits   int
	signed, min bool
	unpack      bool // UnpackBlocks (else SplitBlocks)
}

// views lists the block types with a view.
var views = map[Type]blockView{
	TypeQ4_0:   {sub: 32, bits: 4, signed: true},
	TypeQ8_0:   {sub: 32, bits: 8, signed: true},
	TypeMXFP4:  {sub: 32, bits: 4},
	TypeNVFP4:  {sub: 16, bits: 4},
	TypeQ4_1:   {sub: 32, bits: 4, min: true, unpack: true},
	TypeQ5_0:   {sub: 32, bits: 5, signed: true, unpack: true},
	TypeQ5_1:   {sub: 32, bits: 5, min: true, unpack: true},
	TypeIQ4_NL: {sub: 32, bits: 4, unpack: true},
	TypeQ2_K:   {sub: 16, bits: 2, min: true, unpack: true},
	TypeQ3_K:   {sub: 16, bits: 3, signed: true, unpack: true},
	TypeQ4_K:   {sub: 32, bits: 4, min: true, unpack: true},
	TypeQ5_K:   {sub: 32, bits: 5, min: true, unpack: true},
	TypeQ6_K:   {sub: 16, bits: 6, signed: true, unpack: true},
	TypeQ8_K:   {sub: 256, bits: 8, signed: true, unpack: true},
	TypeIQ4_XS: {sub: 32, bits: 4, unpack: true},
}

// SubBlockSize returns the number of elements sharing one scale in blocks
// of type t (16 for Q2_K, Q3_K, Q6_K and NVFP4, 256 for Q8_K, 32 for the
// other types of UnpackBlocks and SplitBlocks), or 0 for a type without
// one.
func SubBlockSize(t Type) int { return views[t].sub }

// HasMin reports whether blocks of type t store an offset per sub-block
// (Q2_K, Q4_K, Q5_K, Q4_1, Q5_1).
func HasMin(t Type) bool { return views[t].min }

// CodeBits returns the width of an element code of type t in the view of
// UnpackBlocks or SplitBlocks (2 for Q2_K, 3 for Q3_K, 5 for Q5_0, Q5_1 and
// Q5_K, 6 for Q6_K, 8 for Q8_K and Q8_0, 4 for the others), or 0 for a
// type without one.
func CodeBits(t Type) int { return views[t].bits }

// SignedCodes reports whether the codes of type t are two's complement
// integers (Q3_K, Q5_0, Q6_K, Q8_K, Q4_0, Q8_0).
func SignedCodes(t Type) bool { return views[t].signed }

// unpackable lists the types UnpackBlocks and PackBlocks take.
func unpackable(t Type) bool { return views[t].unpack }

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
	var q [256]int
	for b := range len(codes) / bs {
		x := src[b*bb : (b+1)*bb]
		s := scales[b*ns : (b+1)*ns]
		var m []float32
		if HasMin(t) {
			m = mins[b*ns : (b+1)*ns]
		}
		unpackBlock(t, x, q[:bs], s, m)
		mask := 1<<CodeBits(t) - 1
		for i, c := range q[:bs] {
			codes[b*bs+i] = uint8(c & mask)
		}
	}
}

// unpackBlock decodes one block's codes (as ints, signed for the signed
// types), scales and mins.
func unpackBlock(t Type, x []byte, q []int, s, m []float32) {
	f16 := func(o int) float32 { return fmtF16.Decode(uint32(binary.LittleEndian.Uint16(x[o:]))) }
	split := func(q []int, y []byte) { // 32 nibbles in split-half order
		for j := range 16 {
			q[j], q[j+16] = int(y[j]&15), int(y[j]>>4)
		}
	}
	switch t {
	case TypeQ4_1, TypeQ5_1:
		d, mv := f16(0), f16(2)
		s[0], m[0] = d, -mv
		if t == TypeQ4_1 {
			split(q, x[4:20])
			return
		}
		qh := binary.LittleEndian.Uint32(x[4:])
		split(q, x[8:24])
		for j := range 32 {
			q[j] |= int(qh>>j&1) << 4
		}
	case TypeQ5_0:
		s[0] = f16(0)
		qh := binary.LittleEndian.Uint32(x[2:])
		split(q, x[6:22])
		for j := range 32 {
			q[j] = q[j] | int(qh>>j&1)<<4 - 16
		}
	case TypeIQ4_NL:
		s[0] = f16(0)
		split(q, x[2:18])
	case TypeQ8_K:
		s[0] = math.Float32frombits(binary.LittleEndian.Uint32(x))
		for j := range 256 {
			q[j] = int(int8(x[4+j]))
		}
	case TypeQ2_K:
		d, dmin := f16(80), f16(82)
		for j := range 16 {
			s[j], m[j] = d*float32(x[j]&15), dmin*float32(x[j]>>4)
		}
		for e := range 256 {
			q[e] = int(x[16+e/128*32+e%32] >> (2 * (e / 32 % 4)) & 3)
		}
	case TypeQ3_K:
		d := f16(108)
		for j := range 16 {
			lo := x[96+j%8] >> (4 * (j / 8)) & 15
			hi := x[104+j%4] >> (2 * (j / 4)) & 3
			s[j] = d * float32(int(lo|hi<<4)-32)
		}
		for e := range 256 {
			h, k, l := e/128, e/32%4, e%32
			q[e] = int(x[32+32*h+l]>>(2*k)&3) | int(x[l]>>(4*h+k)&1)<<2 - 4
		}
	case TypeQ4_K, TypeQ5_K:
		d, dmin := f16(0), f16(2)
		for j := range 8 {
			sc, mn := kScaleMinOf(x[4:16], j)
			s[j], m[j] = d*float32(sc), dmin*float32(mn)
		}
		qs := 16
		if t == TypeQ5_K {
			qs = 48
		}
		for e := range 256 {
			j, l := e/32, e%32
			q[e] = int(x[qs+32*(j/2)+l] >> (4 * (j % 2)) & 15)
			if t == TypeQ5_K {
				q[e] |= int(x[16+l]>>j&1) << 4
			}
		}
	case TypeQ6_K:
		d := f16(208)
		for j := range 16 {
			s[j] = d * float32(int8(x[192+j]))
		}
		for e := range 256 {
			h, k, l := e/128, e/32%4, e%32
			lo := int(x[64*h+32*(k%2)+l] >> (4 * (k / 2)) & 15)
			hi := int(x[128+32*h+l] >> (2 * k) & 3)
			q[e] = lo | hi<<4 - 32
		}
	case TypeIQ4_XS:
		d := f16(0)
		sh := binary.LittleEndian.Uint16(x[2:])
		for j := range 8 {
			ls := int(x[4+j/2]>>(4*(j%2))&15) | int(sh>>(2*j)&3)<<4
			s[j] = d * float32(ls-32)
			split(q[32*j:32*j+32], x[8+16*j:24+16*j])
		}
	}
}

// kScaleMinOf returns the 6-bit scale and min of sub-block j of a Q4_K or
// Q5_K block's 12 scale bytes.
func kScaleMinOf(sc []byte, j int) (s, m uint8) {
	if j < 4 {
		return sc[j] & 63, sc[j+4] & 63
	}
	return sc[j+4]&15 | sc[j-4]>>6<<4, sc[j+4]>>4 | sc[j]>>6<<4
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
		if msg := packBlock(t, dst[b*bb:(b+1)*bb], q[:bs], scales[b*ns:(b+1)*ns], m); msg != "" {
			return &PackError{t, b, msg}
		}
	}
	return nil
}

// f16Exact returns the float16 code of v and whether it holds v exactly.
func f16Exact(v float32) (uint16, bool) {
	h := uint16(fmtF16.Encode(v))
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

// packBlock lays out one block, or returns what does not fit.
func packBlock(t Type, y []byte, q []int, s, m []float32) string {
	clear(y)
	inRange := func(lo, hi int) string {
		for i, c := range q {
			if c < lo || c > hi {
				return fmt.Sprintf("element %d has code %d, outside %d..%d", i, c, lo, hi)
			}
		}
		return ""
	}
	f16At := func(o int, v float32, what string) string {
		h, ok := f16Exact(v)
		if !ok {
			return fmt.Sprintf("%s %v is not a float16", what, v)
		}
		binary.LittleEndian.PutUint16(y[o:], h)
		return ""
	}
	split := func(y []byte, q []int) {
		for j := range 16 {
			y[j] = byte(q[j]&15 | (q[j+16]&15)<<4)
		}
	}
	super := func(s []float32, lo, hi int, what string) (uint16, []int, string) {
		l := make([]int, len(s))
		h, ok := splitScales(s, lo, hi, l)
		if !ok {
			return 0, nil, fmt.Sprintf("the sub-block %ss %v are not D·l for one float16 D and integers l in %d..%d", what, s, lo, hi)
		}
		return h, l, ""
	}
	switch t {
	case TypeQ4_1, TypeQ5_1:
		if msg := f16At(0, s[0], "scale"); msg != "" {
			return msg
		}
		if msg := f16At(2, -m[0], "min"); msg != "" {
			return msg
		}
		if t == TypeQ4_1 {
			if msg := inRange(0, 15); msg != "" {
				return msg
			}
			split(y[4:], q)
			return ""
		}
		putQ5Codes(y[4:], q)
	case TypeQ5_0:
		if msg := f16At(0, s[0], "scale"); msg != "" {
			return msg
		}
		u := make([]int, 32)
		for i, c := range q {
			u[i] = c + 16
		}
		putQ5Codes(y[2:], u)
	case TypeIQ4_NL:
		if msg := f16At(0, s[0], "scale"); msg != "" {
			return msg
		}
		split(y[2:], q)
	case TypeQ8_K:
		binary.LittleEndian.PutUint32(y, math.Float32bits(s[0]))
		for j := range 16 {
			sum := 0
			for i := 16 * j; i < 16*j+16; i++ {
				y[4+i] = byte(int8(q[i]))
				sum += q[i]
			}
			binary.LittleEndian.PutUint16(y[260+2*j:], uint16(int16(sum)))
		}
	case TypeQ2_K:
		hd, ls, msg := super(s, 0, 15, "scale")
		if msg != "" {
			return msg
		}
		hm, lm, msg := super(m, 0, 15, "min")
		if msg != "" {
			return msg
		}
		for j := range 16 {
			y[j] = byte(ls[j] | lm[j]<<4)
		}
		for e := range 256 {
			y[16+e/128*32+e%32] |= byte(q[e] << (2 * (e / 32 % 4)))
		}
		binary.LittleEndian.PutUint16(y[80:], hd)
		binary.LittleEndian.PutUint16(y[82:], hm)
	case TypeQ3_K:
		hd, ls, msg := super(s, -32, 31, "scale")
		if msg != "" {
			return msg
		}
		for j := range 16 {
			v := byte(ls[j] + 32)
			y[96+j%8] |= (v & 15) << (4 * (j / 8))
			y[104+j%4] |= (v >> 4) << (2 * (j / 4))
		}
		for e := range 256 {
			h, k, l := e/128, e/32%4, e%32
			c := byte(q[e] + 4)
			y[32+32*h+l] |= (c & 3) << (2 * k)
			y[l] |= (c >> 2) << (4*h + k)
		}
		binary.LittleEndian.PutUint16(y[108:], hd)
	case TypeQ4_K, TypeQ5_K:
		hd, ls, msg := super(s, 0, 63, "scale")
		if msg != "" {
			return msg
		}
		hm, lm, msg := super(m, 0, 63, "min")
		if msg != "" {
			return msg
		}
		binary.LittleEndian.PutUint16(y[0:], hd)
		binary.LittleEndian.PutUint16(y[2:], hm)
		for j := range 4 {
			y[4+j] = byte(ls[j] | ls[j+4]>>4<<6)
			y[8+j] = byte(lm[j] | lm[j+4]>>4<<6)
			y[12+j] = byte(ls[j+4]&15 | (lm[j+4]&15)<<4)
		}
		qs := 16
		if t == TypeQ5_K {
			qs = 48
		}
		for e := range 256 {
			j, l := e/32, e%32
			y[qs+32*(j/2)+l] |= byte(q[e]&15) << (4 * (j % 2))
			if t == TypeQ5_K {
				y[16+l] |= byte(q[e]>>4) << j
			}
		}
	case TypeQ6_K:
		hd, ls, msg := super(s, -128, 127, "scale")
		if msg != "" {
			return msg
		}
		for j := range 16 {
			y[192+j] = byte(int8(ls[j]))
		}
		for e := range 256 {
			h, k, l := e/128, e/32%4, e%32
			c := byte(q[e] + 32)
			y[64*h+32*(k%2)+l] |= (c & 15) << (4 * (k / 2))
			y[128+32*h+l] |= (c >> 4) << (2 * k)
		}
		binary.LittleEndian.PutUint16(y[208:], hd)
	case TypeIQ4_XS:
		hd, ls, msg := super(s, -32, 31, "scale")
		if msg != "" {
			return msg
		}
		binary.LittleEndian.PutUint16(y[0:], hd)
		var sh uint16
		for j := range 8 {
			v := byte(ls[j] + 32)
			y[4+j/2] |= (v & 15) << (4 * (j % 2))
			sh |= uint16(v>>4) << (2 * j)
			split(y[8+16*j:], q[32*j:32*j+32])
		}
		binary.LittleEndian.PutUint16(y[2:], sh)
	}
	return ""
}

// putQ5Codes writes 32 5-bit codes (0..31) as the uint32 of fifth bits and
// 16 bytes of low nibbles.
func putQ5Codes(y []byte, q []int) {
	var qh uint32
	for j := range 16 {
		lo, hi := q[j], q[j+16]
		y[4+j] = byte(lo&15 | (hi&15)<<4)
		qh |= uint32(lo>>4&1)<<j | uint32(hi>>4&1)<<(j+16)
	}
	binary.LittleEndian.PutUint32(y, qh)
}
