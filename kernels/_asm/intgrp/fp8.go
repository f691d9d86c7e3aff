package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/tensorcast-go/tensorcast/kernels/_asm/internal/gen"
)

// The E4M3 (e4m3fn) element kernels: runs of groups (tiles along a row) of
// glen elements, one divisor or multiplier per group, 16 elements a step.

func fp8Kernels(isa string) {
	quantE4M3(isa)
	dequantE4M3(isa)
}

// quantE4M3 emits quantE4M3{AVX512,AVX2}. The rounding is one float32
// addition: with e the exponent of max(|v|, 2^−6) (E4M3's smallest normal;
// |v| first clamped to 512, which saturates anyway), c = 2^(e+20) has the
// ulp 2^(e−3), E4M3's step in that binade (2^−9 for the subnormals), so
// |v| + c rounds |v| to nearest even, and the bits of the sum minus those of
// c count the steps k above c. The code is ((e + 6) << 3) + k for normal
// and subnormal values alike (a carry, k = 16, lands on the next binade's
// first code), clamped at the largest magnitude, with the sign put back.
func quantE4M3(isa string) {
	name := "quantE4M3" + isa
	TEXT(name, NOSPLIT, "func(codes []byte, src []float32, div []float32, glen int, ahead int)")
	Pragma("noescape")
	doc(name+" is the "+gen.ISAName(isa)+" kernel of the loop", []string{
		"for k, d := range div {",
		"	quantE4M3Tile(codes, src[k*glen:(k+1)*glen], k*glen, d)",
		"}",
	}, "for glen a non-zero multiple of 16; src must hold len(div)·glen floats and codes as many bytes.",
		"That is: codes 0x7F for a NaN d, 0 for a d of 0, else e4m3fnCodec.Encode(x/d, RoundEven, true, 0).",
		"It prefetches the line ahead bytes past each 16 elements it reads (the caller's next chunk).")
	groupArgs("codes", "src", "div")
	Load(Param("ahead"), R11)
	n := gen.Lanes(isa)
	abs, c512, minNorm, expMask, c20 := gen.Vec(isa, 15), gen.Vec(isa, 14), gen.Vec(isa, 13), gen.Vec(isa, 12), gen.Vec(isa, 11)
	rebias, maxMag, d, fill, pos := gen.Vec(isa, 10), gen.Vec(isa, 9), gen.Vec(isa, 8), gen.Vec(isa, 7), gen.Vec(isa, 6)
	signBit := Z16 // AVX-512 only
	if isa == "AVX512" {
		abs, c512, minNorm, expMask, c20 = Z31, Z30, Z29, Z28, Z27
		rebias, maxMag, d, fill, pos = Z26, Z25, Z24, Z23, Z22
		bcast(0x80, signBit, X0)
	}
	bcast(0x7fffffff, abs, X0)
	bcast(0x44000000, c512, X0)
	bcast(121<<23, minNorm, X0) // 2^−6
	bcast(0x7f800000, expMask, X0)
	bcast(20<<23, c20, X0)
	bcast(121<<3, rebias, X0)
	bcast(e4m3MaxMag, maxMag, X0)
	groupLoop(name, 64, 16, false, func() {
		// fill is 0x7F for a NaN d, else 0; pos (K1) marks d > 0.
		VBROADCASTSS(Mem{Base: RDX}, d)
		pxor(fill, fill, fill)
		if isa == "AVX512" {
			VCMPPS(U8(cmpUNORD), d, d, K2)
			VPBROADCASTD(e4m3NaNConst, K2, fill)
			VCMPPS(U8(cmpGT), fill, d, K1) // fill is 0 where d is not NaN
			return
		}
		VCMPPS(U8(cmpUNORD), d, d, fill)
		VPBROADCASTD(e4m3NaNConst, pos)
		VPAND(pos, fill, fill)
		VPXOR(pos, pos, pos)
		VCMPPS(U8(cmpGT), pos, d, pos)
	}, func() {
		PREFETCHT0(Mem{Base: RSI, Index: R11, Scale: 1})
		for i := range 16 / n {
			v, a, e, c, u := gen.Vec(isa, i), gen.Vec(isa, 2), gen.Vec(isa, 3), gen.Vec(isa, 4), gen.Vec(isa, 5)
			VMOVUPS(Mem{Base: RSI, Disp: 4 * n * i}, v)
			VDIVPS(d, v, v)
			pand(abs, v, a)
			VPMINUD(c512, a, a)
			VPMAXUD(minNorm, a, e)
			pand(expMask, e, e)
			VPADDD(c20, e, c)
			VADDPS(c, a, u)
			VPSUBD(c, u, u) // k
			VPSRLD(U8(20), e, e)
			VPADDD(e, u, u)
			VPSUBD(rebias, u, u)
			VPMINSD(maxMag, u, u)
			if isa == "AVX512" {
				VPSRLD(U8(24), v, c)
				VPTERNLOGD(U8(0xf8), signBit, c, u) // u | c&0x80
				VPBLENDMD(u, fill, K1, v)           // d > 0 ? code : fill
				continue
			}
			VPSRLD(U8(31), v, c)
			VPSLLD(U8(7), c, c)
			VPOR(c, u, u)
			VPBLENDVB(pos, u, fill, v)
		}
		storeCodes(isa, 8, true, nil, nil)
	})
}

