//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestMXKernelsStayInBounds runs the MX byte kernels and the FP8 and FP6 slice
// codecs of every tier on slices that end at an inaccessible page: block
// counts up to three groups of 16 and a bit, and element counts up to three
// vectors and a bit. The six-bit dequantizers' loads (16 bytes from the
// middle of a 24-byte block, 8 bytes near its end) and the six-bit
// quantizers' stores (24 or 48 bytes of a wider register) must not touch the
// bytes after a slice.
func TestMXKernelsStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			for nb := 1; nb <= 3*16+3; nb++ {
				x := guardedCopy(t, mxEdgeBlocks(r, nb))
				scales := guardedTail[uint8](t, nb)
				dst := guardedTail[float32](t, nb*mxBlock)
				for i, q := range mxQuantizers() {
					codes := guardedTail[byte](t, nb*q.per)
					q.run(codes, scales, x)
					mxDequantizers()[i].run(dst, codes, scales)
				}
			}
			for _, f := range []*FloatCodec{&e4m3fnCodec, &e5m2Codec, &e2m3Codec, &e3m2Codec} {
				lut := new([256]float32)
				for n := 1; n <= 3*64+3; n++ {
					src := guardedCopy(t, edgeFloats(r, n))
					codes := guardedTail[byte](t, n)
					EncodeFloat(f, codes, src, RoundEven, true, 0)
					out := guardedTail[float32](t, n)
					DecodeFloat8(f, out, codes, lut)
				}
			}
		})
	})
}
