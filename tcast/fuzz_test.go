package tcast

import (
	"testing"

	"github.com/tensorcast-go/tensorcast/mask"
)

// FuzzDecompress feeds Decompress compressed tensors whose shapes, axis and part
// bytes come from the fuzzer: it must return an error or the right number of
// values, never panic.
func FuzzDecompress(f *testing.F) {
	f.Add(uint16(0), uint8(4), uint8(40), uint8(0), int8(-1), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(0))
	f.Add(uint16(7), uint8(1), uint8(33), uint8(2), int8(1), make([]byte, 64), uint8(3))
	f.Add(uint16(100), uint8(0), uint8(0), uint8(0), int8(0), []byte{}, uint8(1))
	dts := Registered()
	f.Fuzz(func(t *testing.T, which uint16, d0, d1, d2 uint8, axis int8, data []byte, tweak uint8) {
		dt := dts[int(which)%len(dts)]
		// Small shapes keep each run fast; tweak 3 below tries huge claimed ones.
		shape := []int{int(d0 % 17), int(d1 % 140)}
		if d2 != 0 {
			shape = append(shape, int(d2%9))
		}
		opts := DefaultOptions()
		opts.Form = Compressed
		opts.Axis = int(axis) % 4
		n, _ := product(shape)
		tmpl, err := Cast(make([]float32, n), shape, dt, &opts)
		if err != nil {
			return // e.g. axis out of range or a 2-D tile on a short shape
		}
		// Overwrite every part with fuzz bytes, cut or padded to the right
		// length unless tweak says to break it.
		for i, p := range tmpl.Parts() {
			want := len(p.Bytes)
			b := make([]byte, want)
			copy(b, data)
			if len(data) > 0 {
				data = data[min(len(data), want):]
			}
			if int(tweak)%8 == i+1 {
				b = append(b, 0) // one byte too many
			}
			p.Bytes = b
		}
		switch tweak >> 4 {
		case 1:
			tmpl.Shape = append(tmpl.Shape, 2)
		case 2:
			tmpl.Axis = int(tweak)
		case 3:
			if tmpl.Scale != nil {
				tmpl.Scale.Shape = []int{1 << 40, 1 << 40}
			}
		case 4:
			tmpl.Data.Packed = !tmpl.Data.Packed
		}
		got, err := Decompress(tmpl)
		if err == nil && len(got) != n {
			t.Fatalf("%s: %d values for %d elements", dt.name, len(got), n)
		}
	})
}

// FuzzDecompressSparse is FuzzDecompress for N:M sparse datatypes, whose
// mask (any bits the fuzzer gives: N:M or not) decides which codes the
// compressed data holds.
func FuzzDecompressSparse(f *testing.F) {
	f.Add(uint8(0), uint8(2), uint8(8), false, []byte{0x99, 0x99, 0x36, 0x63}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 127})
	f.Add(uint8(3), uint8(8), uint8(1), true, []byte{0x55, 0xaa}, []byte{})
	names := []string{"e2m1_e8m0_t32n2m4", "e4m3fn_e8m0_t16n4m8", "uint8_float16_int8_t16n2m4",
		"e2m1_multi_ue4m3_float32_t16n2m4", "int8_float32_t0n1m2", "e2m1_e8m0_t16s2o1n1m2"}
	f.Fuzz(func(t *testing.T, which, rows, groups uint8, first bool, maskBytes, data []byte) {
		dt, err := Lookup(names[int(which)%len(names)])
		if err != nil {
			t.Fatal(err)
		}
		m := dt.spec.SparseM
		shape := []int{1 + int(rows)%5, m * (1 + int(groups)%9)}
		opts := &Options{Form: Compressed}
		if first {
			shape[0], shape[1] = shape[1], shape[0]
			opts.Axis = FirstAxis
		}
		n := shape[0] * shape[1]
		tmpl, err := Cast(make([]float32, n), shape, dt, opts)
		if err != nil {
			t.Fatalf("%s %v: %v", dt.name, shape, err)
		}
		mb := make([]byte, (n+7)/8)
		copy(mb, maskBytes)
		if mk, err := mask.FromBytes(shape, mb); err == nil {
			tmpl.Mask = mk
		}
		for _, p := range []*Part{tmpl.Data, tmpl.Scale, tmpl.Zero, tmpl.TensorScale, tmpl.Meta} {
			if p == nil {
				continue
			}
			b := make([]byte, len(p.Bytes))
			copy(b, data)
			data = data[min(len(data), len(b)):]
			p.Bytes = b
		}
		got, err := Decompress(tmpl)
		if err == nil && len(got) != n {
			t.Fatalf("%s: %d values for %d elements", dt.name, len(got), n)
		}
		if err == nil {
			for i, k := range tmpl.Mask.Bools() {
				if !k && got[i] != 0 {
					t.Fatalf("%s: pruned element %d decodes to %v", dt.name, i, got[i])
				}
			}
		}
	})
}
