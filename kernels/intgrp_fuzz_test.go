package kernels

import (
	"testing"
)

// FuzzIntGroups compares every tier's integer-group kernels with the Go
// references on the fuzzer's bytes read as float32 values (quantizers) and
// as codes, scales and zero points (dequantizers), for a geometry drawn from
// shape: bits, scale format, zero-point format, group size and row length.
func FuzzIntGroups(f *testing.F) {
	f.Add([]byte{0, 0, 0xfe, 0x42, 0, 0, 0xc0, 0x7f, 1, 0, 0, 0, 0, 0, 0x80, 0xbf}, uint16(0x1234))
	f.Add(make([]byte, 4*130), uint16(0x0102))
	f.Fuzz(func(t *testing.T, data []byte, shape uint16) {
		src := floatsOf(data)
		n := len(src)
		g := IntGroups{Bits: 8, Scale: ScaleFormat(shape & 1), SignedZero: shape&2 != 0}
		if shape&4 != 0 {
			g.Bits = 4
		}
		g.Group = int(shape>>3&0xff) % 140
		if rows := int(shape>>11) + 1; n%rows == 0 {
			g.Cols = n / rows
		}
		_, _, groups := g.geometry("fuzz", n)
		nc := g.codeBytes(n)
		wc, ws, wz := make([]byte, nc), make([]byte, groups*g.Scale.Bytes()), make([]byte, groups)
		ac, as := make([]byte, nc), make([]byte, len(ws))
		quantIntSymGo(wc, ws, src, g)
		clearLastNibble(wc, n, g.Bits)
		quantIntAsymGo(ac, as, wz, src, g)
		clearLastNibble(ac, n, g.Bits)
		// The input bytes as encoded data.
		rc, rs, rz := make([]byte, nc), make([]byte, len(ws)), make([]byte, groups)
		copy(rc, data)
		copy(rs, data[min(len(data), nc):])
		copy(rz, data[min(len(data), nc+len(rs)):])
		wantS, wantA := make([]float32, n), make([]float32, n)
		dequantIntSymGo(wantS, rc, rs, g)
		dequantIntAsymGo(wantA, rc, rs, rz, g)
		for _, tr := range tiers() {
			restore := useTier(tr)
			c, s, z := make([]byte, nc), make([]byte, len(ws)), make([]byte, groups)
			quantizeIntSym(c, s, src, g)
			c2, s2 := make([]byte, nc), make([]byte, len(ws))
			quantizeIntAsym(c2, s2, z, src, g)
			gotS, gotA := make([]float32, n), make([]float32, n)
			dequantizeIntSym(gotS, rc, rs, g)
			dequantizeIntAsym(gotA, rc, rs, rz, g)
			restore()
			for _, cmp := range []struct {
				what      string
				want, got []byte
			}{{"sym codes", wc, c}, {"sym scales", ws, s}, {"asym codes", ac, c2}, {"asym scales", as, s2}, {"zeros", wz, z}} {
				for i := range cmp.want {
					if cmp.want[i] != cmp.got[i] {
						t.Fatalf("%v %+v %s byte %d: %#x, want %#x", tr, g, cmp.what, i, cmp.got[i], cmp.want[i])
					}
				}
			}
			requireSame(t, floatBits(wantS), floatBits(gotS), "%v %+v dequantizeIntSym", tr, g)
			requireSame(t, floatBits(wantA), floatBits(gotA), "%v %+v dequantizeIntAsym", tr, g)
		}
	})
}

// FuzzE4M3 compares every tier's E4M3 kernels with the Go references on the
// fuzzer's bytes read as float32 values (quantizer) and as codes and scales
// (dequantizer), for tiles drawn from shape.
func FuzzE4M3(f *testing.F) {
	f.Add([]byte{0, 0, 0x60, 0x44, 0, 0, 0x88, 0x3f, 0, 0, 0xc0, 0x7f, 1, 0, 0, 0}, uint16(0x0101))
	f.Add(make([]byte, 4*256), uint16(0x2222))
	f.Fuzz(func(t *testing.T, data []byte, shape uint16) {
		src := floatsOf(data)
		n := len(src)
		tl := FP8Tiles{TileRows: int(shape & 7), TileCols: int(shape>>3&0x3f) * 3}
		if rows := int(shape>>9) + 1; n%rows == 0 {
			tl.Cols = n / rows
		}
		_, _, _, _, _, tiles := tl.geometry("fuzz", n)
		wc, ws := make([]byte, n), make([]byte, 4*tiles)
		quantE4M3Go(wc, ws, src, tl)
		rc, rs := make([]byte, n), make([]byte, 4*tiles)
		copy(rc, data)
		copy(rs, data[min(len(data), n):])
		want := make([]float32, n)
		dequantE4M3Go(want, rc, rs, tl)
		for _, tr := range tiers() {
			restore := useTier(tr)
			c, s := make([]byte, n), make([]byte, 4*tiles)
			quantizeE4M3(c, s, src, tl)
			got := make([]float32, n)
			dequantizeE4M3(got, rc, rs, tl)
			restore()
			for i := range wc {
				if c[i] != wc[i] {
					t.Fatalf("%v %+v code %d: %#x, want %#x", tr, tl, i, c[i], wc[i])
				}
			}
			for i := range ws {
				if s[i] != ws[i] {
					t.Fatalf("%v %+v scale byte %d: %#x, want %#x", tr, tl, i, s[i], ws[i])
				}
			}
			requireSame(t, floatBits(want), floatBits(got), "%v %+v dequantizeE4M3", tr, tl)
		}
	})
}
