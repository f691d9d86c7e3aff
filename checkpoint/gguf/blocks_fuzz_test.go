package gguf

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/x448/float16"
)

// FuzzBlockCodecs reads the fuzzer's bytes as whole blocks of Q8_0, Q4_0,
// MXFP4 and NVFP4 (any bit pattern: NaN and infinite scales included).
// Unpack then Pack gives the same bytes back; Dequantize gives what the
// type's own decoder gives; and Q8_0 and Q4_0 decode as their definition
// says, computed here from the unpacked codes with x448/float16's scale:
// int8 code × d, and (q − 8) × d, in float32. Seeds: the Q8_0, Q4_0, MXFP4
// and NVFP4 tensors of testdata/all_types.gguf, and patterned bytes.
func FuzzBlockCodecs(f *testing.F) {
	gf, err := Open(filepath.Join("testdata", "all_types.gguf"))
	if err != nil {
		f.Fatal(err)
	}
	for _, ti := range gf.Tensors {
		switch ti.Type {
		case TypeQ8_0, TypeQ4_0, TypeMXFP4, TypeNVFP4:
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
	same := func(t *testing.T, what string, want, got []float32) {
		for i := range want {
			w, g := want[i], got[i]
			if math.Float32bits(w) != math.Float32bits(g) && !(w != w && g != g) {
				t.Fatalf("%s element %d: want %v, got %v", what, i, w, g)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Q8_0: 34-byte blocks, a float16 d then 32 int8 codes.
		if nb := len(data) / Q8_0BlockBytes; nb > 0 {
			src := data[:nb*Q8_0BlockBytes]
			codes, scales := make([]uint8, nb*Q8_0BlockSize), make([]uint16, nb)
			UnpackQ8_0(codes, scales, src)
			again := make([]byte, len(src))
			PackQ8_0(again, codes, scales)
			if !bytes.Equal(src, again) {
				t.Fatal("Q8_0: Pack(Unpack(blocks)) differs")
			}
			want := make([]float32, len(codes))
			for i, c := range codes {
				want[i] = float32(int8(c)) * float16.Frombits(scales[i/Q8_0BlockSize]).Float32()
			}
			got := make([]float32, len(codes))
			DequantizeQ8_0(got, src)
			same(t, "Q8_0", want, got)
			viaType := make([]float32, len(codes))
			if err := Dequantize(TypeQ8_0, viaType, src); err != nil {
				t.Fatal(err)
			}
			same(t, "Dequantize(Q8_0)", got, viaType)
		}
		// Q4_0: 18-byte blocks, a float16 d then 32 4-bit codes q, value (q − 8)·d.
		if nb := len(data) / Q4_0BlockBytes; nb > 0 {
			src := data[:nb*Q4_0BlockBytes]
			codes, scales := make([]uint8, nb*Q4_0BlockSize), make([]uint16, nb)
			UnpackQ4_0(codes, scales, src)
			again := make([]byte, len(src))
			PackQ4_0(again, codes, scales)
			if !bytes.Equal(src, again) {
				t.Fatal("Q4_0: Pack(Unpack(blocks)) differs")
			}
			want := make([]float32, len(codes))
			for i, c := range codes {
				if c > 15 {
					t.Fatalf("Q4_0 code %d", c)
				}
				want[i] = float32(int(c)-8) * float16.Frombits(scales[i/Q4_0BlockSize]).Float32()
			}
			got := make([]float32, len(codes))
			DequantizeQ4_0(got, src)
			same(t, "Q4_0", want, got)
			viaType := make([]float32, len(codes))
			if err := Dequantize(TypeQ4_0, viaType, src); err != nil {
				t.Fatal(err)
			}
			same(t, "Dequantize(Q4_0)", got, viaType)
		}
		// MXFP4: 17-byte blocks, an E8M0 scale then 32 E2M1 codes.
		if nb := len(data) / MXFP4BlockBytes; nb > 0 {
			src := data[:nb*MXFP4BlockBytes]
			codes, scales := make([]uint8, nb*MXFP4BlockSize), make([]uint8, nb)
			UnpackMXFP4(codes, scales, src)
			again := make([]byte, len(src))
			PackMXFP4(again, codes, scales)
			if !bytes.Equal(src, again) {
				t.Fatal("MXFP4: Pack(Unpack(blocks)) differs")
			}
			got, viaType := make([]float32, len(codes)), make([]float32, len(codes))
			DequantizeMXFP4(got, src)
			if err := Dequantize(TypeMXFP4, viaType, src); err != nil {
				t.Fatal(err)
			}
			same(t, "Dequantize(MXFP4)", got, viaType)
		}
		// NVFP4: 36-byte blocks of 64 elements, four UE4M3 scales.
		if nb := len(data) / NVFP4BlockBytes; nb > 0 {
			src := data[:nb*NVFP4BlockBytes]
			codes, scales := make([]uint8, nb*NVFP4BlockSize), make([]uint8, 4*nb)
			UnpackNVFP4(codes, scales, src)
			again := make([]byte, len(src))
			PackNVFP4(again, codes, scales)
			if !bytes.Equal(src, again) {
				t.Fatal("NVFP4: Pack(Unpack(blocks)) differs")
			}
			got, viaType := make([]float32, len(codes)), make([]float32, len(codes))
			DequantizeNVFP4(got, src)
			if err := Dequantize(TypeNVFP4, viaType, src); err != nil {
				t.Fatal(err)
			}
			same(t, "Dequantize(NVFP4)", got, viaType)
		}
	})
}
