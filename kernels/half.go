package kernels

import (
	"encoding/binary"
	"math"
	"sync"
)

// The float16 and bfloat16 → float32 decoders: every reader of 16-bit float
// data (safetensors, GGUF, .npy, dtype.DecodeSlice) goes through these. Both
// widen exactly; a NaN keeps its sign and payload and comes out quiet (the
// float32 quiet bit set), as FloatCodec.Decode and IEEE 754 conversions do.

// float16To32 returns the float32 value of the IEEE binary16 code h.
func float16To32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	e := uint32(h>>10) & 0x1f
	m := uint32(h & 0x3ff)
	switch e {
	case 0x1f: // Inf, NaN
		if m == 0 {
			return math.Float32frombits(sign | 0x7f800000)
		}
		return math.Float32frombits(sign | 0x7fc00000 | m<<13)
	case 0: // zero and subnormals: m·2⁻²⁴, a float32 normal (or zero), exactly
		return math.Float32frombits(sign | math.Float32bits(float32(m)*0x1p-24))
	}
	// Normal: rebias the exponent from 15 to 127.
	return math.Float32frombits(sign | (e+112)<<23 | m<<13)
}

// bfloat16To32 returns the float32 value of the bfloat16 code h: its bits are
// the top half of the float32's.
func bfloat16To32(h uint16) float32 {
	v := uint32(h) << 16
	if v&0x7fffffff > 0x7f800000 {
		v |= 0x00400000 // quiet a signalling NaN
	}
	return math.Float32frombits(v)
}

// float16Table holds the float32 value of every binary16 code, built on first
// use: a lookup beats the arithmetic of float16To32 on mixed data by a factor
// of three or so, for 256 KiB.
var float16Table = sync.OnceValue(func() *[1 << 16]float32 {
	t := new([1 << 16]float32)
	for h := range t {
		t[h] = float16To32(uint16(h))
	}
	return t
})

// Float16ToFloat32 decodes IEEE binary16 codes into float32 values. dst must
// be at least as long as src.
func Float16ToFloat32(dst []float32, src []uint16) {
	f16ToF32(dst[:len(src)], src)
}

// BFloat16ToFloat32 decodes bfloat16 codes into float32 values. dst must be at
// least as long as src.
func BFloat16ToFloat32(dst []float32, src []uint16) {
	bf16ToF32(dst[:len(src)], src)
}

// Float16BytesToFloat32 decodes len(dst) little-endian binary16 values from
// src, which must hold 2·len(dst) bytes.
func Float16BytesToFloat32(dst []float32, src []byte) {
	f16BytesToF32(dst, bytesFor("Float16BytesToFloat32", src, 2*len(dst)))
}

// BFloat16BytesToFloat32 decodes len(dst) little-endian bfloat16 values from
// src, which must hold 2·len(dst) bytes.
func BFloat16BytesToFloat32(dst []float32, src []byte) {
	bf16BytesToF32(dst, bytesFor("BFloat16BytesToFloat32", src, 2*len(dst)))
}

// f16ToF32Go is the reference of Float16ToFloat32, with len(dst) = len(src).
func f16ToF32Go(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	t := float16Table()
	for i, h := range src {
		dst[i] = t[h]
	}
}

// bf16ToF32Go is the reference of BFloat16ToFloat32, with len(dst) = len(src).
func bf16ToF32Go(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = bfloat16To32(h)
	}
}

// f16BytesToF32Go is the reference of Float16BytesToFloat32.
func f16BytesToF32Go(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	t := float16Table()
	for i := range dst {
		dst[i] = t[binary.LittleEndian.Uint16(src[2*i:])]
	}
}

