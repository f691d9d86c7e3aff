// Command search4 generates the fused scale-search kernels of the E2M1
// datatypes (MXFP4, NVFP4) of package kernels: search4_amd64.s and the stub
// declarations in search4_stubs_amd64.go.
//
//	cd kernels/_asm && go run ./search4 -out ../search4_amd64.s -stubs ../search4_stubs_amd64.go -pkg kernels
//
// Each kernel takes 16 blocks per step: the blocks transposed through the
// stack (element j of the 16 blocks in one vector), their maxima, the rule's
// scale codes and the candidates' in a vector (a block per lane), float32
// estimates of the candidates' squared errors with a block per lane, the
// choice where the estimates' error bounds settle it (sqErrE2M1's float64
// sums then order the candidates as the estimates do; a strictly smaller
// error replaces the best, candidates in the reference's order), the blocks
// where they do not marked for the Go reference, then each block encoded
// with its chosen scale and packed within the next step's estimate loop
// (whose float32 multiply-adds leave the other units idle).
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

var cs = gen.Consts{Prefix: "srch"}

var (
	// magicTab[trunc(a)] is the magic addend 1.5·2^23·s of the magnitude
	// a ≤ 6 (s = 0.5 below 2, 1 below 4, 2 from 4 on), plus 8 ulps in
	// [2, 4) and 16 ulps from 4 on: a + m − m is a rounded to a multiple of
	// s all the same, and the low 5 bits of a + m are the step count n,
	// 8+n or 16+n.
	magicTab Mem
	// codeTab[low 5 bits of a + m] is the E2M1 magnitude code.
	codeTab Mem
	// valueTab[n] is the E2M1 value of a magnitude a in (n/4, (n+1)/4)
	// (n ≤ 30; a = 0 as n = 31): errTerm's rounding.
	valueTab Mem
)

func main() {
	gen.Main(func() {
		var m []uint32
		for i := range 16 {
			switch {
			case i < 2:
				m = append(m, magicHalf) // steps n of 0.5: n in the low bits
			case i < 4:
				m = append(m, magicOne+8) // steps n of 1: 8+n
			default:
				m = append(m, magicTwo+16) // steps n of 2: 16+n (ulps of 2)
			}
		}
		magicTab = gen.Table("srchMagic", m)
		c := make([]uint32, 32)
		for n := range 5 {
			c[n] = uint32(n) // 0, 0.5, 1, 1.5, 2
		}
		for n := 2; n <= 4; n++ {
			c[8+n] = uint32(n + 2)        // 2, 3, 4
			c[16+n] = uint32(min(n+4, 7)) // 4, 6 (8 is never reached: a ≤ 6)
		}
		codeTab = gen.Table("srchCode", c)
		v := make([]uint32, 32)
		for n := range 31 {
			v[n] = math.Float32bits(e2m1Value(float64(n)/4 + 0.125))
		}
		valueTab = gen.Table("srchValue", v)
		searchMXFP4AVX512()
		searchNVFP4AVX512()
	})
}

// e2m1Value is the E2M1 value nearest a ≥ 0 (a not on a rounding boundary),
// 6 above 6.
func e2m1Value(a float64) float32 {
	best := float32(0)
	for _, r := range []float32{0.5, 1, 1.5, 2, 3, 4, 6} {
		if math.Abs(a-float64(r)) < math.Abs(a-float64(best)) {
			best = r
		}
	}
	return best
}

// The magic numbers 1.5·2^23·s that round |q| to a multiple of s by
// (|q| + m) − m, s being the E2M1 step of |q|'s range: 0.5 below 2, 1 below 4,
// 2 above.
const (
	magicHalf = (149 << 23) | 0x400000 // 1.5·2^22
	magicOne  = (150 << 23) | 0x400000 // 1.5·2^23
	magicTwo  = (151 << 23) | 0x400000 // 1.5·2^24
	six       = (129 << 23) | 0x400000
	absBits   = 0x7fffffff
)

func bcast(c uint32, v VecPhysical) { VPBROADCASTD(cs.Vec(c), v) }

// loadRoundConsts puts the rounding constants in Z20, Z21, Z23, Z24 and
// Z26: the abs mask, magicTab, codeTab (two vectors) and 6; and errTerm's
// in Z12, Z19, Z22 and Z25: the index addend, the index clamp and
// valueTab (two vectors).
//
// E2M1 rounding of a magnitude a ≤ 6 (encodePack): a plus and minus the
// magic of its range (magicTab by trunc(a)) is a rounded to the range's
// step, nearest even.
func loadRoundConsts() {
	bcast(absBits, Z20)
	VMOVDQU32(magicTab, Z21)
	VMOVDQU32(codeTab, Z23)
	VMOVDQU32(codeTab.Offset(64), Z24)
	bcast(six, Z26)
	bcast(quarterAddend, Z12)
	bcast(quarterClamp, Z19)
	VMOVUPS(valueTab, Z22)
	VMOVUPS(valueTab.Offset(64), Z25)
}

