package kernels

// The codec table: one entry per block format, each naming the format, its
// geometry and the one-pass kernels that quantize, decode and (where one
// exists) search it. Callers index the table by the format's name
// (LookupBlock, LookupScaled) and keep the entry; a new block format is one
// entry here.

// A BlockCodec is a block format whose blocks carry their own scales
// beside their codes, as ggml lays them out in GGUF files. Its kernels give
// exactly the bits ggml's reference code gives for the same input (see the
// package gguf for the formats' rules).
type BlockCodec struct {
	// Name is ggml's name of the format: "Q4_0", "Q4_1", "Q5_0", "Q5_1",
	// "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ4_NL",
	// "IQ4_XS", "TQ1_0", "TQ2_0", "MXFP4", "NVFP4", "Q1_0" or "Q2_0".
	Name string
	// BlockLen is the number of elements in one block and BlockBytes its
	// size in bytes.
	BlockLen, BlockBytes int
	// Weighted reports whether Quantize searches its scales, and so
	// weighs the error of each element by an importance vector.
	Weighted bool
	// Quantize writes the blocks of src, whole blocks, to dst, which must
	// hold len(src)/BlockLen·BlockBytes bytes. imp, when not nil, holds one
	// weight per column: its length is the row length, a multiple of
	// BlockLen dividing len(src); Quantize ignores it unless Weighted
	// or w is given. The error it minimises weighs each element as Weigh
	// gives (the IQ grid types choose their codes so, then set each
	// super-block's scale to the unbiased gain, whose reconstruction has
	// the values' own weighed projection on them); when w is not nil (len(src) long at least) Quantize writes
	// those weights there too (for the searching quantizers at the cost of
	// a store each rather than Weigh's pass). It is nil for a format the
	// kernels only decode (NVFP4).
	Quantize func(dst []byte, src, imp, w []float32)
	// Dequantize decodes len(dst) elements, whole blocks, from src.
	Dequantize func(dst []float32, src []byte)
	// Split, for the formats whose blocks store one scale per sub-block
	// as a value of a scale format (Q8_0, Q4_0, TQ1_0, TQ2_0, Q1_0 and
	// Q2_0: a float16; MXFP4: an E8M0 byte; NVFP4: four UE4M3 bytes),
	// writes one code per element of the blocks of src to codes (the int8
	// of Q8_0, the 4-bit two's complement of q−8 for Q4_0, the E2M1 code of
	// MXFP4 and NVFP4, the stored code c of the 1- and 2-bit formats, whose
	// value is (c − 1)·d, or (2c − 1)·d for Q1_0) and the scale bytes as
	// stored to scales (ScaleBytes per block, in block order). It is nil
	// for the other formats.
	Split func(codes, scales, src []byte)
	// ScaleBytes is the number of scale bytes per block in Split's view,
	// and MaxCode the largest code Join takes.
	ScaleBytes int
	MaxCode    byte
	// Join is the inverse of Split: it lays codes and scales out as blocks
	// in dst, and reports false when a code is above MaxCode (those blocks
	// are then incomplete).
	Join func(dst, codes, scales []byte) bool
	// View, for the IQ grid types, lays their blocks out as one code per
	// element and one scale per sub-block, and back (see IQView).
	View *IQView
	// weighting is the rule of Quantize's error weights (see Weigh):
	// set for every format that searches.
	weighting *weighting
}

// Planes is a scaled tensor in the split form a ScaledCodec reads and
// writes: its codes and scales (and zero points) are planes of their own,
// placed by the fields that describe the scale groups.
type Planes struct {
	// Codes holds one code per element, packed LSB first when narrower
	// than a byte: element 2k in bits 3:0 of byte k for 4-bit codes, four
	// 6-bit codes in three bytes.
	Codes []byte
	// Scales holds one scale per block, in the codec's scale format
	// (E8M0, UE4M3, or little-endian float16 or float32).
	Scales []byte
	// Zeros holds one zero point per group (IntAsym only).
	Zeros []byte
	// TensorScale is NVFP4's second-level scale, a decode multiplier.
	TensorScale float32
	// Groups places the scales of IntSym and IntAsym.
	Groups IntGroups
	// Tiles places the scales of E4M3.
	Tiles FP8Tiles
}

