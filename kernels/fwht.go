package kernels

import (
	"fmt"
	"math"
	"math/bits"
)

// FWHTRows writes to dst the normalised Walsh–Hadamard transform of every
// run of block consecutive values of src: each run x becomes H·x, H being
// Sylvester's Hadamard matrix of order block divided by √block.
//
// The transform runs in float64: x is widened, the fast Walsh–Hadamard
// transform replaces, at each stage h = 1, 2, 4, ..., block/2 in turn, every
// pair (a, b) = (x[i+j], x[i+j+h]) by (a+b, a−b), and each result is
// multiplied by FWHTScale(block) and rounded once to float32 (to nearest,
// ties to even). Every tier does the same sums and differences on the same
// values, so all give the same bits; a NaN result is a NaN in every tier,
// but its sign and payload are not specified (neither are they by Go's own
// float64 additions).
//
// block is a power of two ≥ 2; len(dst) = len(src) is a multiple of it;
// dst is src (a transform in place) or does not overlap it; buf is scratch
// of at least block values. FWHTRows panics otherwise.
func FWHTRows(dst, src []float32, block int, buf []float64) {
	if block < 2 || block&(block-1) != 0 || len(dst) != len(src) || len(src)%block != 0 || len(buf) < block {
		panic(fmt.Sprintf("kernels: FWHTRows of %d values into %d in blocks of %d with %d of scratch", len(src), len(dst), block, len(buf)))
	}
	if len(src) == 0 {
		return
	}
	fwhtRows(dst, src, block, buf[:block])
}

// FWHTScale returns 1/√n for a power of two n, the factor that makes the
// Walsh–Hadamard matrix of order n orthonormal: a power of two (exact) when
// n is a power of four, else 2^⌊−k/2⌋ times the float64 nearest √2/2.
func FWHTScale(n int) float64 {
	k := bits.TrailingZeros(uint(n))
	s := math.Ldexp(1, -k/2)
	if k%2 == 1 {
		s *= math.Sqrt2 / 2
	}
	return s
}

// fwhtRowsGo is the reference of FWHTRows: one block at a time through
// fwhtBlockGo.
func fwhtRowsGo(dst, src []float32, block int, buf []float64) {
	sc := FWHTScale(block)
	for b := 0; b < len(src); b += block {
		fwhtBlockGo(buf, src[b:b+block], dst[b:b+block], sc)
	}
}

// fwhtBlockGo widens x to float64 into buf (of the same power-of-two length
// ≥ 2), runs the transform's first two stages as it widens, then the others
// two at a time (fwhtStage4), and writes each result times sc, rounded to
// float32, to dst (which may be x) as the last stage gives it.
func fwhtBlockGo(buf []float64, x, dst []float32, sc float64) {
	if len(buf) == 2 {
		a, b := float64(x[0]), float64(x[1])
		dst[0], dst[1] = float32((a+b)*sc), float32((a-b)*sc)
		return
	}
	if len(buf) == 4 {
		a, b, c, d := float64(x[0]), float64(x[1]), float64(x[2]), float64(x[3])
		ab, amb, cd, cmd := a+b, a-b, c+d, c-d
		dst[0], dst[1], dst[2], dst[3] = float32((ab+cd)*sc), float32((amb+cmd)*sc), float32((ab-cd)*sc), float32((amb-cmd)*sc)
		return
	}
	for y, z := buf, x; len(y) >= 4 && len(z) >= 4; y, z = y[4:], z[4:] {
		a, b, c, d := float64(z[0]), float64(z[1]), float64(z[2]), float64(z[3])
		ab, amb, cd, cmd := a+b, a-b, c+d, c-d
		y[0], y[1], y[2], y[3] = ab+cd, amb+cmd, ab-cd, amb-cmd
	}
	h := 4
	for ; 8*h <= len(buf); h *= 4 {
		fwhtStage4(buf, h)
	}
	// One or two stages are left: the last writes dst.
	if 2*h == len(buf) {
		p, q := buf[:h], buf[h:]
		q = q[:len(p)]
		dp, dq := dst[:len(p)], dst[h:]
		dq = dq[:len(p)]
		for j := range p {
			dp[j], dq[j] = float32((p[j]+q[j])*sc), float32((p[j]-q[j])*sc)
		}
		return
	}
	p, q, r, s := buf[:h], buf[h:2*h], buf[2*h:3*h], buf[3*h:]
	q, r, s = q[:len(p)], r[:len(p)], s[:len(p)]
	dp, dq, dr, ds := dst[:h], dst[h:2*h], dst[2*h:3*h], dst[3*h:]
	dp, dq, dr, ds = dp[:len(p)], dq[:len(p)], dr[:len(p)], ds[:len(p)]
	for j := range p {
		a, b, c, d := p[j], q[j], r[j], s[j]
		ab, amb, cd, cmd := a+b, a-b, c+d, c-d
		dp[j], dq[j], dr[j], ds[j] = float32((ab+cd)*sc), float32((amb+cmd)*sc), float32((ab-cd)*sc), float32((amb-cmd)*sc)
	}
}

// FWHT is the unnormalised fast Walsh–Hadamard transform of x in place,
// len(x) a power of two (other lengths are left as they are): at each stage
// h = 1, 2, 4, ..., every pair (a, b) = (x[i+j], x[i+j+h]) becomes
// (a+b, a−b), in float64 and in the order FWHTRows computes them.
func FWHT(x []float64) {
	n := len(x)
	if n < 2 || n&(n-1) != 0 {
		return
	}
	if n == 2 {
		x[0], x[1] = x[0]+x[1], x[0]-x[1]
		return
	}
	for y := x; len(y) >= 4; y = y[4:] {
		a, b, c, d := y[0], y[1], y[2], y[3]
		ab, amb, cd, cmd := a+b, a-b, c+d, c-d
		y[0], y[1], y[2], y[3] = ab+cd, amb+cmd, ab-cd, amb-cmd
	}
	h := 4
	for ; 4*h <= n; h *= 4 {
		fwhtStage4(x, h)
	}
	if 2*h == n {
		p, q := x[:h], x[h:]
		q = q[:len(p)]
		for j := range p {
			p[j], q[j] = p[j]+q[j], p[j]-q[j]
		}
	}
}

// fwhtStage4 runs the stages h and 2h of the transform on x: the same sums
// and differences on four values at once.
func fwhtStage4(x []float64, h int) {
	n := len(x)
	for i := 0; i < n; i += 4 * h {
		p, q, r, s := x[i:i+h], x[i+h:i+2*h], x[i+2*h:i+3*h], x[i+3*h:i+4*h]
		q, r, s = q[:len(p)], r[:len(p)], s[:len(p)]
		for j := range p {
			a, b, c, d := p[j], q[j], r[j], s[j]
			ab, amb, cd, cmd := a+b, a-b, c+d, c-d
			p[j], q[j], r[j], s[j] = ab+cd, amb+cmd, ab-cd, amb-cmd
		}
	}
}
