package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

// e2m1OCP is the OCP MX v1.0 E2M1 value table (code 0..7; bit 3 is the
// sign), written out independently of the dtype package.
var e2m1OCP = [8]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}

func e2m1(code uint8) float32 {
	v := e2m1OCP[code&7]
	if code&8 != 0 {
		return -v
	}
	return v
}

func TestQuantizeQ8_0HandDerived(t *testing.T) {
	tests := []struct {
		name  string
		x     map[int]float32 // non-zero elements
		d     uint16          // f16 bits of d
		codes map[int]int8    // non-zero codes
	}{
		{
			// amax 127: d = 1, id = 1, q = x.
			name:  "unit scale",
			x:     map[int]float32{1: 1, 2: -2, 30: 30, 31: 127},
			d:     0x3C00,
			codes: map[int]int8{1: 1, 2: -2, 30: 30, 31: 127},
		},
		{
			// amax 254: d = 2, id = 0.5; x·id = 1.5, −1.5, 2.5, 0.5, −0.5
			// round half away from zero (C roundf) to 2, −2, 3, 1, −1.
			name:  "ties away from zero",
			x:     map[int]float32{0: 3, 1: -3, 2: 5, 3: 1, 4: -1, 5: 254, 6: -254},
			d:     0x4000,
			codes: map[int]int8{0: 2, 1: -2, 2: 3, 3: 1, 4: -1, 5: 127, 6: -127},
		},
		{
			name: "all zero",
			d:    0,
		},
		{
			// NaN is ignored for the scale and encodes as 0.
			name:  "NaN element",
			x:     map[int]float32{0: float32(math.NaN()), 1: 127},
			d:     0x3C00,
			codes: map[int]int8{1: 127},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := make([]float32, 32)
			for i, v := range tt.x {
				x[i] = v
			}
			want := make([]byte, 34)
			binary.LittleEndian.PutUint16(want, tt.d)
			for i, q := range tt.codes {
				want[2+i] = byte(q)
			}
			got := make([]byte, 34)
			quantizeTo(t, TypeQ8_0, got, x, nil)
			assert.Equal(t, want, got)

			back := make([]float32, 32)
			dequantizeFrom(t, TypeQ8_0, back, got)
			d := float16.Frombits(tt.d).Float32()
			for i := range back {
				assert.Equal(t, float32(tt.codes[i])*d, back[i], "element %d", i)
			}
		})
	}
}

func TestQuantizeQ4_0HandDerived(t *testing.T) {
	tests := []struct {
		name  string
		x     map[int]float32
		d     uint16
		bytes map[int]byte // code bytes that are not 0x88 (both codes 8)
		vals  map[int]float32
	}{
		{
			// max = −8: d = 1, id = 1, q = min(15, trunc(x + 8.5)).
			// x0 −8 → 0, x16 7 → 15, x1 0 → 8, x17 0.5 → 9 (half up),
			// x2 −0.5 → 8 (half up), x18 1.49 → 9, x3 7.5 → 16 → 15.
			name:  "negative max",
			x:     map[int]float32{0: -8, 16: 7, 17: 0.5, 2: -0.5, 18: 1.49, 3: 7.5},
			d:     0x3C00,
			bytes: map[int]byte{0: 0xF0, 1: 0x98, 2: 0x98, 3: 0x8F},
			vals:  map[int]float32{0: -8, 16: 7, 17: 1, 18: 1, 3: 7},
		},
		{
			// max = 4 (first of ±4): d = −0.5, id = −2.
			// x0 4 → 0, x1 −3.5 → 15, x2 −4 → 16 → 15, x3 0.25 → 8,
			// x4 −0.25 → 9 (value −0.5).
			name:  "positive max",
			x:     map[int]float32{0: 4, 1: -3.5, 2: -4, 3: 0.25, 4: -0.25},
			d:     0xB800,
			bytes: map[int]byte{0: 0x80, 1: 0x8F, 2: 0x8F, 4: 0x89},
			vals:  map[int]float32{0: 4, 1: -3.5, 2: -3.5, 4: -0.5},
		},
		{
			// max stays +0, so d = 0/−8 = −0 (f16 0x8000), as in ggml.
			name: "all zero",
			d:    0x8000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := make([]float32, 32)
			for i, v := range tt.x {
				x[i] = v
			}
			want := make([]byte, 18)
			binary.LittleEndian.PutUint16(want, tt.d)
			for j := range 16 {
				want[2+j] = 0x88
			}
			for j, b := range tt.bytes {
				want[2+j] = b
			}
			got := make([]byte, 18)
			quantizeTo(t, TypeQ4_0, got, x, nil)
			assert.Equal(t, want, got)

			back := make([]float32, 32)
			dequantizeFrom(t, TypeQ4_0, back, got)
			for i := range back {
				assert.Equal(t, tt.vals[i], back[i], "element %d", i)
			}
		})
	}
}