// The estimates' E2M1 rounding of a = |x|·m (m the multiplier or the
// reciprocal of the divisor) looks the value up in valueTab by the
// quarter index n = RN(4a − 1/2), ties to even: the fused multiply-add
// |x|·m + (2^21 − 1/8), rounded once to float32, is 2^21 + n/4 for
// a ≥ 1/8 (the binade's step is 1/4) and 2^21 − 1/8 or 2^21 below (low 5
// bits 31 or 0), so n is its low 5 bits; above 7.5 (n ≥ 31, an infinity,
// a NaN) the bits are clamped to n = 30. n is floor(4a) except where 4a is
// an integer, and every E2M1 rounding boundary (0.25, 0.75, 1.25, 1.75,
// 2.5, 3.5, 5) is a multiple of 1/4: valueTab[n] is a's E2M1 value except
// at a boundary, where it may be the other neighbour, at the same distance
// from a.
const (
	quarterAddend = 0x49ffffff // 2^21 − 1/8
	quarterClamp  = 0x4a00001e // 2^21 + 30/4
)

// errTerm adds to acc the float32 estimate of a candidate's error term,
// (|x| − float32(r·d))², |x| in Z13, r the E2M1 magnitude of |x|·m (see
// valueTab), m and d the candidate's multiplier (or reciprocal) and
// divisor; Z17 is scratch. With q's sign restored, x − float32(r·d) is
// this difference with x's sign, so the estimate is sqErrE2M1's term
// rounded to float32 (see decide). Without clamp, the caller drops the
// estimates of the blocks where amax·m > 7.5, whose indices may wrap.
func errTerm(m, d, acc VecPhysical, clamp bool) {
	// A NaN or infinite a (an infinite reciprocal) gives r = 6; the
	// estimates of divisors outside [2^−125, 2^125] are replaced by NaN
	// after the loop, and a lane whose multiplier is infinite (MXFP4's
	// rule − 1 of code 0) is not a candidate.
	VMOVAPS(Z12, Z17)
	VFMADD231PS(m, Z13, Z17) // |x|·m + 2^21 − 1/8
	if clamp {
		VPMINUD(Z19, Z17, Z17)
	}
	VPERMI2PS(Z25, Z22, Z17) // valueTab[n]
	VMULPS(d, Z17, Z17)
	VSUBPS(Z17, Z13, Z17)
	VFMADD231PS(Z17, Z17, acc) // acc + e², one rounding
}

// errTermScaled adds to acc the float32 estimate of a candidate's error
// term divided by d² for a power-of-two divisor d = 1/m (MXFP4):
// (|x|·m − r)², the difference rounded once from the exact |x|·m − r =
// (|x| − r·d)/d, r as in errTerm; Z17 is scratch. Scaled by d², the
// estimate is errTerm's wherever no value is subnormal, and it never
// overflows.
func errTermScaled(m, acc VecPhysical, clamp bool) {
	VMOVAPS(Z12, Z17)
	VFMADD231PS(m, Z13, Z17) // |x|·m + 2^21 − 1/8
	if clamp {
		VPMINUD(Z19, Z17, Z17)
	}
	VPERMI2PS(Z25, Z22, Z17)   // r = valueTab[n]
	VFMSUB231PS(m, Z13, Z17)   // |x|·m − r
	VFMADD231PS(Z17, Z17, acc) // acc + e², one rounding
}

// The bounds of the float32 estimates: a block's estimate A (n ≤ 32 terms,
// each the square of the float32 rounding of the exact difference, added by
// a fused multiply-add) and sqErrE2M1's float64 sum E of the same terms both
// lie within (n+3)·2^−24 of the exact sum, relatively, when no term
// overflows float32, plus 2^−149 a term where one underflows. NVFP4's
// estimates take the quotient |x|·float32(1/d), within 2 ulps of x/d: it
// may round to the other E2M1 value only within 2 ulps of a rounding
// boundary b (between r1 and r2), where the two terms differ by at most
// 16·2^−23·b/(r2−r1) ≤ 56·2^−23 of their size. So E lies in
// [A·(1−2^−14) − 2^−140, A·(1+2^−14) + 2^−140], with a wide margin.
const (
	boundHi = 0x3f800200 // 1 + 2^−14
	boundLo = 0x3f7ffc00 // 1 − 2^−14
	slack   = 0x00000200 // 2^−140
	infBits = 0x7f800000
)