var e4m3NaNConst = gen.Table("intgrpE4M3NaN", []uint32{e4m3NaN})

const (
	e4m3NaN    = 0x7f
	e4m3MaxMag = 0x7e
)

// dequantE4M3 emits dequantE4M3{AVX512,AVX2}: the magnitude bits shifted
// to a float32's exponent and mantissa and multiplied by 2^120 (exact, the
// subnormals included), the NaN code made 0x7fc00000, the sign put back, then
// the product with the group's multiplier (the element first, as the
// reference's lut[c] * m).
func dequantE4M3(isa string) {
	name := "dequantE4M3" + isa
	TEXT(name, NOSPLIT, "func(dst []float32, codes []byte, mul []float32, glen int)")
	Pragma("noescape")
	doc(name+" is the "+gen.ISAName(isa)+" kernel of the loop", []string{
		"for k, m := range mul {",
		"	for i := k * glen; i < (k+1)*glen; i++ {",
		"		dst[i] = mx.e4m3fn[codes[i]] * m",
		"	}",
		"}",
	}, "for glen a non-zero multiple of 16; dst must hold len(mul)·glen floats and codes as many bytes.")
	groupArgs("dst", "codes", "mul")
	n := gen.Lanes(isa)
	low7, pow, nanMag, qnan, sign, m := gen.Vec(isa, 15), gen.Vec(isa, 14), gen.Vec(isa, 13), gen.Vec(isa, 12), gen.Vec(isa, 11), gen.Vec(isa, 10)
	bcast(0x7f, low7, X0)
	bcast(0x7b800000, pow, X0) // 2^120
	bcast(0x7f<<20, nanMag, X0)
	bcast(0x7fc00000, qnan, X0)
	bcast(0x80, sign, X0)
	groupLoop(name, 16, 64, false, func() {
		VBROADCASTSS(Mem{Base: RDX}, m)
	}, func() {
		for i := range 16 / n {
			c, v, t := gen.Vec(isa, i), gen.Vec(isa, 2+i), gen.Vec(isa, 4)
			VPMOVZXBD(Mem{Base: RSI, Disp: n * i}, c)
			pand(low7, c, v)
			VPSLLD(U8(20), v, v)
			if isa == "AVX512" {
				VPCMPEQD(nanMag, v, K1)
			} else {
				VPCMPEQD(nanMag, v, t)
			}
			VMULPS(pow, v, v)
			if isa == "AVX512" {
				VMOVDQA32(qnan, K1, v)
			} else {
				VPBLENDVB(t, qnan, v, v)
			}
			pand(sign, c, c)
			VPSLLD(U8(24), c, c)
			por(c, v, v)
			VMULPS(m, v, v)
			VMOVUPS(v, Mem{Base: RDI, Disp: 4 * n * i})
		}
	})
}