// refQuantizeQ8_0 and refQuantizeQ4_0 are transcriptions of ggml's C
// reference quantizers using x448/float16 for the scale, as a second
// implementation to compare against.
func refQuantizeQ8_0(x []float32) []byte {
	var out []byte
	for len(x) > 0 {
		blk := x[:32]
		x = x[32:]
		amax := float32(0)
		for _, v := range blk {
			amax = float32(math.Max(float64(amax), math.Abs(float64(v))))
		}
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		out = binary.LittleEndian.AppendUint16(out, float16.Fromfloat32(d).Bits())
		for _, v := range blk {
			p := v * id
			out = append(out, byte(int8(math.Round(float64(p)))))
		}
	}
	return out
}

func refQuantizeQ4_0(x []float32) []byte {
	var out []byte
	for len(x) > 0 {
		blk := x[:32]
		x = x[32:]
		amax, mx := float32(0), float32(0)
		for _, v := range blk {
			if amax < float32(math.Abs(float64(v))) {
				amax = float32(math.Abs(float64(v)))
				mx = v
			}
		}
		d := mx / -8
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		out = binary.LittleEndian.AppendUint16(out, float16.Fromfloat32(d).Bits())
		for j := range 16 {
			p0, p1 := blk[j]*id, blk[j+16]*id
			q0 := min(15, int8(p0+8.5))
			q1 := min(15, int8(p1+8.5))
			out = append(out, byte(q0)|byte(q1)<<4)
		}
	}
	return out
}

func TestQuantizeAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, scale := range []float64{1e-6, 0.01, 1, 1000, 1e5} {
		x := make([]float32, 32*64)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale)
		}
		// Some blocks with exact ties and repeated maxima.
		for i := range 32 {
			x[i] = float32(i%5-2) * 0.5
		}
		got8 := make([]byte, len(x)/32*34)
		quantizeTo(t, TypeQ8_0, got8, x, nil)
		require.Equal(t, refQuantizeQ8_0(x), got8, "Q8_0, scale %g", scale)
		got4 := make([]byte, len(x)/32*18)
		quantizeTo(t, TypeQ4_0, got4, x, nil)
		require.Equal(t, refQuantizeQ4_0(x), got4, "Q4_0, scale %g", scale)

		// Dequantized Q8_0 values are within half a step of the input
		// while the scale is a normal float16.
		if scale < 0.01 {
			continue
		}
		back := make([]float32, len(x))
		dequantizeFrom(t, TypeQ8_0, back, got8)
		for b := range len(x) / 32 {
			d := float64(float16.Frombits(binary.LittleEndian.Uint16(got8[34*b:])).Float32())
			for j := range 32 {
				i := 32*b + j
				require.InDelta(t, x[i], back[i], d*0.5+math.Abs(float64(x[i]))*1e-3+1e-30, "Q8_0 element %d", i)
			}
		}
	}
}

func TestQuantizeQ8_0ScaleOverflow(t *testing.T) {
	// amax/127 beyond the float16 range is stored as +Inf, as ggml does.
	x := make([]float32, 32)
	x[0] = 1e7
	got := make([]byte, 34)
	quantizeTo(t, TypeQ8_0, got, x, nil)
	assert.Equal(t, uint16(0x7C00), binary.LittleEndian.Uint16(got))
	assert.Equal(t, byte(127), got[2])
}

