package dtype

import (
	"fmt"
	"unsafe"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// Code is the set of element types that hold one code: uint8 for formats of up to
// 8 bits, uint16 up to 16, uint32 above.
type Code = kernels.Code

// CodeBytes returns the width in bytes of the smallest Code type that holds the
// format's codes: 1, 2 or 4.
func (f *Format) CodeBytes() int {
	switch {
	case f.bits <= 8:
		return 1
	case f.bits <= 16:
		return 2
	}
	return 4
}

func checkSlices[C Code](f *Format, codes []C, values []float32) {
	var c C
	if w := int(unsafe.Sizeof(c)) * 8; w < f.bits {
		panic(fmt.Sprintf("dtype: %d-bit codes of %s do not fit a %d-bit element", f.bits, f.name, w))
	}
	if len(codes) != len(values) {
		panic(fmt.Sprintf("dtype: %s: %d codes for %d values", f.name, len(codes), len(values)))
	}
}

// EncodeSlice encodes src into dst with options o. Element i equals
// f.EncodeWith(src[i], o) except that stochastic rounding draws its random bits
// from (o.Seed, i). It panics if the slices differ in length or C is narrower than
// the format.
func EncodeSlice[C Code](f *Format, dst []C, src []float32, o Options) {
	checkSlices(f, dst, src)
	sat := o.Overflow == Saturate
	switch f.kind {
	case Float:
		kernels.EncodeFloat(&f.fc, dst, src, o.Rounding, sat, o.Seed)
	case Int:
		kernels.EncodeInt(f.intCodec(o), dst, src, o.Rounding, o.Seed)
	default:
		kernels.EncodeExp(&f.xc, dst, src, o.Rounding, sat, o.Seed)
	}
}

// DecodeSlice decodes src into dst; dst[i] = f.Decode(src[i]). It panics if the
// slices differ in length or C is narrower than the format.
func DecodeSlice[C Code](f *Format, dst []float32, src []C) {
	checkSlices(f, src, dst)
	switch {
	case f.bits <= 8:
		lut := (*[256]float32)(f.table())
		if b, ok := any(src).([]uint8); ok {
			if f.kind == Float {
				kernels.DecodeFloat8(&f.fc, dst, b, lut) // assembly for e4m3fn, e5m2, e2m3, e3m2
				return
			}
			kernels.DecodeLUT8(dst, b, lut)
			return
		}
		kernels.DecodeLUT(dst, src, f.table())
	case f.name == "bfloat16" || f.name == "float16":
		h, ok := any(src).([]uint16)
		switch {
		case ok && f.name == "bfloat16":
			kernels.BFloat16ToFloat32(dst, h)
		case ok:
			kernels.Float16ToFloat32(dst, h)
		default:
			kernels.DecodeLUT(dst, src, f.table())
		}
	case f.bits <= 16:
		kernels.DecodeLUT(dst, src, f.table())
	default:
		kernels.DecodeFloat(&f.fc, dst, src)
	}
}

// table returns the decode table of a format of up to 16 bits: 256 entries for
// 8 bits and fewer (codes are masked to the format), 2^Bits otherwise. It is built
// on first use from the scalar Decode.
func (f *Format) table() []float32 {
	f.lutOnce.Do(func() {
		n := 1 << max(f.bits, 8)
		f.lut = make([]float32, n)
		for c := range n {
			f.lut[c] = f.Decode(uint32(c))
		}
	})
	return f.lut
}