// A ScaledCodec is a scaled datatype whose codes and scales are stored
// apart (Planes): the OCP MX formats, NVFP4, integer groups and E4M3 with
// float32 scales. Its kernels give exactly the bits of the tcast package's
// block-by-block cast under its defaults (floor scales for MX, round to
// nearest even, saturation).
type ScaledCodec struct {
	// Name names the datatype family: "MXFP4", "MXFP6E2M3", "MXFP6E3M2",
	// "MXFP8" (E4M3 elements), "MXFP8E5M2", "MXINT8", "NVFP4" (UE4M3 scales
	// of 16 elements under a tensor scale), "IntSym" and "IntAsym" (integer
	// groups with float scales, Planes.Groups) or "E4M3" (float32 scales
	// per tensor, channel, group or 2-D tile, Planes.Tiles).
	Name string
	// Block is the number of elements per scale, or 0 when Planes.Groups
	// or Planes.Tiles sets it.
	Block int
	// Bits is the width of an element code, or 0 when Planes.Groups sets
	// it.
	Bits int
	// Quantize chooses the scales of src, whole blocks, by the format's
	// rule and encodes its elements into p.
	Quantize func(p Planes, src []float32)
	// Dequantize decodes p into dst.
	Dequantize func(dst []float32, p Planes)
	// Search is Quantize with the scale search (each block takes, of a few
	// candidate scales around the rule's, the one of least squared error),
	// fused into one pass; nil when the format has none.
	Search func(p Planes, src []float32)
	// SqErr is the one-pass error of a scale search's candidate over a
	// block of the codec's element format (see SqErrBlock), for any
	// datatype with those elements; nil when the format has none.
	SqErr func(b *SqErrBlock) float64
}

// LookupBlock returns the block codec ggml names name (see
// BlockCodec.Name), and whether there is one.
func LookupBlock(name string) (BlockCodec, bool) {
	for _, c := range blockCodecs {
		if c.Name == name {
			return c, true
		}
	}
	return BlockCodec{}, false
}

// LookupScaled returns the scaled codec of the given name (see
// ScaledCodec.Name), and whether there is one.
func LookupScaled(name string) (ScaledCodec, bool) {
	for _, c := range scaledCodecs {
		if c.Name == name {
			return c, true
		}
	}
	return ScaledCodec{}, false
}

