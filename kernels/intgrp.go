package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Integer quantization with a float scale per group of elements (and, for
// unsigned data, a zero point per group), as the tcast package casts int8,
// int4, uint8 and uint4 datatypes with float16 or float32 scales under its
// defaults (docs/NUMERICS.md §6 and §8):
//
//   - Symmetric (signed data, codes −qmax..qmax with qmax = 2^(bits−1) − 1):
//     a group with largest magnitude amax gets the scale s = amax/qmax
//     rounded to nearest even in the scale format, saturating (1.0 for an
//     all-zero group); its elements are x/d rounded to nearest even and
//     clamped to ±qmax, d being s decoded to float32. A group holding a NaN
//     or an infinity gets the scale format's NaN and codes 0; a d of 0 (a
//     scale that underflows) gives codes 0.
//   - Asymmetric (unsigned data, codes 0..qmax with qmax = 2^bits − 1): with
//     lo = min(min x, 0) and hi = max(max x, 0), s = (hi − lo)/qmax in the
//     scale format (1.0 when hi = lo), the zero point zp = round(−lo/d)
//     saturated to the zero point's format and kept within 0..qmax, and the
//     codes clamp(zp + round(x/d), 0, qmax), rounding to nearest even. A
//     group holding a NaN or an infinity gets the NaN scale, zero point 0
//     and codes 0; a d of 0 gives zero point 0 and codes 0.
//
// The decoders return q·m (symmetric) and (q − z)·m (asymmetric) in float32,
// m being the decoded scale and z the decoded zero point.
//
// Groups run along rows: a tensor of Cols columns has ceil(Cols/Group)
// groups per row, the last one shorter when Group does not divide Cols, and
// the groups are numbered row by row. Codes of 8 bits take a byte each (two's
// complement for signed data); codes of 4 bits are packed two per byte,
// element 2k in bits 3:0 and element 2k+1 in bits 7:4, over the whole tensor.
// Scales are little-endian float16 or float32 codes, zero points one byte
// each. Lengths that do not fit are programmer errors and panic.

// ScaleFormat is the storage format of a float block scale.
type ScaleFormat uint8

const (
	// ScaleFloat16 stores IEEE binary16 codes, two little-endian bytes each.
	ScaleFloat16 ScaleFormat = iota
	// ScaleFloat32 stores float32 bits, four little-endian bytes each.
	ScaleFloat32
)

// Bytes returns the size of one scale of the format.
func (f ScaleFormat) Bytes() int {
	if f == ScaleFloat32 {
		return 4
	}
	return 2
}

// The scale codes of a NaN-holding group and of 1.0 (an all-zero group), as
// the dtype package encodes them.
const (
	f16NaN = 0x7e00
	f32NaN = 0x7fc00000
	f16One = 0x3c00
	f32One = 0x3f800000
)

// encodeScale returns the code of v in f, rounded to nearest even and
// saturating, for v ≥ 0 and not NaN, and its float32 value.
func (f ScaleFormat) encodeScale(v float32) (code uint32, d float32) {
	if f == ScaleFloat32 {
		v = min(v, math.MaxFloat32) // +Inf saturates
		return math.Float32bits(v), v
	}
	h := float32ToFloat16(v, true)
	return uint32(h), float16To32(h)
}

// decodeScale returns the float32 value of a scale code: exact, with a NaN
// made quiet.
func (f ScaleFormat) decodeScale(code uint32) float32 {
	if f == ScaleFloat32 {
		if code&0x7fffffff > 0x7f800000 {
			code |= 0x00400000
		}
		return math.Float32frombits(code)
	}
	return float16To32(uint16(code))
}

func (f ScaleFormat) nan() uint32 {
	if f == ScaleFloat32 {
		return f32NaN
	}
	return f16NaN
}

func (f ScaleFormat) one() uint32 {
	if f == ScaleFloat32 {
		return f32One
	}
	return f16One
}

// putScale stores scale code c as entry k of scales.
func (f ScaleFormat) put(scales []byte, k int, c uint32) {
	if f == ScaleFloat32 {
		binary.LittleEndian.PutUint32(scales[4*k:], c)
		return
	}
	binary.LittleEndian.PutUint16(scales[2*k:], uint16(c))
}

// get reads entry k of scales.
func (f ScaleFormat) get(scales []byte, k int) uint32 {
	if f == ScaleFloat32 {
		return binary.LittleEndian.Uint32(scales[4*k:])
	}
	return uint32(binary.LittleEndian.Uint16(scales[2*k:]))
}

// IntGroups describes an integer quantization with a float scale per group.
type IntGroups struct {
	// Bits is the width of a code: 8 or 4.
	Bits int
	// Cols is the length of a row; groups do not cross rows. 0 means one row
	// holding every element.
	Cols int
	// Group is the number of elements per scale along a row; 0 means the
	// whole row (one scale per channel).
	Group int
	// Scale is the scale format.
	Scale ScaleFormat
	// SignedZero makes an asymmetric zero point an int8 (−127..127) instead
	// of a uint8 (0..255). Symmetric quantization has no zero point.
	SignedZero bool
}

// geometry returns the row length and group size of g for n elements, and
// the number of groups; it panics on a malformed g.
func (g IntGroups) geometry(kernel string, n int) (cols, group, groups int) {
	if g.Bits != 8 && g.Bits != 4 {
		panic(fmt.Sprintf("kernels: %s: %d-bit codes; want 8 or 4", kernel, g.Bits))
	}
	if g.Scale > ScaleFloat32 {
		panic(fmt.Sprintf("kernels: %s: unknown scale format %d", kernel, g.Scale))
	}
	cols, group = g.Cols, g.Group
	if cols == 0 {
		cols = n
	}
	if cols < 0 || group < 0 || (cols == 0 && n != 0) || (cols > 0 && n%cols != 0) {
		panic(fmt.Sprintf("kernels: %s: %d elements in rows of %d", kernel, n, g.Cols))
	}
	if group == 0 || group > cols {
		group = cols
	}
	if n == 0 {
		return cols, group, 0
	}
	return cols, group, n / cols * ((cols + group - 1) / group)
}

// codeBytes is the length of the codes of n elements.
func (g IntGroups) codeBytes(n int) int {
	if g.Bits == 4 {
		return (n + 1) / 2
	}
	return n
}

func (g IntGroups) check(kernel string, n, codes, scales, zeros int, asym bool) (cols, group, groups int) {
	cols, group, groups = g.geometry(kernel, n)
	switch {
	case codes < g.codeBytes(n):
		panic(fmt.Sprintf("kernels: %s: %d code bytes for %d elements", kernel, codes, n))
	case scales < groups*g.Scale.Bytes():
		panic(fmt.Sprintf("kernels: %s: %d scale bytes for %d groups", kernel, scales, groups))
	case asym && zeros < groups:
		panic(fmt.Sprintf("kernels: %s: %d zero points for %d groups", kernel, zeros, groups))
	}
	return cols, group, groups
}

// quantizeIntSym quantizes src symmetrically as g describes: signed codes
// into codes (len(src) bytes for 8 bits, (len(src)+1)/2 for 4), one scale per
// group into scales.
func quantizeIntSym(codes, scales []byte, src []float32, g IntGroups) {
	g.check("quantizeIntSym", len(src), len(codes), len(scales), 0, false)
	quantIntSym(codes, scales, src, g)
}

// dequantizeIntSym decodes symmetric codes and scales (as quantizeIntSym
// writes them) into dst: element × scale in float32.
func dequantizeIntSym(dst []float32, codes, scales []byte, g IntGroups) {
	g.check("dequantizeIntSym", len(dst), len(codes), len(scales), 0, false)
	dequantIntSym(dst, codes, scales, g)
}

// quantizeIntAsym quantizes src asymmetrically as g describes: unsigned
// codes into codes, one scale per group into scales and one zero point per
// group into zeros.
func quantizeIntAsym(codes, scales, zeros []byte, src []float32, g IntGroups) {
	g.check("quantizeIntAsym", len(src), len(codes), len(scales), len(zeros), true)
	quantIntAsym(codes, scales, zeros, src, g)
}

// dequantizeIntAsym decodes asymmetric codes, scales and zero points (as
// quantizeIntAsym writes them) into dst: (element − zero point) × scale in
// float32.
func dequantizeIntAsym(dst []float32, codes, scales, zeros []byte, g IntGroups) {
	g.check("dequantizeIntAsym", len(dst), len(codes), len(scales), len(zeros), true)
	dequantIntAsym(dst, codes, scales, zeros, g)
}

// forGroups calls fn for every group of n elements in rows of cols: its
// number, first element and end.
func forGroups(n, cols, group int, fn func(k, lo, hi int)) {
	k := 0
	for r := 0; r < n; r += cols {
		for lo := r; lo < r+cols; lo += group {
			fn(k, lo, min(lo+group, r+cols))
			k++
		}
	}
}

// qmaxSym is the largest symmetric code of bits.
func qmaxSym(bits int) float32 { return float32(int(1)<<(bits-1) - 1) }

// symScale chooses the scale of a symmetric group whose largest magnitude has
// the bits amax: its code and divisor d, 0 when the codes are all 0 (a NaN
// or an infinity in the group, or a scale that underflows).
func symScale(f ScaleFormat, amax uint32, qmax float32) (code uint32, d float32) {
	switch {
	case amax >= 0x7f800000:
		return f.nan(), 0
	case amax == 0:
		return f.one(), 1
	}
	return f.encodeScale(math.Float32frombits(amax) / qmax)
}

// magic rounds a float32 below 2^22 in magnitude to an integer, ties to
// even, in the low bits of the sum's bits.
const (
	magic     = 0x1.8p23
	magicBits = 0x4b400000
)

// roundEven32 returns x (|x| ≤ 2^22) rounded to nearest even.
func roundEven32(x float32) int32 {
	return int32(math.Float32bits(x+magic)) - magicBits
}

// putCode stores code c (its low bits) as element i of codes.
func putCode(codes []byte, i int, c int32, bits int) {
	if bits == 8 {
		codes[i] = byte(c)
		return
	}
	sh := uint(i&1) * 4
	codes[i>>1] = codes[i>>1]&^(0xf<<sh) | byte(c&0xf)<<sh
}

// getCode returns element i of codes, sign-extended when signed.
func getCode(codes []byte, i, bits int, signed bool) int32 {
	if bits == 8 {
		if signed {
			return int32(int8(codes[i]))
		}
		return int32(codes[i])
	}
	c := int32(codes[i>>1] >> (uint(i&1) * 4) & 0xf)
	if signed {
		c = c << 28 >> 28
	}
	return c
}

// quantSymGroup encodes one group's elements x (element lo onwards) with the
// divisor d: codes 0 when d is 0.
func quantSymGroup(codes []byte, x []float32, lo int, d, qmax float32, bits int) {
	for i, v := range x {
		var q int32
		if d != 0 {
			q = roundEven32(min(max(v/d, -qmax), qmax))
		}
		putCode(codes, lo+i, q, bits)
	}
}

// quantIntSymGo is the reference of quantizeIntSym.
func quantIntSymGo(codes, scales []byte, src []float32, g IntGroups) {
	cols, group, _ := g.geometry("quantizeIntSym", len(src))
	qmax := qmaxSym(g.Bits)
	forGroups(len(src), cols, group, func(k, lo, hi int) {
		code, d := symScale(g.Scale, absMaxBitsGo(src[lo:hi]), qmax)
		g.Scale.put(scales, k, code)
		quantSymGroup(codes, src[lo:hi], lo, d, qmax, g.Bits)
	})
}

// dequantIntSymGo is the reference of dequantizeIntSym.
func dequantIntSymGo(dst []float32, codes, scales []byte, g IntGroups) {
	cols, group, _ := g.geometry("dequantizeIntSym", len(dst))
	forGroups(len(dst), cols, group, func(k, lo, hi int) {
		m := g.Scale.decodeScale(g.Scale.get(scales, k))
		if g.Bits == 8 {
			for i, c := range codes[lo:hi] {
				dst[lo+i] = float32(int8(c)) * m
			}
			return
		}
		for i := lo; i < hi; i++ {
			c := int32(codes[i>>1]>>(uint(i&1)*4)) << 28 >> 28
			dst[i] = float32(c) * m
		}
	})
}

// rangeOf returns min(min x, 0) and max(max x, 0) over the finite elements
// of x, and whether x holds a NaN or an infinity.
func rangeOf(x []float32) (lo, hi float32, nonFinite bool) {
	for _, v := range x {
		if math.Float32bits(v)&0x7fffffff >= 0x7f800000 {
			nonFinite = true
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, nonFinite
}

// asymScale chooses the scale and zero point of an asymmetric group with
// range lo..hi: the scale code, the divisor d (0 when the codes are all 0)
// and the zero point.
func (g IntGroups) asymScale(lo, hi float32, nonFinite bool) (code uint32, d float32, zp int32) {
	if nonFinite {
		return g.Scale.nan(), 0, 0
	}
	qmax := int32(1)<<g.Bits - 1
	code, d = g.Scale.one(), 1
	if rng := hi - lo; rng > 0 {
		code, d = g.Scale.encodeScale(rng / float32(qmax))
	}
	if d == 0 {
		return code, 0, 0
	}
	// round(0 − lo/d) in the zero point's format (saturating), then within
	// the codes; −lo/d ≥ 0. Values from 2^30 up all saturate.
	z := roundEven32(min(-lo/d, 1<<22))
	zmax := int32(255)
	if g.SignedZero {
		zmax = 127
	}
	return code, d, min(z, zmax, qmax)
}

// quantAsymGroup encodes one group's elements x (element lo onwards) with
// divisor d and zero point zp: codes zp (0) when d is 0.
func quantAsymGroup(codes []byte, x []float32, lo int, d float32, zp, qmax int32, bits int) {
	for i, v := range x {
		q := zp
		if d != 0 {
			q += roundEven32(min(max(v/d, -(1<<22)), 1<<22))
		}
		putCode(codes, lo+i, min(max(q, 0), qmax), bits)
	}
}

// quantIntAsymGo is the reference of quantizeIntAsym.
func quantIntAsymGo(codes, scales, zeros []byte, src []float32, g IntGroups) {
	cols, group, _ := g.geometry("quantizeIntAsym", len(src))
	qmax := int32(1)<<g.Bits - 1
	forGroups(len(src), cols, group, func(k, lo, hi int) {
		code, d, zp := g.asymScale(rangeOf(src[lo:hi]))
		g.Scale.put(scales, k, code)
		zeros[k] = byte(zp)
		quantAsymGroup(codes, src[lo:hi], lo, d, zp, qmax, g.Bits)
	})
}

// zeroOf returns the value of a zero-point byte.
func (g IntGroups) zeroOf(b byte) float32 {
	if g.SignedZero {
		return float32(int8(b))
	}
	return float32(b)
}

// dequantIntAsymGo is the reference of dequantizeIntAsym.
func dequantIntAsymGo(dst []float32, codes, scales, zeros []byte, g IntGroups) {
	cols, group, _ := g.geometry("dequantizeIntAsym", len(dst))
	forGroups(len(dst), cols, group, func(k, lo, hi int) {
		m := g.Scale.decodeScale(g.Scale.get(scales, k))
		z := g.zeroOf(zeros[k])
		if g.Bits == 8 {
			for i, c := range codes[lo:hi] {
				dst[lo+i] = (float32(c) - z) * m
			}
			return
		}
		for i := lo; i < hi; i++ {
			c := codes[i>>1] >> (uint(i&1) * 4) & 0xf
			dst[i] = (float32(c) - z) * m
		}
	})
}

// clearLastNibble clears the unused high nibble of the last byte of an odd
// number of 4-bit codes.
func clearLastNibble(codes []byte, n, bits int) {
	if bits == 4 && n%2 == 1 {
		codes[n/2] &= 0x0f
	}
}
