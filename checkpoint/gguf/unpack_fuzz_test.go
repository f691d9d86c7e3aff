package gguf

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// FuzzUnpackBlocks reads the fuzzer's bytes as whole blocks of every type
// UnpackBlocks takes: code·scale − min of its view must be, bit for bit
// (or both NaN), what Dequantize gives, and PackBlocks must lay the view
// out as blocks that decode to the same values, or refuse it with a
// *PackError. Seeds: the block-quantized tensors of testdata/all_types.gguf,
// hand-made and random blocks.
func FuzzUnpackBlocks(f *testing.F) {
	gf, err := Open(filepath.Join("testdata", "all_types.gguf"))
	if err != nil {
		f.Fatal(err)
	}
	for _, ti := range gf.Tensors {
		if unpackable(ti.Type) {
			b, err := gf.TensorBytes(ti.Name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(append([]byte(nil), b...))
		}
	}
	gf.Close()
	for _, hb := range handBlocks() {
		f.Add(hb.block)
	}
	f.Add(randomBlocks(rand.New(rand.NewPCG(3, 4)), TypeQ6_K, 2))
	f.Add(bytesRepeat(0xFF, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range decodedTypes {
			if !unpackable(typ) {
				continue
			}
			bs, bb := typ.BlockSize(), typ.BlockBytes()
			nb := len(data) / bb
			blocks := data[:nb*bb]
			n := nb * bs
			want := make([]float32, n)
			if err := Dequantize(typ, want, blocks); err != nil {
				t.Fatalf("%v: %v", typ, err)
			}
			ns := n / SubBlockSize(typ)
			codes, scales, mins := make([]uint8, n), make([]float32, ns), make([]float32, ns)
			UnpackBlocks(typ, codes, scales, mins, blocks)
			same := func(what string, want, got []float32) {
				for i := range want {
					w, g := want[i], got[i]
					if math.Float32bits(w) != math.Float32bits(g) && !(w != w && g != g) {
						t.Fatalf("%v %s element %d: want %v, got %v", typ, what, i, w, g)
					}
				}
			}
			same("view", want, viewValues(typ, codes, scales, mins))
			for _, c := range codes {
				if int(c) >= 1<<CodeBits(typ) {
					t.Fatalf("%v: code %d wider than %d bits", typ, c, CodeBits(typ))
				}
			}
			again := make([]byte, len(blocks))
			if err := PackBlocks(typ, again, codes, scales, mins); err != nil {
				var pe *PackError
				if !errors.As(err, &pe) {
					t.Fatalf("%v: PackBlocks: %T %v", typ, err, err)
				}
				continue
			}
			back := make([]float32, n)
			if err := Dequantize(typ, back, again); err != nil {
				t.Fatalf("%v: %v", typ, err)
			}
			same("repacked", want, back)
		}
	})
}