func TestMXFP4Layout(t *testing.T) {
	// Element j in the low nibble of byte j, element j+16 in its high
	// nibble: codes[j] = j mod 16, codes[j+16] = 15 − j.
	codes := make([]uint8, 32)
	for j := range 16 {
		codes[j] = uint8(j)
		codes[j+16] = uint8(15 - j)
	}
	scales := []uint8{128} // 2^1
	got := make([]byte, 17)
	require.NoError(t, JoinBlocks(TypeMXFP4, got, codes, scales))
	want := []byte{128,
		0xF0, 0xE1, 0xD2, 0xC3, 0xB4, 0xA5, 0x96, 0x87,
		0x78, 0x69, 0x5A, 0x4B, 0x3C, 0x2D, 0x1E, 0x0F}
	assert.Equal(t, want, got)

	c2, s2 := make([]uint8, 32), make([]uint8, 1)
	SplitBlocks(TypeMXFP4, c2, s2, got)
	assert.Equal(t, codes, c2)
	assert.Equal(t, scales, s2)

	vals := make([]float32, 32)
	dequantizeFrom(t, TypeMXFP4, vals, got)
	for j := range 32 {
		assert.Equal(t, 2*e2m1(codes[j]), vals[j], "element %d", j)
	}
	assert.Equal(t, float32(-12), vals[16]) // code 15 = −6, times 2
	assert.Equal(t, float32(1), vals[1])    // code 1 = 0.5, times 2
	assert.True(t, math.Signbit(float64(vals[8])), "code 8 is −0")

	// A single code at element 20 lands in the high nibble of byte 4.
	one := make([]uint8, 64)
	one[32+20] = 0x7 // second block
	got = make([]byte, 34)
	require.NoError(t, JoinBlocks(TypeMXFP4, got, one, []uint8{0, 127}))
	for i, b := range got {
		switch i {
		case 17:
			assert.Equal(t, byte(127), b)
		case 17 + 1 + 4:
			assert.Equal(t, byte(0x70), b)
		default:
			assert.Zero(t, b, "byte %d", i)
		}
	}
}

// TestQuantizeMXFP4HandDerived checks QuantizeMXFP4 on a block worked out
// from the E2M1 table: amax 5 has floor(log2 5) = 2, so the scale is 2^0
// (E8M0 127) and the elements are rounded to the E2M1 values, ties to even:
// 5 → 4 (code 6), −2.5 → −2 (0xC), 0.75 → 1 (2), 0.3 → 0.5 (1), −0.2 → −0
// (8), at elements 0, 1, 16, 17 and 31. A second block, 3·2^−20, has amax
// exponent −19: scale 2^−21 (E8M0 106) and element 3·2^−20 = 6·2^−21 → 6
// (code 7).
func TestQuantizeMXFP4HandDerived(t *testing.T) {
	x := make([]float32, 64)
	x[0], x[1], x[16], x[17], x[31] = 5, -2.5, 0.75, 0.3, -0.2
	x[32+5] = 3 * 0x1p-20
	got := make([]byte, 34)
	quantizeTo(t, TypeMXFP4, got, x, nil)
	want := make([]byte, 34)
	want[0] = 127
	want[1+0] = 0x6 | 0x2<<4 // elements 0 and 16
	want[1+1] = 0xC | 0x1<<4 // elements 1 and 17
	want[1+15] = 0x8 << 4    // element 31
	want[17] = 106
	want[17+1+5] = 0x7
	assert.Equal(t, want, got)
	assert.Error(t, Quantize(TypeMXFP4, make([]byte, 16), make([]float32, 32), nil))
	assert.Error(t, Quantize(TypeMXFP4, make([]byte, 17), make([]float32, 31), nil))
}