// prefetchAhead is how far ahead of the step's blocks (at RSI) the kernels
// prefetch: the hardware prefetchers alone do not keep the input streaming.
const prefetchAhead = 8 << 10

// prefetch asks for the n bytes (whole cache lines) prefetchAhead beyond RSI.
func prefetch(n int) {
	for off := 0; off < n; off += 64 {
		PREFETCHT0(Mem{Base: RSI, Disp: prefetchAhead + off})
	}
}

// transpose16 writes the magnitudes of the 16×16 float32 matrix whose row b
// is the 64 bytes at row(b) transposed to the 16 vectors at col(j): col(j)
// gets |element j| of every row (the sign bit cleared). It unpacks pairs of rows (VUNPCK[LH]PS), pairs of pairs
// (VUNPCK[LH]PD) and then 128-bit lanes (VSHUFF32X4) and uses Z0–Z31.
func transpose16(row, col func(i int) Mem) {
	for i := range 8 {
		VMOVUPS(row(2*i), gen.Z(i))
	}
	// t[2i], t[2i+1]: rows 2i, 2i+1 interleaved (elements 0,1 and 2,3 of
	// each 128-bit lane).
	for i := range 8 {
		VUNPCKLPS(row(2*i+1), gen.Z(i), gen.Z(16+2*i))
		VUNPCKHPS(row(2*i+1), gen.Z(i), gen.Z(17+2*i))
	}
	// u[4i+c]: rows 4i..4i+3, column 4L+c in lane L.
	for i := range 4 {
		t := func(k int) VecPhysical { return gen.Z(16 + 4*i + k) }
		VUNPCKLPD(t(2), t(0), gen.Z(4*i))
		VUNPCKHPD(t(2), t(0), gen.Z(4*i+1))
		VUNPCKLPD(t(3), t(1), gen.Z(4*i+2))
		VUNPCKHPD(t(3), t(1), gen.Z(4*i+3))
	}
	// v: rows 8g..8g+7 in lanes (4 rows each), columns c, 8+c (0x88) and
	// 4+c, 12+c (0xDD).
	for g := range 2 {
		for c := range 4 {
			a, b := gen.Z(8*g+c), gen.Z(8*g+4+c)
			VSHUFF32X4(U8(0x88), b, a, gen.Z(16+8*g+c))
			VSHUFF32X4(U8(0xdd), b, a, gen.Z(16+8*g+4+c))
		}
	}
	// Whole columns: c, 8+c from the first v of each half, 4+c, 12+c from
	// the second.
	for c := range 4 {
		for k, off := range []int{0, 4} {
			a, b := gen.Z(16+off+c), gen.Z(24+off+c)
			VSHUFF32X4(U8(0x88), b, a, gen.Z(2*c+8*k))
			VSHUFF32X4(U8(0xdd), b, a, gen.Z(2*c+8*k+1))
			VPANDD_BCST(cs.Vec(absBits), gen.Z(2*c+8*k), gen.Z(2*c+8*k))
			VPANDD_BCST(cs.Vec(absBits), gen.Z(2*c+8*k+1), gen.Z(2*c+8*k+1))
			VMOVUPS(gen.Z(2*c+8*k), col(c+4*k))
			VMOVUPS(gen.Z(2*c+8*k+1), col(c+4*k+8))
		}
	}
}

// loadX loads |x| of element j of the 16 blocks (transposed by
// transpose16, at RBX) into Z13.
func loadX() {
	VMOVUPS(Mem{Base: RBX}, Z13)
}

// columnMax leaves in Z0 the largest |x| (as bits, so that NaNs and
// infinities count as the largest) of each of the 16 blocks whose n
// transposed magnitude columns are at col(j); Z1 is scratch.
func columnMax(n int, col func(j int) Mem) {
	VMOVDQU32(col(0), Z0)
	VMOVDQU32(col(1), Z1)
	for j := 2; j < n; j++ {
		VPMAXUD(col(j), gen.Z(j%2), gen.Z(j%2))
	}
	VPMAXUD(Z1, Z0, Z0)
}

