package kernels

import (
	"encoding/binary"
	"math"
	"testing"
)

// floatsOf reads little-endian float32 values from data (a trailing partial
// value is dropped).
func floatsOf(data []byte) []float32 {
	s := make([]float32, len(data)/4)
	for i := range s {
		s[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return s
}

// bytesOf returns the little-endian bytes of xs, a fuzz seed that floatsOf
// reads back.
func bytesOf(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// FuzzAbsMaxBlocks compares every tier's block amax kernels, masked and not,
// with the Go reference on arbitrary float bits, block sizes and keep masks.
func FuzzAbsMaxBlocks(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x7f, 1, 0, 0xc0, 0xff, 0, 0, 0, 0x80}, uint16(16), uint64(0x5555))
	f.Add(make([]byte, 4*100), uint16(32), uint64(1))
	f.Add([]byte{1, 0, 0, 0}, uint16(1), ^uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, block uint16, keepBits uint64) {
		src := floatsOf(data)
		bs := int(block)%300 + 1
		keep := make([]bool, len(src))
		for i := range keep {
			keep[i] = keepBits>>(i%64)&1 != 0
		}
		nb := (len(src) + bs - 1) / bs
		want, wantM := make([]uint32, nb), make([]uint32, nb)
		absMaxBlocksGo(want, src, bs)
		absMaxBlocksMaskedGo(wantM, src, keep, bs)
		for _, tr := range tiers() {
			restore := useTier(tr)
			got, gotM := make([]uint32, nb), make([]uint32, nb)
			AbsMaxBlocks(got, src, bs)
			AbsMaxBlocksMasked(gotM, src, keep, bs)
			all, allM := AbsMaxBits(src), AbsMaxBitsMasked(src, keep)
			restore()
			requireSame(t, want, got, "%v AbsMaxBlocks block %d", tr, bs)
			requireSame(t, wantM, gotM, "%v AbsMaxBlocksMasked block %d", tr, bs)
			if w := absMaxBitsGo(src); all != w {
				t.Fatalf("%v AbsMaxBits = %#x, want %#x", tr, all, w)
			}
			if w := absMaxBitsMaskedGo(src, keep); allM != w {
				t.Fatalf("%v AbsMaxBitsMasked = %#x, want %#x", tr, allM, w)
			}
		}
	})
}

// FuzzHalf compares every tier's float16 and bfloat16 conversions with the Go
// references: data read as 16-bit codes (and as their bytes) for the decoders
// and as float32 values for the encoders.
func FuzzHalf(f *testing.F) {
	f.Add([]byte{0, 0x7c, 1, 0x7c, 0xff, 0xff, 0, 0x80, 1, 0, 0xff, 0x7b, 0, 0, 0xc0, 0x7f}, true)
	f.Add([]byte{0xf0, 0xff, 0x7f, 0x47, 0, 0, 0, 0x33, 1, 0, 0x80, 0x7f}, false)
	f.Fuzz(func(t *testing.T, data []byte, saturate bool) {
		codes := make([]uint16, len(data)/2)
		for i := range codes {
			codes[i] = binary.LittleEndian.Uint16(data[2*i:])
		}
		raw := data[:2*len(codes)]
		floats := floatsOf(data)
		bits := func(f []float32) []uint32 {
			b := make([]uint32, len(f))
			for i, x := range f {
				b[i] = math.Float32bits(x)
			}
			return b
		}
		wantF16, wantBF16 := make([]float32, len(codes)), make([]float32, len(codes))
		f16ToF32Go(wantF16, codes)
		bf16ToF32Go(wantBF16, codes)
		wantH, wantB := make([]uint16, len(floats)), make([]uint16, len(floats))
		f32ToF16Go(wantH, floats, saturate)
		f32ToBF16Go(wantB, floats, saturate)
		for _, tr := range tiers() {
			for _, nt := range []bool{false, true} {
				restore := useTier(tr)
				if nt {
					defer alwaysNonTemporal()()
				}
				f16, bf16 := make([]float32, len(codes)), make([]float32, len(codes))
				f16b, bf16b := make([]float32, len(codes)), make([]float32, len(codes))
				Float16ToFloat32(f16, codes)
				BFloat16ToFloat32(bf16, codes)
				Float16BytesToFloat32(f16b, raw)
				BFloat16BytesToFloat32(bf16b, raw)
				h, b := make([]uint16, len(floats)), make([]uint16, len(floats))
				Float32ToFloat16(h, floats, saturate)
				Float32ToBFloat16(b, floats, saturate)
				restore()
				requireSame(t, bits(wantF16), bits(f16), "%v Float16ToFloat32", tr)
				requireSame(t, bits(wantBF16), bits(bf16), "%v BFloat16ToFloat32", tr)
				requireSame(t, bits(wantF16), bits(f16b), "%v Float16BytesToFloat32", tr)
				requireSame(t, bits(wantBF16), bits(bf16b), "%v BFloat16BytesToFloat32", tr)
				requireSame(t, wantH, h, "%v Float32ToFloat16", tr)
				requireSame(t, wantB, b, "%v Float32ToBFloat16", tr)
			}
		}
	})
}