func TestMXFP4Scales(t *testing.T) {
	block := func(e uint8) []float32 {
		b := make([]byte, 17)
		b[0] = e
		b[1] = 0x71 // element 0: code 1 (0.5); element 16: code 7 (6)
		v := make([]float32, 32)
		dequantizeFrom(t, TypeMXFP4, v, b)
		return v
	}
	v := block(127)
	assert.Equal(t, float32(0.5), v[0])
	assert.Equal(t, float32(6), v[16])
	v = block(0) // 2^−127
	assert.Equal(t, float32(math.Ldexp(0.5, -127)), v[0])
	assert.Equal(t, float32(math.Ldexp(6, -127)), v[16])
	v = block(254) // 2^127
	assert.Equal(t, float32(math.Ldexp(0.5, 127)), v[0])
	assert.True(t, math.IsInf(float64(v[16]), 1), "6·2^127 overflows float32")
	v = block(255) // NaN scale: the whole block is NaN
	for i, x := range v {
		assert.True(t, math.IsNaN(float64(x)), "element %d", i)
	}
}

func TestNVFP4Layout(t *testing.T) {
	// codes[k] = k mod 16: in sub-block s, byte j holds j and j+8.
	codes := make([]uint8, 64)
	for k := range codes {
		codes[k] = uint8(k % 16)
	}
	scales := []uint8{0x38, 0x01, 0x7E, 0x7F} // 1, 2^−9, 448, 0 (ggml)
	got := make([]byte, 36)
	require.NoError(t, JoinBlocks(TypeNVFP4, got, codes, scales))
	want := []byte{0x38, 0x01, 0x7E, 0x7F}
	for range 4 {
		want = append(want, 0x80, 0x91, 0xA2, 0xB3, 0xC4, 0xD5, 0xE6, 0xF7)
	}
	assert.Equal(t, want, got)

	c2, s2 := make([]uint8, 64), make([]uint8, 4)
	SplitBlocks(TypeNVFP4, c2, s2, got)
	assert.Equal(t, codes, c2)
	assert.Equal(t, scales, s2)

	vals := make([]float32, 64)
	dequantizeFrom(t, TypeNVFP4, vals, got)
	sv := []float32{1, 0x1p-9, 448, 0}
	for k := range 64 {
		assert.Equal(t, e2m1(codes[k])*sv[k/16], vals[k], "element %d", k)
	}

	// A single code at sub-block 2, element 9 lands in the high nibble of
	// data byte 2·8 + 1.
	one := make([]uint8, 64)
	one[2*16+9] = 0xF
	got = make([]byte, 36)
	require.NoError(t, JoinBlocks(TypeNVFP4, got, one, []uint8{0, 0, 0x38, 0}))
	for i, b := range got {
		switch i {
		case 2:
			assert.Equal(t, byte(0x38), b)
		case 4 + 2*8 + 1:
			assert.Equal(t, byte(0xF0), b)
		default:
			assert.Zero(t, b, "byte %d", i)
		}
	}
	dequantizeFrom(t, TypeNVFP4, vals, got)
	assert.Equal(t, float32(-6), vals[2*16+9])
}

func TestNVFP4ScaleDecode(t *testing.T) {
	// ggml_ue4m3_to_fp32 times 2: bits 6..3 exponent (bias 7), bits 2..0
	// mantissa, subnormal for exponent 0; 0x00 and 0x7F are 0; bit 7 is
	// ignored except that 0xFF is not special.
	tests := []struct {
		b    byte
		want float32
	}{
		{0x00, 0}, {0x7F, 0}, {0x01, 0x1p-9}, {0x07, 7 * 0x1p-9}, {0x08, 0x1p-6},
		{0x38, 1}, {0x3C, 1.5}, {0x7E, 448}, {0x80, 0}, {0xB8, 1}, {0xFF, 480},
	}
	for _, tt := range tests {
		b := make([]byte, 36)
		b[0], b[4] = tt.b, 0x02 // element 0: code 2 (1.0) times the scale
		v := make([]float32, 64)
		dequantizeFrom(t, TypeNVFP4, v, b)
		assert.Equal(t, tt.want, v[0], "byte %#x", tt.b)
	}
}