// blockCodecs lists the block formats in ggml's type order.
var blockCodecs = [...]BlockCodec{
	{Name: "Q4_0", BlockLen: ggmlBlock, BlockBytes: q4_0BlockBytes, Weighted: true,
		Quantize: quantizeQ4_0Any, weighting: &weighImp32, Dequantize: dequantizeQ4_0,
		Split: splitQ4_0, Join: joinQ4_0, ScaleBytes: 2, MaxCode: 15},
	{Name: "Q4_1", BlockLen: ggmlBlock, BlockBytes: q4_1BlockBytes, Weighted: true,
		Quantize: quantizeQ4_1, weighting: &weighImp32, Dequantize: dequantizeQ4_1},
	{Name: "Q5_0", BlockLen: ggmlBlock, BlockBytes: q5_0BlockBytes, Weighted: true,
		Quantize: quantizeQ5_0, weighting: &weighImp32, Dequantize: dequantizeQ5_0},
	{Name: "Q5_1", BlockLen: ggmlBlock, BlockBytes: q5_1BlockBytes, Weighted: true,
		Quantize: quantizeQ5_1, weighting: &weighImp32, Dequantize: dequantizeQ5_1},
	{Name: "Q8_0", BlockLen: ggmlBlock, BlockBytes: q8_0BlockBytes,
		Quantize:   unsearched(ggmlBlock, quantizeQ8_0),
		Dequantize: dequantizeQ8_0, Split: splitQ8_0, Join: joinQ8_0, ScaleBytes: 2, MaxCode: 255},
	{Name: "Q2_K", BlockLen: qkk, BlockBytes: q2_KBlockBytes, Weighted: true,
		Quantize: quantizeQ2_K, weighting: &weighQ2K, Dequantize: dequantizeQ2_K},
	{Name: "Q3_K", BlockLen: qkk, BlockBytes: q3_KBlockBytes, Weighted: true,
		Quantize: quantizeQ3_K, weighting: &weighQ3K, Dequantize: dequantizeQ3_K},
	{Name: "Q4_K", BlockLen: qkk, BlockBytes: q4_KBlockBytes, Weighted: true,
		Quantize: quantizeQ4_K, weighting: &weighQ45K, Dequantize: dequantizeQ4_K},
	{Name: "Q5_K", BlockLen: qkk, BlockBytes: q5_KBlockBytes, Weighted: true,
		Quantize: quantizeQ5_K, weighting: &weighQ45K, Dequantize: dequantizeQ5_K},
	{Name: "Q6_K", BlockLen: qkk, BlockBytes: q6_KBlockBytes, Weighted: true,
		Quantize: quantizeQ6_K, weighting: &weighImp16, Dequantize: dequantizeQ6_K},
	{Name: "Q8_K", BlockLen: qkk, BlockBytes: q8_KBlockBytes, Weighted: true,
		Quantize: quantizeQ8_K, weighting: &weighImp256, Dequantize: dequantizeQ8_K},
	{Name: "IQ4_NL", BlockLen: ggmlBlock, BlockBytes: iq4nlBlockBytes, Weighted: true,
		Quantize: quantizeIQ4NL, weighting: &weighImp32, Dequantize: dequantizeIQ4NL},
	{Name: "IQ4_XS", BlockLen: qkk, BlockBytes: iq4xsBlockBytes, Weighted: true,
		Quantize: quantizeIQ4XS, weighting: &weighImp32, Dequantize: dequantizeIQ4XS},
	iqCodec("IQ2_XXS", &fmtIQ2XXS, iq2xxsBlockBytes, dequantizeIQ2XXS),
	iqCodec("IQ2_XS", &fmtIQ2XS, iq2xsBlockBytes, dequantizeIQ2XS),
	iqCodec("IQ3_XXS", &fmtIQ3XXS, iq3xxsBlockBytes, dequantizeIQ3XXS),
	iqCodec("IQ1_S", &fmtIQ1S, iq1sBlockBytes, dequantizeIQ1S),
	iqCodec("IQ3_S", &fmtIQ3S, iq3sBlockBytes, dequantizeIQ3S),
	iqCodec("IQ2_S", &fmtIQ2S, iq2sBlockBytes, dequantizeIQ2S),
	iqCodec("IQ1_M", &fmtIQ1M, iq1mBlockBytes, dequantizeIQ1M),
	{Name: "TQ1_0", BlockLen: qkk, BlockBytes: tq1_0Bytes,
		Quantize: unsearched(qkk, lowTQ1_0.quantize), Dequantize: lowTQ1_0.dequantize,
		Split: lowTQ1_0.split, Join: lowTQ1_0.join, ScaleBytes: 2, MaxCode: lowTQ1_0.maxCode},
	{Name: "TQ2_0", BlockLen: qkk, BlockBytes: tq2_0Bytes,
		Quantize: unsearched(qkk, lowTQ2_0.quantize), Dequantize: lowTQ2_0.dequantize,
		Split: lowTQ2_0.split, Join: lowTQ2_0.join, ScaleBytes: 2, MaxCode: lowTQ2_0.maxCode},
	{Name: "MXFP4", BlockLen: mxBlock, BlockBytes: mxfp4GGUFBlockBytes,
		Quantize:   unsearched(mxBlock, quantizeMXFP4GGUF),
		Dequantize: dequantizeMXFP4GGUF, Split: splitMXFP4GGUF, Join: joinMXFP4GGUF,
		ScaleBytes: 1, MaxCode: 15},
	{Name: "NVFP4", BlockLen: nvfp4GGUFBlock, BlockBytes: nvfp4GGUFBlockBytes,
		Dequantize: dequantizeNVFP4GGUF, Split: splitNVFP4GGUF, Join: joinNVFP4GGUF,
		ScaleBytes: 4, MaxCode: 15},
	{Name: "Q1_0", BlockLen: q1_0Block, BlockBytes: q1_0BlockBytes,
		Quantize: unsearched(q1_0Block, lowQ1_0.quantize), Dequantize: lowQ1_0.dequantize,
		Split: lowQ1_0.split, Join: lowQ1_0.join, ScaleBytes: 2, MaxCode: lowQ1_0.maxCode},
	{Name: "Q2_0", BlockLen: q2_0Block, BlockBytes: q2_0BlockBytes,
		Quantize: unsearched(q2_0Block, lowQ2_0.quantize), Dequantize: lowQ2_0.dequantize,
		Split: lowQ2_0.split, Join: lowQ2_0.join, ScaleBytes: 2, MaxCode: lowQ2_0.maxCode},
}

// iqCodec returns the entry of an IQ grid type: its quantizer searches,
// with ggml's rule of weights (the importance times sqrt(2·mean x² + x²),
// the plain error without importance).
func iqCodec(name string, f *iqFormat, bb int, dequant func([]float32, []byte)) BlockCodec {
	return BlockCodec{Name: name, BlockLen: qkk, BlockBytes: bb, Weighted: true,
		Quantize: iqQuantizer(name, f, bb), Dequantize: dequant, View: newIQView(f),
		weighting: &weighting{k: 2, span: qkk, sub: f.sub}}
}

// quantizeQ4_0Any is Q4_0's quantizer as llama-quantize chooses it: ggml's
// rule (quantizeQ4_0) without an importance vector, the weighted search
// (quantizeQ4_0Weighted) with one.
func quantizeQ4_0Any(dst []byte, src, imp, w []float32) {
	if imp == nil {
		checkWeights("quantizeQ4_0", len(src), w)
		quantizeQ4_0(dst, src)
		if w != nil {
			weighBlocks(blockRule("Q4_0"), ggmlBlock, w, src, nil)
		}
		return
	}
	quantizeQ4_0Weighted(dst, src, imp, w)
}