// decide compares the candidate's estimates a with the best's b (replaced
// where the candidate wins): K2 gets the lanes (within valid, if not nil)
// where the candidate's exact error is certainly below the best's, the
// lanes where it is certainly not below it are left alone, and the rest
// (within valid), the lanes whose order the estimates cannot tell, are
// added to K7; a lane with an infinite estimate is never certain. Z14–Z16
// are scratch, K1 and K3 too.
func decide(a, b VecPhysical, valid Op) {
	VCMPPS_BCST(U8(0x11), cs.Vec(infBits), a, K1) // a finite
	VCMPPS_BCST(U8(0x11), cs.Vec(infBits), b, K3)
	KANDW(K1, K3, K1)
	VMULPS_BCST(cs.Vec(boundHi), a, Z14)
	VADDPS_BCST(cs.Vec(slack), Z14, Z14) // a's upper bound
	VMULPS_BCST(cs.Vec(boundLo), b, Z15)
	VSUBPS_BCST(cs.Vec(slack), Z15, Z15) // b's lower bound
	VCMPPS(U8(0x11), Z15, Z14, K1, K2)   // certainly below
	VMULPS_BCST(cs.Vec(boundLo), a, Z14)
	VSUBPS_BCST(cs.Vec(slack), Z14, Z14) // a's lower bound
	VMULPS_BCST(cs.Vec(boundHi), b, Z15)
	VADDPS_BCST(cs.Vec(slack), Z15, Z15) // b's upper bound
	VCMPPS(U8(0x1e), Z15, Z14, K1, K3)   // certainly not below
	if valid != nil {
		KANDW(valid, K2, K2)
	}
	KORW(K2, K3, K3)
	KNOTW(K3, K3)
	if valid != nil {
		KANDW(valid, K3, K3)
	}
	KORW(K3, K7, K7)
	VMOVAPS(a, K2, b)
}

// encodePack leaves in the 8 bytes at m the packed E2M1 codes of the 16
// scaled values q (not NaN): a = min(|q|, 6) plus the magic of its range
// holds the step count in its low 5 bits, which index codeTab for the
// magnitude code; the sign is bit 3, element 2k in the low nibble of byte
// k. eight holds 8 in every lane (nil: a broadcast from memory); a, t, c
// and s are scratch.
func encodePack(q, a, t, c, s VecPhysical, eight Op, m Mem) {
	VRANGEPS(U8(0x0a), Z26, q, a) // min(|q|, 6), sign cleared
	VCVTTPS2DQ(a, s)
	VPERMD(Z21, s, t)
	VADDPS(t, a, c)
	VPERMI2D(Z24, Z23, c) // codeTab[low 5 bits]
	VPSRLD(U8(28), q, s)
	if eight == nil {
		VPTERNLOGD_BCST(U8(0xf8), cs.Vec(8), s, c) // code | sign>>28 & 8
	} else {
		VPTERNLOGD(U8(0xf8), eight, s, c)
	}
	VPSRLQ(U8(28), c, s)
	VPORD(s, c, c) // byte 8k: code 2k | code 2k+1 << 4
	VPMOVQB(c, m)
}

// storeRedo stores to the next uint16 of redo (R10) the blocks whose choice
// the estimates could not make (K7), all-zero blocks (zero) and NaN blocks
// (K4) excepted, and advances R10; K1 is scratch.
func storeRedo(zero Op) {
	KORW(K4, zero, K1)
	KANDNW(K7, K1, K7)
	KMOVW(K7, EAX)
	MOVW(AX, Mem{Base: R10})
	ADDQ(Imm(2), R10)
}

// zeroBlocks clears the blockBytes code bytes (8 or 16) of the blocks whose
// bits are set in R11 (DI + disp at the step's first block); it uses AX and
// BX.
func zeroBlocks(name string, blockBytes, disp int) {
	l := func(s string) string { return name + "_" + s }
	TESTL(R11L, R11L)
	JZ(LabelRef(l("zeroDone")))
	Label(l("zero"))
	BSFL(R11L, EAX)
	if blockBytes == 16 {
		SHLQ(Imm(4), RAX)
		MOVQ(U32(0), Mem{Base: RDI, Index: RAX, Scale: 1, Disp: disp + 8})
	} else {
		SHLQ(Imm(3), RAX)
	}
	MOVQ(U32(0), Mem{Base: RDI, Index: RAX, Scale: 1, Disp: disp})
	LEAL(Mem{Base: R11, Disp: -1}, EBX)
	ANDL(EBX, R11L)
	JNZ(LabelRef(l("zero")))
	Label(l("zeroDone"))
}