func TestDequantizeOtherTypes(t *testing.T) {
	t.Run("Q4_1", func(t *testing.T) {
		b := (&hb{}).u16(0x3800).u16(0xBC00).bytes() // d 0.5, m −1
		for j := range 16 {
			b = append(b, byte(j)|byte(15-j)<<4)
		}
		v := make([]float32, 32)
		dequantizeFrom(t, TypeQ4_1, v, b)
		for j := range 16 {
			assert.Equal(t, float32(j)*0.5-1, v[j])
			assert.Equal(t, float32(15-j)*0.5-1, v[j+16])
		}
	})
	t.Run("Q5_0", func(t *testing.T) {
		b := (&hb{}).u16(0x3C00).u32(0x80000001).bytes() // d 1; fifth bits of elements 0 and 31
		b = append(b, 0x0F)
		b = append(b, make([]byte, 15)...)
		v := make([]float32, 32)
		dequantizeFrom(t, TypeQ5_0, v, b)
		assert.Equal(t, float32(15), v[0])  // 0x1F − 16
		assert.Equal(t, float32(-16), v[1]) // 0 − 16
		assert.Equal(t, float32(-16), v[16])
		assert.Equal(t, float32(0), v[31]) // 0x10 − 16
	})
	t.Run("Q5_1", func(t *testing.T) {
		b := (&hb{}).u16(0x4000).u16(0x3800).u32(0x00010000).bytes() // d 2, m 0.5; fifth bit of element 16
		b = append(b, 0x31)
		b = append(b, make([]byte, 15)...)
		v := make([]float32, 32)
		dequantizeFrom(t, TypeQ5_1, v, b)
		assert.Equal(t, float32(2.5), v[0])   // 1·2 + 0.5
		assert.Equal(t, float32(38.5), v[16]) // 19·2 + 0.5
		assert.Equal(t, float32(0.5), v[1])
	})
}

func TestBlockCodecsMisuse(t *testing.T) {
	assert.Error(t, Quantize(TypeQ8_0, make([]byte, 34), make([]float32, 31), nil))
	assert.Error(t, Quantize(TypeQ8_0, make([]byte, 33), make([]float32, 32), nil))
	assert.Error(t, Dequantize(TypeQ4_0, make([]float32, 32), make([]byte, 17)))
	assert.Panics(t, func() { _ = JoinBlocks(TypeMXFP4, make([]byte, 17), make([]uint8, 32), nil) })
	var pe *PackError
	err := JoinBlocks(TypeMXFP4, make([]byte, 17), append(make([]uint8, 31), 16), []uint8{0})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, PackError{TypeMXFP4, 0, "code 0x10 of element 31 is above the largest, 15"}, *pe)
	// A TQ1_0 byte holds five trits: code 3 has no place.
	codes := make([]uint8, 512)
	codes[300] = 3
	err = JoinBlocks(TypeTQ1_0, make([]byte, 108), codes, make([]byte, 4))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, PackError{TypeTQ1_0, 1, "code 0x3 of element 44 is above the largest, 2"}, *pe)
	codes[300] = 2
	err = JoinBlocks(TypeQ1_0, make([]byte, 72), codes, make([]byte, 8))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, PackError{TypeQ1_0, 2, "code 0x2 of element 44 is above the largest, 1"}, *pe)
	assert.True(t, CanSplit(TypeQ2_0))
	assert.False(t, CanSplit(TypeQ4_K))
	assert.Panics(t, func() { _ = JoinBlocks(TypeNVFP4, make([]byte, 36), make([]uint8, 64), make([]uint8, 3)) })
	assert.Panics(t, func() { SplitBlocks(TypeNVFP4, make([]uint8, 64), make([]uint8, 4), make([]byte, 35)) })
	assert.Panics(t, func() { SplitBlocks(TypeQ4_K, make([]uint8, 256), make([]uint8, 8), make([]byte, 144)) })
	assert.NoError(t, Quantize(TypeQ4_0, nil, nil, nil))
}

// quantTestInput returns 32·nb values covering an all-zero block, a block
// whose float16 scale overflows, negative maxima, ties and a NaN.
func quantTestInput(nb int) []float32 {
	rng := rand.New(rand.NewPCG(9, 10))
	x := make([]float32, 32*nb)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(20)-10)))
	}
	clear(x[:32])       // block 0: all zero
	x[32] = 1e7         // block 1: d = 1e7/127 overflows float16
	for i := range 32 { // block 2: the largest magnitude is negative
		x[64+i] = float32(i%3-1) * 0.25
	}
	x[64] = -9
	for i := range 32 { // block 3: exact ties
		x[96+i] = float32(i%5-2) * 0.5
	}
	x[128+3] = float32(math.NaN()) // block 4: a NaN element
	return x
}

