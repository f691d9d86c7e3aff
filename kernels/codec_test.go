package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBlockCodecGeometry checks every block codec's geometry against ggml's
// block structs (ggml-common.h; the numbers of gguf-py's GGML_QUANT_SIZES).
func TestBlockCodecGeometry(t *testing.T) {
	want := map[string][2]int{
		"Q4_0": {32, 18}, "Q4_1": {32, 20}, "Q5_0": {32, 22}, "Q5_1": {32, 24}, "Q8_0": {32, 34},
		"Q2_K": {256, 84}, "Q3_K": {256, 110}, "Q4_K": {256, 144}, "Q5_K": {256, 176},
		"Q6_K": {256, 210}, "Q8_K": {256, 292}, "IQ4_NL": {32, 18}, "IQ4_XS": {256, 136},
		"MXFP4": {32, 17}, "NVFP4": {64, 36}, "TQ1_0": {256, 54}, "TQ2_0": {256, 66},
		"Q1_0": {128, 18}, "Q2_0": {64, 18}, "IQ2_XXS": {256, 66}, "IQ2_XS": {256, 74},
		"IQ2_S": {256, 82}, "IQ3_XXS": {256, 98}, "IQ3_S": {256, 110}, "IQ1_S": {256, 50},
		"IQ1_M": {256, 56},
	}
	require.Len(t, blockCodecs, len(want))
	for name, g := range want {
		c, ok := LookupBlock(name)
		require.True(t, ok, name)
		assert.Equal(t, name, c.Name)
		assert.Equal(t, g, [2]int{c.BlockLen, c.BlockBytes}, name)
		assert.NotNil(t, c.Dequantize, name)
		assert.Equal(t, c.Split == nil, c.Join == nil, name)
	}
	_, ok := LookupBlock("Q4_K_M")
	assert.False(t, ok)
	_, ok = LookupScaled("MXFP5")
	assert.False(t, ok)
}

// TestBlockCodecRoundTrip quantizes rows through every table entry and checks
// that the blocks decode as the per-type kernels decode them, that Split
// gives codes and scales whose products are the decoded values, and that
// Join lays them out again as the same blocks.
func TestBlockCodecRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := gaussian(rng, 2*512, 1)
	for _, c := range blockCodecs {
		blocks := make([]byte, len(x)/c.BlockLen*c.BlockBytes)
		if c.Quantize == nil {
			for i := range blocks {
				blocks[i] = byte(rng.Uint32())
			}
		} else {
			c.Quantize(blocks, x, nil, nil)
		}
		got := make([]float32, len(x))
		c.Dequantize(got, blocks)
		if c.Split == nil {
			continue
		}
		codes := make([]byte, len(x))
		scales := make([]byte, len(x)/c.BlockLen*c.ScaleBytes)
		c.Split(codes, scales, blocks)
		for i, q := range codes {
			want := splitValue(t, c.Name, q, scales, i)
			require.Equal(t, math.Float32bits(want), math.Float32bits(got[i]),
				"%s element %d", c.Name, i)
		}
		again := make([]byte, len(blocks))
		require.True(t, c.Join(again, codes, scales), c.Name)
		require.Equal(t, blocks, again, c.Name)
		if c.MaxCode < 255 {
			codes[5] = c.MaxCode + 1
			assert.False(t, c.Join(again, codes, scales), "%s: code %d", c.Name, codes[5])
		}
	}
}

// splitValue decodes element i of a Split from the formats' definitions:
// code·d for Q8_0 (int8) and Q4_0 (int4), e2m1(code)·2^(e−127) for MXFP4,
// e2m1(code)·ue4m3(s) for NVFP4, (code − 1)·d for TQ1_0, TQ2_0 and Q2_0
// (ggml's dequantize_row_*), (2·code − 1)·d for Q1_0.
func splitValue(t *testing.T, name string, q byte, scales []byte, i int) float32 {
	e2m1 := [8]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}
	fp4 := func(q byte) float32 {
		if q&8 != 0 {
			return -e2m1[q&7]
		}
		return e2m1[q]
	}
	switch name {
	case "Q8_0":
		return float32(int8(q)) * float16To32(binary.LittleEndian.Uint16(scales[2*(i/32):]))
	case "Q4_0":
		return float32(int8(q<<4)>>4) * float16To32(binary.LittleEndian.Uint16(scales[2*(i/32):]))
	case "MXFP4":
		if scales[i/32] == 0xFF {
			return float32(math.NaN())
		}
		return fp4(q) * float32(math.Ldexp(1, int(scales[i/32])-127))
	case "NVFP4":
		return fp4(q) * ue4m3GGML(scales[i/16])
	case "TQ1_0", "TQ2_0":
		return float32(int(q)-1) * float16To32(binary.LittleEndian.Uint16(scales[2*(i/256):]))
	case "Q2_0":
		return float32(int(q)-1) * float16To32(binary.LittleEndian.Uint16(scales[2*(i/64):]))
	case "Q1_0":
		return float32(2*int(q)-1) * float16To32(binary.LittleEndian.Uint16(scales[2*(i/128):]))
	}
	t.Fatalf("no split of %s", name)
	return 0
}