// unsearched returns the Quantize of a codec of bs-element blocks whose
// quantizer does not search: the weights it reports are the importance,
// or 1 (imp is checked only then: the quantizer ignores it).
func unsearched(bs int, q func(dst []byte, src []float32)) func(dst []byte, src, imp, w []float32) {
	return func(dst []byte, src, imp, w []float32) {
		if w != nil {
			checkImp("Quantize", len(src), bs, imp)
			checkWeights("Quantize", len(src), w)
		}
		q(dst, src)
		if w != nil {
			impWeights(w[:len(src)], imp)
		}
	}
}

// mxCodec returns the entry of an OCP MX format (E8M0 scales of mxBlock
// elements) of bits-wide codes from its kernels; search and sqErr may be
// nil.
func mxCodec(name string, bits int, quant func(codes, scales []byte, src []float32),
	dequant func(dst []float32, codes, scales []byte), search func(codes, scales []byte, src []float32),
	sqErr func(*SqErrBlock) float64) ScaledCodec {
	c := ScaledCodec{Name: name, Block: mxBlock, Bits: bits, SqErr: sqErr,
		Quantize:   func(p Planes, src []float32) { quant(p.Codes, p.Scales, src) },
		Dequantize: func(dst []float32, p Planes) { dequant(dst, p.Codes, p.Scales) },
	}
	if search != nil {
		c.Search = func(p Planes, src []float32) { search(p.Codes, p.Scales, src) }
	}
	return c
}

// scaledCodecs lists the scaled formats.
var scaledCodecs = [...]ScaledCodec{
	mxCodec("MXFP4", 4, quantizeMXFP4, dequantizeMXFP4, searchMXFP4, sqErrE2M1),
	mxCodec("MXFP6E2M3", 6, quantizeMXFP6E2M3, dequantizeMXFP6E2M3, nil, nil),
	mxCodec("MXFP6E3M2", 6, quantizeMXFP6E3M2, dequantizeMXFP6E3M2, nil, nil),
	mxCodec("MXFP8", 8, quantizeMXFP8, dequantizeMXFP8, searchMXFP8, sqErrE4M3FN),
	mxCodec("MXFP8E5M2", 8, quantizeMXFP8E5M2, dequantizeMXFP8E5M2, nil, nil),
	mxCodec("MXINT8", 8, quantizeMXINT8, dequantizeMXINT8, nil, nil),
	{Name: "NVFP4", Block: nvfp4Block, Bits: 4,
		Quantize: func(p Planes, src []float32) { quantizeNVFP4(p.Codes, p.Scales, src, p.TensorScale) },
		Dequantize: func(dst []float32, p Planes) {
			dequantizeNVFP4(dst, p.Codes, p.Scales, p.TensorScale)
		},
		Search: func(p Planes, src []float32) { searchNVFP4(p.Codes, p.Scales, src, p.TensorScale) },
		SqErr:  sqErrE2M1},
	{Name: "IntSym",
		Quantize:   func(p Planes, src []float32) { quantizeIntSym(p.Codes, p.Scales, src, p.Groups) },
		Dequantize: func(dst []float32, p Planes) { dequantizeIntSym(dst, p.Codes, p.Scales, p.Groups) },
		Search:     func(p Planes, src []float32) { searchIntSym(p.Codes, p.Scales, src, p.Groups) },
		SqErr:      sqErrInt},
	{Name: "IntAsym",
		Quantize: func(p Planes, src []float32) {
			quantizeIntAsym(p.Codes, p.Scales, p.Zeros, src, p.Groups)
		},
		Dequantize: func(dst []float32, p Planes) {
			dequantizeIntAsym(dst, p.Codes, p.Scales, p.Zeros, p.Groups)
		}},
	{Name: "E4M3", Bits: 8,
		Quantize: func(p Planes, src []float32) {
			p.Tiles.forMatrices(len(src), len(p.Scales), func(lo, hi, s0, s1 int, t FP8Tiles) {
				quantizeE4M3(p.Codes[lo:hi], p.Scales[s0:s1], src[lo:hi], t)
			})
		},
		Dequantize: func(dst []float32, p Planes) {
			p.Tiles.forMatrices(len(dst), len(p.Scales), func(lo, hi, s0, s1 int, t FP8Tiles) {
				dequantizeE4M3(dst[lo:hi], p.Codes[lo:hi], p.Scales[s0:s1], t)
			})
		},
		Search: func(p Planes, src []float32) {
			p.Tiles.forMatrices(len(src), len(p.Scales), func(lo, hi, s0, s1 int, t FP8Tiles) {
				searchE4M3(p.Codes[lo:hi], p.Scales[s0:s1], src[lo:hi], t)
			})
		},
		SqErr: sqErrE4M3FN},
}