func TestJoinQ8_0MatchesQuantize(t *testing.T) {
	x := quantTestInput(8)
	blocks := make([]byte, len(x)/32*34)
	quantizeTo(t, TypeQ8_0, blocks, x, nil)
	// Codes and scales read off ggml's block_q8_0 layout element by element.
	codes := make([]uint8, len(x))
	scales := make([]uint16, len(x)/32)
	for i := range x {
		b, j := i/32, i%32
		codes[i] = blocks[34*b+2+j]
		scales[b] = uint16(blocks[34*b]) | uint16(blocks[34*b+1])<<8
	}
	got := make([]byte, len(blocks))
	require.NoError(t, JoinBlocks(TypeQ8_0, got, codes, f16Bytes(scales)))
	assert.Equal(t, blocks, got)

	c2, sb := make([]uint8, len(x)), make([]byte, 2*len(x)/32)
	SplitBlocks(TypeQ8_0, c2, sb, blocks)
	s2 := f16Patterns(sb)
	assert.Equal(t, codes, c2)
	assert.Equal(t, scales, s2)
	assert.Equal(t, uint16(0x7C00), s2[1], "float16 +Inf scale")
}

func TestJoinQ4_0MatchesQuantize(t *testing.T) {
	x := quantTestInput(8)
	blocks := make([]byte, len(x)/32*18)
	quantizeTo(t, TypeQ4_0, blocks, x, nil)
	// Element j < 16 of a block is the low nibble of byte j, element j ≥ 16
	// the high nibble of byte j−16.
	codes := make([]uint8, len(x))
	scales := make([]uint16, len(x)/32)
	for i := range x {
		b, j := i/32, i%32
		c := blocks[18*b+2+j%16]
		if j >= 16 {
			c >>= 4
		}
		codes[i] = c & 0x0F
		scales[b] = uint16(blocks[18*b]) | uint16(blocks[18*b+1])<<8
	}
	got := make([]byte, len(blocks))
	require.NoError(t, JoinBlocks(TypeQ4_0, got, signed4(codes), f16Bytes(scales)))
	assert.Equal(t, blocks, got)

	c2, sb := make([]uint8, len(x)), make([]byte, 2*len(x)/32)
	SplitBlocks(TypeQ4_0, c2, sb, blocks)
	c2, s2 := signed4(c2), f16Patterns(sb)
	assert.Equal(t, codes, c2)
	assert.Equal(t, scales, s2)
	assert.Equal(t, uint16(0x3C80), s2[2], "d = −9/−8 = 1.125: exponent 15, mantissa 0x080")
	assert.Equal(t, uint8(0), c2[64], "the largest magnitude gets code 0")
}

func TestJoinQ4_0Layout(t *testing.T) {
	// codes[j] = j mod 16, codes[j+16] = 15 − j, d = 1.0 (0x3C00).
	codes := make([]uint8, 32)
	for j := range 16 {
		codes[j] = uint8(j)
		codes[j+16] = uint8(15 - j)
	}
	got := make([]byte, 18)
	require.NoError(t, JoinBlocks(TypeQ4_0, got, signed4(codes), []byte{0x00, 0x3C}))
	want := []byte{0x00, 0x3C,
		0xF0, 0xE1, 0xD2, 0xC3, 0xB4, 0xA5, 0x96, 0x87,
		0x78, 0x69, 0x5A, 0x4B, 0x3C, 0x2D, 0x1E, 0x0F}
	assert.Equal(t, want, got)
	vals := make([]float32, 32)
	dequantizeFrom(t, TypeQ4_0, vals, got)
	assert.Equal(t, float32(-8), vals[0])
	assert.Equal(t, float32(7), vals[15])
	assert.Equal(t, float32(7), vals[16])
}