// searchMXFP4AVX512: per step of 16 blocks of 32, the candidates' float32
// multipliers are in Z0–Z2 (rule, rule−1, rule+1), their estimates (over
// d², errTermScaled) in Z6–Z8, the rule's codes in Z29 and the blocks
// holding a NaN or an infinity in K4. A step's blocks are encoded during
// the next step's estimate loop (mxfp4Step), the last step's after the
// loop.
func searchMXFP4AVX512() {
	name := "searchMXFP4AVX512"
	l := func(s string) string { return name + "_" + s }
	TEXT(name, 0, "func(codes, scales []byte, src []float32, redo []uint16)")
	Pragma("noescape")
	Doc(name+" is searchMXFP4Go(codes, scales, src) for len(src) a multiple of",
		"16·32 (len(codes) ≥ len(src)/2, len(scales) ≥ len(src)/32, len(redo) ≥",
		"len(src)/512) except for the blocks it marks in redo (bit i of redo[g]:",
		"block 16g+i), whose bytes the caller recomputes with searchMXFP4Go: 16",
		"blocks per step, each candidate's error estimated in float32 with a block",
		"per lane, the choice made where the estimates' bounds order the",
		"candidates (decide) and the block marked where they do not.")
	local := AllocLocal(64 + 32*64) // the chosen multipliers, the blocks transposed
	Load(Param("codes").Base(), RDI)
	Load(Param("scales").Base(), RDX)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	Load(Param("redo").Base(), R10)
	SHRQ(Imm(9), RCX)
	JZ(LabelRef(l("done")))
	// The first step encodes nothing, the others the previous step's
	// blocks (at RSI − 2048, RDI − 256, their multipliers at local) within
	// their estimate loops; the last step's blocks are encoded after the
	// loop.
	mxfp4Step(name, local, false)
	DECQ(RCX)
	JZ(LabelRef(l("last")))
	Label(l("loop"))
	mxfp4Step(name, local, true)
	DECQ(RCX)
	JNZ(LabelRef(l("loop")))
	Label(l("last"))
	for b := range 32 {
		mxfp4Encode(local, b)
	}
	zeroBlocks(name+"_last", 16, -256)
	Label(l("done"))
	VZEROUPPER()
	RET()
}

// mxfp4Encode encodes and packs half h = i%2 of block b = i/2 of the
// previous step of searchMXFP4AVX512 (at RSI − 2048, its codes at
// RDI − 256) with its multiplier (local + 4b); Z3–Z5 and Z9–Z11 are scratch.
func mxfp4Encode(local Mem, i int) {
	b, h := i/2, i%2
	q := Z4
	VBROADCASTSS(local.Offset(4*b), Z3)
	VMULPS(Mem{Base: RSI, Disp: -2048 + 128*b + 64*h}, Z3, q)
	encodePack(q, Z5, Z9, Z10, Z11, nil, Mem{Base: RDI, Disp: -256 + 16*b + 8*h})
}

