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
	dst = dst[:len(src)]
	t := float16Table()
	for i, h := range src {
		dst[i] = t[h]
	}
}

// BFloat16ToFloat32 decodes bfloat16 codes into float32 values. dst must be at
// least as long as src.
func BFloat16ToFloat32(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = bfloat16To32(h)
	}
}

// Float16BytesToFloat32 decodes len(dst) little-endian binary16 values from
// src, which must hold 2·len(dst) bytes.
func Float16BytesToFloat32(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	t := float16Table()
	for i := range dst {
		dst[i] = t[binary.LittleEndian.Uint16(src[2*i:])]
	}
}

// BFloat16BytesToFloat32 decodes len(dst) little-endian bfloat16 values from
// src, which must hold 2·len(dst) bytes.
func BFloat16BytesToFloat32(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = bfloat16To32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}