// bf16BytesToF32Go is the reference of BFloat16BytesToFloat32.
func bf16BytesToF32Go(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = bfloat16To32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// The float32 → bfloat16 and float32 → float16 encoders round to nearest, ties
// to even, and give exactly the codes of FloatCodec.Encode with RoundEven for
// the IEEE formats of 8 exponent and 7 mantissa bits and of 5 and 10: −0 and
// subnormals are kept (nothing is flushed to zero), a NaN keeps its sign and
// its top payload bits and comes out quiet, and a value that rounds past the
// largest finite magnitude, like ±Inf itself, becomes ±max finite when
// saturating and ±Inf otherwise.

// Float32ToBFloat16 encodes src as bfloat16 codes, rounding to nearest even.
// dst must be at least as long as src. With saturate, overflow and ±Inf give
// ±0x1.fep127 (code 0x7f7f); without, ±Inf. A NaN gives sign | 0x7fc0 | the
// next six bits of its payload.
func Float32ToBFloat16(dst []uint16, src []float32, saturate bool) {
	f32ToBF16(dst[:len(src)], src, saturate)
}

// Float32ToFloat16 encodes src as IEEE binary16 codes, rounding to nearest
// even. dst must be at least as long as src. With saturate, overflow (|x| ≥
// 65520) and ±Inf give ±65504 (code 0x7bff); without, ±Inf. A NaN gives
// sign | 0x7e00 | the next nine bits of its payload.
func Float32ToFloat16(dst []uint16, src []float32, saturate bool) {
	f32ToF16(dst[:len(src)], src, saturate)
}

// float32ToBFloat16 is the reference of Float32ToBFloat16 for one value.
// Adding 0x7fff plus the kept LSB carries into bit 16 exactly when the dropped
// half is above the tie, or at it with an odd kept half; bfloat16 has float32's
// exponent range, so this is the rounded code for subnormals and zeros too.
func float32ToBFloat16(x float32, saturate bool) uint16 {
	b := math.Float32bits(x)
	abs := b & 0x7fffffff
	h := (abs + 0x7fff + (abs>>16)&1) >> 16
	if saturate {
		h = min(h, 0x7f7f)
	}
	if abs > 0x7f800000 {
		h = abs>>16 | 0x40 // quiet NaN, payload truncated
	}
	return uint16(b>>16&0x8000 | h)
}

// float32ToFloat16 is the reference of Float32ToFloat16 for one value.
func float32ToFloat16(x float32, saturate bool) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000: // NaN: quiet, payload truncated
		return sign | 0x7e00 | uint16(abs>>13)&0x1ff
	case abs >= 0x477ff000: // ≥ 65520, the tie between 65504 and 2^16: overflow
		if saturate {
			return sign | 0x7bff
		}
		return sign | 0x7c00
	case abs < 0x38800000:
		// Below 2^-14, the smallest normal: adding 0.5, whose ulp is 2^-24 (the
		// subnormal quantum), rounds ties-to-even, and the bits above 0.5's are
		// the code (0x400 when it rounds up to the smallest normal).
		return sign | uint16(math.Float32bits(math.Float32frombits(abs)+0.5)-0x3f000000)
	}
	// Normal: round the mantissa to 10 bits (a carry moves into the exponent),
	// then rebias the exponent from 127 to 15.
	return sign | uint16((abs+0xfff+(abs>>13)&1)>>13-(127-15)<<10)
}

// f32ToBF16Go is Float32ToBFloat16 in Go, with len(dst) = len(src): the
// rounding of float32ToBFloat16 inline, which is the whole rule below the
// largest finite bfloat16, and the scalar for the rest (overflow, ±Inf, NaN).
func f32ToBF16Go(dst []uint16, src []float32, saturate bool) {
	dst = dst[:len(src)]
	for i, x := range src {
		b := math.Float32bits(x)
		if b&0x7fffffff >= 0x7f7f8000 {
			dst[i] = float32ToBFloat16(x, saturate)
			continue
		}
		dst[i] = uint16((b + 0x7fff + (b>>16)&1) >> 16)
	}
}

// f32ToF16Go is Float32ToFloat16 in Go, with len(dst) = len(src): both
// roundings of float32ToFloat16 for finite values below 65520, selected
// without a branch (whether a weight is below 2^-14 is as unpredictable as
// the data), and the scalar for the rest (overflow, ±Inf, NaN).
func f32ToF16Go(dst []uint16, src []float32, saturate bool) {
	dst = dst[:len(src)]
	for i, x := range src {
		b := math.Float32bits(x)
		abs := b & 0x7fffffff
		if abs >= 0x477ff000 {
			dst[i] = float32ToFloat16(x, saturate)
			continue
		}
		sub := math.Float32bits(math.Float32frombits(abs)+0.5) - 0x3f000000
		h := (abs+0xfff+(abs>>13)&1)>>13 - (127-15)<<10
		isSub := uint32(int32(abs-0x38800000) >> 31) // all ones below 2^-14
		h ^= (h ^ sub) & isSub
		dst[i] = uint16(b>>16&0x8000 | h)
	}
}