// mxfp4Step emits one step of searchMXFP4AVX512 (see there) and advances
// RSI, RDI and RDX; with prev, the previous step's blocks are encoded
// within the estimate loop and their zeroed blocks cleared after it.
func mxfp4Step(name string, local Mem, prev bool) {
	if prev {
		name += "_prev"
	}
	prefetch(2048)
	for h := range 2 {
		transpose16(func(b int) Mem { return Mem{Base: RSI, Disp: 128*b + 64*h} },
			func(j int) Mem { return local.Offset(64 + 64*(16*h+j)) })
	}
	columnMax(32, func(j int) Mem { return local.Offset(64 + 64*j) })
	// The rule's codes (floor(log2 amax) − 2 + 127, at least 0) in Z29,
	// K4 the blocks holding NaN or Inf, K6 the all-zero blocks.
	VPCMPUD_BCST(U8(5), cs.Vec(0x7f800000), Z0, K4) // amax ≥ Inf
	VPTESTNMD(Z0, Z0, K6)
	VPSRLD(U8(23), Z0, Z29)
	VPSUBD_BCST(cs.Vec(2), Z29, Z29)
	VPMAXSD_BCST(cs.Vec(0), Z29, Z29)
	// Candidate c's code k: multiplier 2^(127−k) = (254−k)<<23 (k ≤ 253;
	// 2^127 for k = 0, whose decode factor is 2^−127).
	for c, delta := range []int32{0, -1, 1} {
		k := Z30
		VPADDD_BCST(cs.Vec(uint32(delta)), Z29, k)
		bcast(254, gen.Z(c))
		VPSUBD(k, gen.Z(c), gen.Z(c))
		VPSLLD(U8(23), gen.Z(c), gen.Z(c))
	}
	loadRoundConsts()
	for i := 6; i < 9; i++ {
		VPXORQ(gen.Z(i), gen.Z(i), gen.Z(i))
	}
	// The loop unrolled: element j of the 16 blocks, half j%2 of block
	// j/2 of the previous step encoded (its multiplier read before this
	// step stores its own). amax·m is in [4, 8) for the rule (below 4
	// where the rule's code is 0), in [8, 16) for rule−1 and in [2, 4) for
	// rule+1: only the last needs no clamp.
	for j := range 32 {
		VMOVUPS(local.Offset(64+64*j), Z13) // |x|
		for c := range 3 {
			errTermScaled(gen.Z(c), gen.Z(6+c), c < 2)
		}
		if prev {
			mxfp4Encode(local, j)
		}
	}
	if prev {
		zeroBlocks(name, 16, -256)
	}

	// The estimates in units of rule+1's d² (the candidates' divisors are
	// d/2, d, 2d: exact factors 1/16 and 1/4; a result below 2^−126 rounds
	// by less than the bounds' 2^−140). Rule+1's code 253 (d = 2^126) may
	// decode to infinity, which sqErrE2M1 sums: no estimate (NaN).
	VMULPS_BCST(cs.Vec(math.Float32bits(0.25)), Z6, Z6)
	VMULPS_BCST(cs.Vec(math.Float32bits(0.0625)), Z7, Z7)
	VPCMPUD_BCST(U8(5), cs.Vec(252), Z29, K1) // rule ≥ 252
	VBROADCASTSS(cs.Word(0x7fc00000), K1, Z8)

	// The choice: rule−1 (where the rule's code is above 0), then rule+1;
	// K7 collects the blocks whose choice the estimates cannot make.
	KXORW(K7, K7, K7)
	VMOVDQA32(Z29, Z30) // the best codes
	VPTESTMD(Z29, Z29, K5)
	decide(Z7, Z6, K5)
	VPSUBD_BCST(cs.Vec(1), Z29, Z31)
	VMOVDQA32(Z31, K2, Z30)
	decide(Z8, Z6, nil)
	VPADDD_BCST(cs.Vec(1), Z29, Z31)
	VMOVDQA32(Z31, K2, Z30)
	storeRedo(K6)
	VPBROADCASTD(cs.Vec(0xff), K4, Z30) // NaN blocks
	VPMOVDB(Z30, X31)
	VMOVDQU32(X31, Mem{Base: RDX})
	bcast(254, Z31)
	VPSUBD(Z30, Z31, Z31)
	VPSLLD(U8(23), Z31, Z31) // the chosen multipliers 2^(127−k)
	VMOVDQU32(Z31, local)
	KMOVW(K4, R11L)

	ADDQ(U32(2048), RSI)
	ADDQ(U32(256), RDI)
	ADDQ(Imm(16), RDX)
}

// ue4m3Code leaves in out the UE4M3 codes of the non-negative values q
// (nearest even, saturating at 0x7E; a NaN counts as infinity), as
// e4m3fnCode rounds them; a and t are scratch, K2 too.
func ue4m3Code(q, out, a, t VecPhysical) {
	VPMINUD_BCST(cs.Vec(0x7f800000), q, a) // |q|, at most Inf
	VADDPS_BCST(cs.Vec(math.Float32bits(0x1p14)), a, out)
	VPSUBD_BCST(cs.Vec(141<<23), out, out) // subnormal results: by the addition of 2^14
	VPSRLD(U8(20), a, t)
	VPANDD_BCST(cs.Vec(1), t, t)
	VPADDD(a, t, t)
	VPADDD_BCST(cs.Vec(1<<19-1), t, t)
	VPSRLD(U8(20), t, t)
	VPSUBD_BCST(cs.Vec(120<<3), t, t)           // normal results: integer rounding of the bits
	VPCMPUD_BCST(U8(5), cs.Vec(121<<23), a, K2) // |q| ≥ 2^−6
	VMOVDQA32(t, K2, out)
	VPMINSD_BCST(cs.Vec(0x7e), out, out)
}

// ue4m3Value leaves in v the UE4M3 values of the codes k (0..0x7F, 0x7F
// read as 480): (k<<20) + (120<<23) as float32 bits for k ≥ 8, k·2^−9
// below; t is scratch, K2 too.
func ue4m3Value(k, v, t VecPhysical) {
	VPSLLD(U8(20), k, v)
	VPADDD_BCST(cs.Vec(120<<23), v, v)
	VPCMPUD_BCST(U8(1), cs.Vec(8), k, K2) // k < 8
	VCVTDQ2PS(k, t)
	VMULPS_BCST(cs.Vec(math.Float32bits(0x1p-9)), t, K2, v)
}

