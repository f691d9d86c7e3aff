package kernels

import (
	"testing"
)

// FuzzE4M3Search compares every tier's fused E4M3 searches with the codec
// reference: the fuzzer's bytes read as float32 values (padded with zeros to
// whole blocks of 32) searched as MXFP8 blocks and as E4M3 tiles of a
// fuzzed geometry.
func FuzzE4M3Search(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0xcd, 0xcc, 0x8c, 0x3f, 0, 0, 0x80, 0x7f, 1, 0, 0, 0}, uint16(0))
	f.Add([]byte{0x00, 0x00, 0xe8, 0x43, 0x00, 0x00, 0x60, 0x47, 0x01, 0x00, 0x00, 0x00, 0x33, 0x33, 0xf3, 0x3f}, uint16(0x123))
	f.Add(make([]byte, 4*96), uint16(0x4f))
	f.Fuzz(func(t *testing.T, data []byte, shape uint16) {
		x := floatsOf(data)
		nb := (len(x) + mxBlock - 1) / mxBlock
		src := make([]float32, nb*mxBlock)
		copy(src, x)
		wc, ws := make([]byte, len(src)), make([]byte, nb)
		searchMXFP8Ref(wc, ws, src)
		tl := FP8Tiles{TileRows: int(shape & 7), TileCols: int(shape>>3&0x3f) * 4}
		if c := int(shape >> 9); c > 0 && len(src)%c == 0 {
			tl.Cols = c
		}
		_, _, _, _, _, tiles := tl.geometry("fuzz", len(src))
		fc, fs := make([]byte, len(src)), make([]byte, 4*tiles)
		searchE4M3Ref(fc, fs, src, tl)
		for _, tr := range tiers() {
			restore := useTier(tr)
			c, s := make([]byte, len(src)), make([]byte, nb)
			searchMXFP8(c, s, src)
			ec, es := make([]byte, len(src)), make([]byte, 4*tiles)
			searchE4M3(ec, es, src, tl)
			restore()
			requireBytes(t, ws, s, "%v MXFP8 scales", tr)
			requireBytes(t, wc, c, "%v MXFP8 codes", tr)
			requireBytes(t, fs, es, "%v E4M3 %+v scales", tr, tl)
			requireBytes(t, fc, ec, "%v E4M3 %+v codes", tr, tl)
		}
	})
}