// TestScaledCodecs checks every scaled codec's table entry against the
// per-type kernels it stands for: the same codes and scales, decoded alike.
func TestScaledCodecs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := gaussian(rng, 4096, 1)
	direct := map[string]func(p Planes, src []float32){
		"MXFP4":     func(p Planes, src []float32) { quantizeMXFP4(p.Codes, p.Scales, src) },
		"MXFP6E2M3": func(p Planes, src []float32) { quantizeMXFP6E2M3(p.Codes, p.Scales, src) },
		"MXFP6E3M2": func(p Planes, src []float32) { quantizeMXFP6E3M2(p.Codes, p.Scales, src) },
		"MXFP8":     func(p Planes, src []float32) { quantizeMXFP8(p.Codes, p.Scales, src) },
		"MXFP8E5M2": func(p Planes, src []float32) { quantizeMXFP8E5M2(p.Codes, p.Scales, src) },
		"MXINT8":    func(p Planes, src []float32) { quantizeMXINT8(p.Codes, p.Scales, src) },
		"NVFP4":     func(p Planes, src []float32) { quantizeNVFP4(p.Codes, p.Scales, src, p.TensorScale) },
		"IntSym":    func(p Planes, src []float32) { quantizeIntSym(p.Codes, p.Scales, src, p.Groups) },
		"IntAsym": func(p Planes, src []float32) {
			quantizeIntAsym(p.Codes, p.Scales, p.Zeros, src, p.Groups)
		},
		"E4M3": func(p Planes, src []float32) { quantizeE4M3(p.Codes, p.Scales, src, p.Tiles) },
	}
	require.Len(t, scaledCodecs, len(direct))
	for name, quant := range direct {
		c, ok := LookupScaled(name)
		require.True(t, ok, name)
		p := testPlanes(c, len(x))
		want := testPlanes(c, len(x))
		c.Quantize(p, x)
		quant(want, x)
		require.Equal(t, want, p, name)
		got, ref := make([]float32, len(x)), make([]float32, len(x))
		c.Dequantize(got, p)
		c.Dequantize(ref, want)
		require.Equal(t, floatBits(ref), floatBits(got), name)
		if c.Search != nil {
			c.Search(p, x)
		}
	}
}

// testPlanes returns planes for n elements of c: 4-bit integer groups of 64
// with float16 scales, E4M3 tiles of 32 on rows of 512.
func testPlanes(c ScaledCodec, n int) Planes {
	p := Planes{TensorScale: 1.0 / 2688,
		Groups: IntGroups{Bits: 4, Cols: 512, Group: 64, Scale: ScaleFloat16},
		Tiles:  FP8Tiles{Cols: 512, TileRows: 1, TileCols: 32}}
	bits, scales := c.Bits, 0
	switch {
	case c.Block != 0:
		scales = n / c.Block
	case c.Name == "E4M3":
		scales = 4 * n / 32
	default:
		bits, scales = 4, 2*n/64
		p.Zeros = make([]byte, n/64)
	}
	p.Codes, p.Scales = make([]byte, PackedLen(n, uint(bits))), make([]byte, scales)
	return p
}

// TestE4M3Stack checks that the E4M3 entry casts a stack of matrices (Tiles.
// Rows) matrix by matrix: 3 matrices of 5×40 in tiles of 2×16, whose last
// tile row and column are partial.
func TestE4M3Stack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const rows, cols, mats = 5, 40, 3
	x := gaussian(rng, rows*cols*mats, 1)
	c, _ := LookupScaled("E4M3")
	one := FP8Tiles{Cols: cols, TileRows: 2, TileCols: 16}
	perScales := 4 * 3 * 3 // 3 tile rows × 3 tile columns
	p := Planes{Codes: make([]byte, len(x)), Scales: make([]byte, mats*perScales), Tiles: one}
	p.Tiles.Rows = rows
	c.Quantize(p, x)
	wantCodes, wantScales := make([]byte, len(x)), make([]byte, mats*perScales)
	for m := range mats {
		lo, hi := m*rows*cols, (m+1)*rows*cols
		quantizeE4M3(wantCodes[lo:hi], wantScales[m*perScales:(m+1)*perScales], x[lo:hi], one)
	}
	require.Equal(t, wantCodes, p.Codes)
	require.Equal(t, wantScales, p.Scales)
	got := make([]float32, len(x))
	c.Dequantize(got, p)
	want := make([]float32, len(x))
	dequantizeE4M3(want[:rows*cols], wantCodes[:rows*cols], wantScales[:perScales], one)
	require.Equal(t, floatBits(want[:rows*cols]), floatBits(got[:rows*cols]))
	assert.Panics(t, func() { c.Quantize(p, x[:len(x)-cols]) }, "not whole matrices")
}

// TestSqErrDecoded checks the Dec form of every codec's candidate error
// against a hand-written sum: E4M3 in sixteen lanes, the others in index
// order.
func TestSqErrDecoded(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	v, dec, w := gaussian(rng, 32, 1), gaussian(rng, 32, 1), gaussian(rng, 32, 1)
	keep := make([]bool, 32)
	for i := range keep {
		w[i] = float32(math.Abs(float64(w[i])))
		keep[i] = i%3 != 0
	}
	const dmul = 0.75
	for _, c := range scaledCodecs {
		if c.SqErr == nil {
			continue
		}
		var lanes [16]float64
		var sum float64
		for i, x := range v {
			if !keep[i] {
				continue
			}
			if c.Name == "MXFP8" || c.Name == "E4M3" {
				d := float64(x - float32(dec[i]*dmul))
				lanes[i%16] += float64(float64(d*d) * float64(w[i])) // no fused add
				continue
			}
			d := float64(x) - float64(float32(dec[i]*dmul))
			sum += float64(float64(d*d) * float64(w[i]))
		}
		if c.Name == "MXFP8" || c.Name == "E4M3" {
			sum = sumLanes16(&lanes)
		}
		got := c.SqErr(&SqErrBlock{V: v, W: w, Keep: keep, Dec: dec, DMul: dmul})
		assert.Equal(t, sum, got, c.Name)
	}
}