// searchNVFP4AVX512: per step of 16 blocks of 16, the candidates' divisors
// (rule, rule−1, rule+1, 4/6) are in Z0–Z3, their float32 estimates in
// Z4–Z7 and reciprocals in Z8–Z11, the rule's codes in Z28 and the 4/6
// codes in Z29; Z30 holds the tensor scale and Z31 the rule's denominator;
// K4 marks the blocks holding a NaN or an infinity, K5 the all-zero blocks. A step's blocks are encoded during
// the next step's estimate loop (nvfp4Step), the last step's after the
// loop.
func searchNVFP4AVX512() {
	name := "searchNVFP4AVX512"
	l := func(s string) string { return name + "_" + s }
	TEXT(name, 0, "func(codes, scales []byte, src []float32, tensorScale, denom float32, redo []uint16)")
	Pragma("noescape")
	Doc(name+" is searchNVFP4Go(codes, scales, src, tensorScale) for len(src) a",
		"multiple of 16·16 (len(codes) ≥ len(src)/2, len(scales) ≥ len(src)/16,",
		"len(redo) ≥ len(src)/256), a tensor scale that is +0 or positive and",
		"finite and denom = float32(6·tensorScale), except for the blocks it marks",
		"in redo (as searchMXFP4AVX512), whose bytes the caller recomputes with",
		"searchNVFP4Go: 16 blocks per step, each candidate's error estimated in",
		"float32 with a block per lane, the choice made where the estimates'",
		"bounds order the candidates (decide) and the block marked where they do",
		"not.")
	local := AllocLocal(64 + 16*64) // the chosen divisors, the blocks transposed
	Load(Param("codes").Base(), RDI)
	Load(Param("scales").Base(), RDX)
	Load(Param("src").Base(), RSI)
	Load(Param("src").Len(), RCX)
	Load(Param("redo").Base(), R10)
	SHRQ(Imm(8), RCX)
	JZ(LabelRef(l("done")))
	// The first step encodes nothing, the others the previous step's
	// blocks (at RSI − 1024, RDI − 128, their divisors at local) within
	// their estimate loops; the last step's blocks are encoded after the
	// loop.
	nvfp4Step(name, local, false)
	DECQ(RCX)
	JZ(LabelRef(l("last")))
	Label(l("loop"))
	nvfp4Step(name, local, true)
	DECQ(RCX)
	JNZ(LabelRef(l("loop")))
	Label(l("last"))
	for b := range 16 {
		nvfp4Encode(local, b)
	}
	zeroBlocks(name+"_last", 8, -128)
	Label(l("done"))
	VZEROUPPER()
	RET()
}

// nvfp4Encode encodes and packs block b of the previous step of
// searchNVFP4AVX512 (at RSI − 1024, its codes at RDI − 128) with its divisor
// (local + 4b); Z14–Z16, Z18 and Z31 are scratch.
func nvfp4Encode(local Mem, b int) {
	q := Z14
	VMOVUPS(Mem{Base: RSI, Disp: -1024 + 64*b}, q)
	VDIVPS_BCST(local.Offset(4*b), q, q)
	encodePack(q, Z15, Z16, Z18, Z31, nil, Mem{Base: RDI, Disp: -128 + 8*b})
}

