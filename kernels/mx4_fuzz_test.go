package kernels

import (
	"math"
	"testing"
)

// FuzzE2M1 compares every tier's E2M1 kernels with the Go references: the
// fuzzer's bytes read as float32 values (repeated to at least 1024 of them,
// so that the assembly's groups of blocks run, and padded to whole blocks)
// for the quantizers, with the tensor scale's bits for NVFP4, and the same
// bytes read as codes and scales for the dequantizers.
func FuzzE2M1(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3e, 0, 0, 0x40, 0x3f, 0, 0, 0xa0, 0xc0, 0, 0, 0, 0x80}, math.Float32bits(0.5))
	f.Add([]byte{1, 0, 0xc0, 0x7f, 0, 0, 0x80, 0xff, 1, 0, 0, 0}, math.Float32bits(1e-40))
	f.Add([]byte{0xff, 0xff, 0x7f, 0x7f, 0xff, 0xff, 0xff, 0x40}, uint32(0))
	f.Add([]byte{}, math.Float32bits(float32(math.Inf(1))))
	f.Fuzz(func(t *testing.T, data []byte, stBits uint32) {
		raw := floatsOf(data)
		n := max(1024, len(raw)+mxBlock-1) / mxBlock * mxBlock
		x := make([]float32, n)
		for i := range x {
			if len(raw) > 0 {
				x[i] = raw[i%len(raw)]
			}
		}
		st := math.Float32frombits(stBits)
		// The dequantizers' codes and scales: the fuzzer's bytes, repeated.
		codes, scales := make([]byte, n/2), make([]byte, n/nvfp4Block)
		blocks := make([]byte, n/mxBlock*mxfp4GGUFBlockBytes)
		for _, b := range [][]byte{codes, scales, blocks} {
			for i := range b {
				if len(data) > 0 {
					b[i] = data[(i*7)%len(data)]
				}
			}
		}

		wantC, wantS := make([]byte, n/2), make([]byte, n/mxBlock)
		quantizeMXFP4Go(wantC, wantS, x)
		wantG := make([]byte, len(blocks))
		quantizeMXFP4GGUFGo(wantG, x)
		wantNC, wantNS := make([]byte, n/2), make([]byte, n/nvfp4Block)
		quantizeNVFP4Go(wantNC, wantNS, x, st)
		wantD, wantDG, wantDN := make([]float32, n), make([]float32, n), make([]float32, n)
		dequantizeMXFP4Go(wantD, codes, scales)
		dequantizeMXFP4GGUFGo(wantDG, blocks)
		dequantizeNVFP4Go(wantDN, codes, scales, st)

		for _, tr := range tiers() {
			for _, nt := range []bool{false, true} {
				restore := useTier(tr)
				restoreNT := func() {}
				if nt {
					restoreNT = alwaysNonTemporal()
				}
				c, s := make([]byte, n/2), make([]byte, n/mxBlock)
				quantizeMXFP4(c, s, x)
				g := make([]byte, len(blocks))
				quantizeMXFP4GGUF(g, x)
				nc, ns := make([]byte, n/2), make([]byte, n/nvfp4Block)
				quantizeNVFP4(nc, ns, x, st)
				d, dg, dn := make([]float32, n), make([]float32, n), make([]float32, n)
				dequantizeMXFP4(d, codes, scales)
				dequantizeMXFP4GGUF(dg, blocks)
				dequantizeNVFP4(dn, codes, scales, st)
				restoreNT()
				restore()
				requireSame(t, bytesAsU16(wantC), bytesAsU16(c), "%v quantizeMXFP4 codes", tr)
				requireSame(t, bytesAsU16(wantS), bytesAsU16(s), "%v quantizeMXFP4 scales", tr)
				requireSame(t, bytesAsU16(wantG), bytesAsU16(g), "%v quantizeMXFP4GGUF", tr)
				requireSame(t, bytesAsU16(wantNC), bytesAsU16(nc), "%v quantizeNVFP4 codes, s_t %#x", tr, stBits)
				requireSame(t, bytesAsU16(wantNS), bytesAsU16(ns), "%v quantizeNVFP4 scales, s_t %#x", tr, stBits)
				requireSame(t, floatBits(wantD), floatBits(d), "%v dequantizeMXFP4 nt=%v", tr, nt)
				requireSame(t, floatBits(wantDG), floatBits(dg), "%v dequantizeMXFP4GGUF nt=%v", tr, nt)
				requireSame(t, floatBits(wantDN), floatBits(dn), "%v dequantizeNVFP4 nt=%v, s_t %#x", tr, nt, stBits)
			}
		}
	})
}