func TestJoinQ8_0Layout(t *testing.T) {
	codes := make([]uint8, 64)
	codes[0] = 0x81     // −127
	codes[32+31] = 0x7F // 127, last element of block 1
	got := make([]byte, 68)
	require.NoError(t, JoinBlocks(TypeQ8_0, got, codes, f16Bytes([]uint16{0x3C00, 0xC000}))) // 1.0, −2.0
	want := make([]byte, 68)
	want[0], want[1], want[2] = 0x00, 0x3C, 0x81
	want[34], want[35], want[67] = 0x00, 0xC0, 0x7F
	assert.Equal(t, want, got)
	vals := make([]float32, 64)
	dequantizeFrom(t, TypeQ8_0, vals, got)
	assert.Equal(t, float32(-127), vals[0])
	assert.Equal(t, float32(-254), vals[63])
}

func TestJoinSplitMisuse(t *testing.T) {
	assert.Panics(t, func() { _ = JoinBlocks(TypeQ8_0, make([]byte, 34), make([]uint8, 32), nil) })
	assert.Panics(t, func() { _ = JoinBlocks(TypeQ8_0, make([]byte, 33), make([]uint8, 32), make([]byte, 2)) })
	assert.Panics(t, func() { SplitBlocks(TypeQ8_0, make([]uint8, 32), make([]byte, 4), make([]byte, 34)) })
	var pe *PackError
	err := JoinBlocks(TypeQ4_0, make([]byte, 18), append(make([]uint8, 31), 16), make([]byte, 2))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 0, pe.Block)
	assert.Panics(t, func() { SplitBlocks(TypeQ4_0, make([]uint8, 32), make([]byte, 2), make([]byte, 17)) })
	assert.NoError(t, JoinBlocks(TypeQ4_0, nil, nil, nil))
}

// TestQuantizeQ8_0Edges compares QuantizeQ8_0 with the transcription of
// ggml's reference on blocks of ties (p = k + ½ exactly, rounded away from
// zero), zeros and −0, subnormal and tiny scales (whose reciprocal
// overflows), the largest float32 values and infinities, and blocks of
// every size of group; and on blocks holding NaN (which ggml's amax skips and
// the transcription's math.Max does not) with the element-by-element
// quantizer.
func TestQuantizeQ8_0Edges(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	sub := math.Float32frombits
	var blocks [][]float32
	block := func(xs ...float32) []float32 {
		b := make([]float32, 32)
		copy(b, xs)
		return b
	}
	ties := block(127, -127, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 126.5, -126.5, 63.5, -0.49999997, 0.50000006)
	blocks = append(blocks, ties,
		block(), block(float32(math.Copysign(0, -1)), 0),
		block(sub(1), -sub(3)), block(sub(200), sub(100)), block(sub(0x7fffff), -sub(0x400000)),
		block(0x1p-120, 0x1p-121), block(0x1p-126*127, 1e-38), block(0x1p-127*127, 0x1p-128),
		block(math.MaxFloat32, -math.MaxFloat32, 1), block(1e7, 3), block(inf, 1, -2), block(-inf, inf),
	)
	r := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		b := make([]float32, 32)
		e := r.IntN(80) - 40
		for i := range b {
			b[i] = float32(r.NormFloat64() * math.Ldexp(1, e))
		}
		blocks = append(blocks, b)
	}
	var x []float32
	for _, b := range blocks {
		x = append(x, b...)
	}
	// ggml's reference: the transcription, except where 1/d overflows
	// float32 (d = amax/127 below 2^-128): then x·(1/d) is ±Inf for every
	// nonzero x, clamped to ±127, and NaN (code 0) for zeros, with d
	// stored as float16 zero. (The transcription converts ±Inf to int8,
	// which Go leaves undefined.)
	want := refQuantizeQ8_0(x)
	for k, b := range blocks {
		amax := float32(0)
		for _, v := range b {
			amax = max(amax, abs32(v))
		}
		if d := amax / 127; d == 0 || !math.IsInf(float64(1/d), 1) {
			continue
		}
		y := want[34*k : 34*k+34]
		y[0], y[1] = 0, 0
		for j, v := range b {
			switch {
			case v > 0:
				y[2+j] = 127
			case v < 0:
				y[2+j] = 0x81 // −127
			default:
				y[2+j] = 0
			}
		}
	}
	for _, n := range []int{1, 63, 64, 65, len(blocks)} { // groups of 64 blocks, whole and not
		got := make([]byte, 34*n)
		quantizeTo(t, TypeQ8_0, got, x[:32*n], nil)
		for k := range n {
			if !bytes.Equal(want[34*k:34*k+34], got[34*k:34*k+34]) {
				t.Fatalf("%d blocks: block %d %v: want % x, got % x", n, k, blocks[k], want[34*k:34*k+34], got[34*k:34*k+34])
			}
		}
	}

	withNaN := [][]float32{block(nan), block(1, nan, -3), block(nan, inf), block(2.5, float32(math.Copysign(math.NaN(), -1)), 127)}
	for _, b := range withNaN {
		want := make([]byte, 34)
		refQuantizeQ8_0NaN(want, b)
		got := make([]byte, 34)
		quantizeTo(t, TypeQ8_0, got, b, nil)
		assert.Equal(t, want, got, "%v", b)
	}
	// The NaN element gets code 0; the others follow the finite amax.
	got := make([]byte, 34)
	quantizeTo(t, TypeQ8_0, got, block(1, nan, -3), nil)
	assert.Equal(t, []byte{42, 0, 0xff - 126}, got[2:5], "1/(3/127) → 42.33 → 42, NaN → 0, −127")
}