// nvfp4Step emits one step of searchNVFP4AVX512 (see there) and advances
// RSI, RDI and RDX; with prev, the previous step's blocks are encoded
// within the estimate loop and their zeroed blocks cleared after it.
func nvfp4Step(name string, local Mem, prev bool) {
	if prev {
		name += "_prev"
	}
	prefetch(1024)
	transpose16(func(b int) Mem { return Mem{Base: RSI, Disp: 64 * b} },
		func(j int) Mem { return local.Offset(64 + 64*j) })
	Load(Param("tensorScale"), X0)
	VBROADCASTSS(X0, Z30)
	Load(Param("denom"), X1)
	VBROADCASTSS(X1, Z31)
	columnMax(16, func(j int) Mem { return local.Offset(64 + 64*j) })
	VMOVAPS(Z0, Z27)                                // amax, for the index range after the loop
	VPCMPUD_BCST(U8(5), cs.Vec(0x7f800000), Z0, K4) // amax ≥ Inf
	VPTESTNMD(Z0, Z0, K5)                           // amax = 0
	VDIVPS(Z31, Z0, Z16)                            // v = amax / float32(6·s_t)
	ue4m3Code(Z16, Z28, Z17, Z18)
	VMULPS_BCST(cs.Vec(math.Float32bits(1.5)), Z16, Z16)
	ue4m3Code(Z16, Z29, Z17, Z18)
	// The divisors float32(s_k·s_t) of the codes k: rule, rule−1 (0 for a
	// rule of 0: the lane is not a candidate), rule+1, 4/6.
	VPSUBD_BCST(cs.Vec(1), Z28, Z17)
	VPMAXSD_BCST(cs.Vec(0), Z17, Z17)
	VPADDD_BCST(cs.Vec(1), Z28, Z18)
	// The reciprocals 1/d in Z8–Z11, for the estimates' quotients.
	for c, k := range []VecPhysical{Z28, Z17, Z18, Z29} {
		ue4m3Value(k, gen.Z(c), Z19)
		VMULPS(Z30, gen.Z(c), gen.Z(c))
		VBROADCASTSS(cs.Word(math.Float32bits(1)), gen.Z(8+c))
		VDIVPS(gen.Z(c), gen.Z(8+c), gen.Z(8+c))
	}
	loadRoundConsts()
	for i := 4; i < 8; i++ {
		VPXORQ(gen.Z(i), gen.Z(i), gen.Z(i))
	}
	// The loop unrolled: element j of the 16 blocks, block j of the
	// previous step encoded (its divisor read before this step stores its
	// own).
	for j := range 16 {
		VMOVUPS(local.Offset(64+64*j), Z13) // |x|
		for c := range 4 {
			errTerm(gen.Z(8+c), gen.Z(c), gen.Z(4+c), false) // |x|·float32(1/d) ≈ |x|/d
		}
		if prev {
			nvfp4Encode(local, j)
		}
	}
	if prev {
		zeroBlocks(name, 8, -128)
	}
	// Divisors outside [2^−125, 2^125] (reciprocals that are not normal
	// floats, or infinite), and blocks whose largest quotient amax·(1/d) is
	// not at most 7.5 (a subnormal or saturated scale: errTerm's indices
	// may have wrapped): no estimate (NaN).
	for c := range 4 {
		VANDPS(Z20, gen.Z(c), Z16)
		VPSUBD_BCST(cs.Vec(2<<23), Z16, Z16)
		VPCMPUD_BCST(U8(6), cs.Vec(250<<23), Z16, K1) // |d| − 2^−125 (as bits) above 2^125 − 2^−125
		VMULPS(gen.Z(8+c), Z27, Z16)
		VCMPPS_BCST(U8(0x16), cs.Vec(math.Float32bits(7.5)), Z16, K2) // not amax·(1/d) ≤ 7.5
		KORW(K2, K1, K1)
		VBROADCASTSS(cs.Word(0x7fc00000), K1, gen.Z(4+c))
	}

	// The choice, best codes in Z19 and divisors in Z27: rule−1 where the
	// rule's code is above 1, rule+1 where it is below 0x7E, the 4/6 code
	// where it is above rule+1.
	KXORW(K7, K7, K7)
	VMOVDQA32(Z28, Z19)
	VMOVAPS(Z0, Z27)
	VPCMPUD_BCST(U8(6), cs.Vec(1), Z28, K6) // rule > 1
	decide(Z5, Z4, K6)
	VPSUBD_BCST(cs.Vec(1), Z28, Z16)
	VMOVDQA32(Z16, K2, Z19)
	VMOVAPS(Z1, K2, Z27)
	VPCMPUD_BCST(U8(1), cs.Vec(0x7e), Z28, K6) // rule < 0x7E
	decide(Z6, Z4, K6)
	VPADDD_BCST(cs.Vec(1), Z28, Z16)
	VMOVDQA32(Z16, K2, Z19)
	VMOVAPS(Z2, K2, Z27)
	VPCMPUD(U8(6), Z16, Z29, K6) // 4/6 code > rule+1
	decide(Z7, Z4, K6)
	VMOVDQA32(Z29, K2, Z19)
	VMOVAPS(Z3, K2, Z27)
	storeRedo(K5)
	VPBROADCASTD(cs.Vec(0x38), K5, Z19) // all-zero blocks: 1.0
	VMOVAPS(Z30, K5, Z27)
	VPBROADCASTD(cs.Vec(0x7f), K4, Z19) // NaN blocks
	VPMOVDB(Z19, X16)
	VMOVDQU32(X16, Mem{Base: RDX})
	VMOVDQU32(Z27, local)
	// Blocks stored as zeros: NaN blocks and divisors of 0.
	VCMPPS_BCST(U8(0), cs.Vec(0), Z27, K6)
	KORW(K4, K6, K6)
	KMOVW(K6, R11L)

	ADDQ(U32(1024), RSI)
	ADDQ(U32(128), RDI)
	ADDQ(Imm(16), RDX)
}
