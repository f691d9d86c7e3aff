package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/x448/float16"
)

// FuzzBlockCodecs reads the fuzzer's bytes as whole blocks of each type
// SplitBlocks takes (any bit pattern: NaN and infinite scales included).
// SplitBlocks then JoinBlocks gives the same bytes back (for TQ1_0, whose
// bytes hold base-3 numbers, bytes that decode to the same values), and
// Dequantize gives what the type's definition says, computed here from
// the split codes and scales: int8 code × d and int4 code × d for Q8_0 and
// Q4_0 (d through x448/float16), e2m1 × 2^(e−127) for MXFP4 (NaN for
// e = 0xFF), e2m1 × ue4m3 for NVFP4 (ggml's scale rule, nvfp4Scale),
// (code − 1) × d for TQ1_0, TQ2_0 and Q2_0, (2·code − 1) × d for Q1_0.
// Seeds: those types' tensors of testdata/all_types.gguf, and patterned
// bytes.
func FuzzBlockCodecs(f *testing.F) {
	gf, err := Open(filepath.Join("testdata", "all_types.gguf"))
	if err != nil {
		f.Fatal(err)
	}
	for _, ti := range gf.Tensors {
		if CanSplit(ti.Type) {
			b, err := gf.TensorBytes(ti.Name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(append([]byte(nil), b...))
		}
	}
	gf.Close()
	f.Add(bytesRepeat(0xFF, 144))
	f.Add(bytes.Repeat([]byte{0x00, 0x7c, 0x88, 0x7f}, 36))
	f16 := func(s []byte, i int) float32 {
		return float16.Frombits(binary.LittleEndian.Uint16(s[2*i:])).Float32()
	}
	value := map[Type]func(c uint8, s []byte, i int) float32{
		TypeQ8_0: func(c uint8, s []byte, i int) float32 { return float32(int8(c)) * f16(s, i/32) },
		TypeQ4_0: func(c uint8, s []byte, i int) float32 { return float32(int8(c<<4)>>4) * f16(s, i/32) },
		TypeMXFP4: func(c uint8, s []byte, i int) float32 {
			if s[i/32] == 0xFF {
				return float32(math.NaN())
			}
			return float32(math.Ldexp(float64(e2m1(c)), int(s[i/32])-127))
		},
		TypeNVFP4: func(c uint8, s []byte, i int) float32 { return e2m1(c) * nvfp4Scale(s[i/16]) },
		TypeTQ1_0: func(c uint8, s []byte, i int) float32 { return float32(int(c)-1) * f16(s, i/256) },
		TypeTQ2_0: func(c uint8, s []byte, i int) float32 { return float32(int(c)-1) * f16(s, i/256) },
		TypeQ2_0:  func(c uint8, s []byte, i int) float32 { return float32(int(c)-1) * f16(s, i/64) },
		TypeQ1_0:  func(c uint8, s []byte, i int) float32 { return float32(2*int(c)-1) * f16(s, i/128) },
	}
	scaleBytes := map[Type]int{TypeQ8_0: 2, TypeQ4_0: 2, TypeMXFP4: 1, TypeNVFP4: 1, // per scale
		TypeTQ1_0: 2, TypeTQ2_0: 2, TypeQ2_0: 2, TypeQ1_0: 2}
	f.Fuzz(func(t *testing.T, data []byte) {
		for typ := range value {
			nb := len(data) / typ.BlockBytes()
			if nb == 0 {
				continue
			}
			src := data[:nb*typ.BlockBytes()]
			n := nb * typ.BlockSize()
			codes, scales := make([]uint8, n), make([]byte, n/SubBlockSize(typ)*scaleBytes[typ])
			SplitBlocks(typ, codes, scales, src)
			again := make([]byte, len(src))
			if err := JoinBlocks(typ, again, codes, scales); err != nil {
				t.Fatalf("%v: Join(Split(blocks)): %v", typ, err)
			}
			got, back := make([]float32, n), make([]float32, n)
			if err := Dequantize(typ, got, src); err != nil {
				t.Fatal(err)
			}
			if err := Dequantize(typ, back, again); err != nil {
				t.Fatal(err)
			}
			if typ == TypeTQ1_0 {
				if !sameFloats(got, back) {
					t.Fatalf("%v: Join(Split(blocks)) decodes differently", typ)
				}
			} else if !bytes.Equal(src, again) {
				t.Fatalf("%v: Join(Split(blocks)) differs", typ)
			}
			for i, c := range codes {
				w, g := value[typ](c, scales, i), got[i]
				if math.Float32bits(w) != math.Float32bits(g) && !(w != w && g != g) {
					t.Fatalf("%v element %d: want %v, got %v", typ, i, w, g)
				}
			}
		}
	})
}

// nvfp4Scale decodes an NVFP4 scale byte by ggml's rule (ggml_ue4m3_to_fp32
// times 2), transcribed from ggml-impl.h: 0x00 and 0x7F are 0; otherwise
// bits 6..3 are the exponent (bias 7), bits 2..0 the mantissa, subnormal
// for exponent 0; bit 7 is ignored (so 0xFF is not 0).
func nvfp4Scale(b byte) float32 {
	if b == 0 || b == 0x7F {
		return 0
	}
	e, m := int(b>>3&0xF), float64(b&7)
	if e == 0 {
		return float32(math.Ldexp(m/8, -6))
	}
	return float32(math.Ldexp(1+m/8, e-7))
}

// sameFloats reports whether a and b hold the same bits, any NaN matching
// any NaN.
func sameFloats(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}