// refQuantizeQ8_0NaN transcribes ggml's quantize_row_q8_0_ref for one block
// that may hold NaN: its amax loop keeps the larger of amax and |x| by a
// comparison, which skips NaN; roundf of NaN is NaN, stored as code 0; the
// scale goes to float16 through x448/float16.
func refQuantizeQ8_0NaN(y []byte, x []float32) {
	var amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(y, float16.Fromfloat32(d).Bits())
	for j, v := range x {
		q := float32(math.Round(float64(v * id)))
		switch {
		case q != q:
			q = 0
		case q > 127:
			q = 127
		case q < -127:
			q = -127
		}
		y[2+j] = byte(int8(q))
	}
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// BenchmarkQuantizeQ8_0 measures Quantize to Q8_0 on 64 Ki float32 values.
func BenchmarkQuantizeQ8_0(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 64<<10)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]byte, len(x)/32*34)
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		if err := Quantize(TypeQ8_0, dst, x, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDequantizeQ8_0EveryScale decodes a block for every float16 scale code
// and compares with the product q·d, d decoded by package dtype.
func TestDequantizeQ8_0EveryScale(t *testing.T) {
	src := make([]byte, 0, 65536*34)
	for c := range 65536 {
		src = binary.LittleEndian.AppendUint16(src, uint16(c))
		for j := range 32 {
			src = append(src, byte(int8(j*8-127)))
		}
	}
	dst := make([]float32, 65536*32)
	dequantizeFrom(t, TypeQ8_0, dst, src)
	for c := range 65536 {
		d := fmtF16.Decode(uint32(c))
		for j := range 32 {
			want := float32(int8(j*8-127)) * d
			if got := dst[32*c+j]; math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("scale %#04x element %d: want %v, got %v", c, j, want, got)
			}
		}
	}
}

func TestBitsPerValue(t *testing.T) {
	for _, c := range []struct {
		t    Type
		want float64
	}{
		{TypeF32, 32}, {TypeF16, 16}, {TypeBF16, 16},
		{TypeQ8_0, 8.5},    // 34 bytes per 32
		{TypeQ4_0, 4.5},    // 18 per 32
		{TypeMXFP4, 4.25},  // 17 per 32
		{TypeQ4_K, 4.5},    // 144 per 256
		{TypeQ6_K, 6.5625}, // 210 per 256
		{TypeQ2_K, 2.625},  // 84 per 256
		{TypeIQ4_XS, 4.25}, // 136 per 256
		{Type(1 << 20), 0}, // unknown
	} {
		assert.Equal(t, c.want, c.t.BitsPerValue(), "%v", c.t)
	}
}
