package gguf

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Float16 codes of the scales the hand-built blocks use.
const (
	f16Quarter = 0x3400 // 0.25
	f16Half    = 0x3800 // 0.5
	f16One     = 0x3C00 // 1
	f16Two     = 0x4000 // 2
)

// handBlock is a block built byte by byte, with some of its elements'
// values derived by hand from the format's definition.
type handBlock struct {
	name  string
	typ   Type
	block []byte
	want  map[int]float32 // element → value
}

// put writes bytes at offset off of b.
func put(b []byte, off int, p ...byte) { copy(b[off:], p) }

// put16 writes a little-endian uint16 at offset off of b.
func put16(b []byte, off int, v uint16) { binary.LittleEndian.PutUint16(b[off:], v) }

// handBlocks returns one hand-built block of every K-quant and IQ4 type
// (the 32-element Q4_1, Q5_0 and Q5_1 are in TestDequantizeOtherTypes).
func handBlocks() []handBlock {
	var out []handBlock

	// Q2_K: scales[0..15], qs[16..79], d@80, dmin@82.
	// d = 0.5, dmin = 0.25. Scale byte s: low nibble scale, high nibble min.
	//   s0 = 0x21: sc 1, m 2 → 0.5q − 0.5
	//   s2 = 0x05: sc 5, m 0 → 2.5q
	//   s9 = 0x3A: sc 10, m 3 → 5q − 0.75
	//   s15 = 0xF3: sc 3, m 15 → 1.5q − 3.75
	// Code byte 0 = 0xE4: element 0 (k=0) code 0, element 32 (k=1) code 1,
	// element 64 (k=2, sub-block 4, all zero) code 2, element 96 code 3.
	// Element 144 = 128 + 16 (h=1, k=0, l=16): code byte 32+16 bits 0..1 = 2.
	// Element 255 (h=1, k=3, l=31): code byte 63 bits 6..7 = 1.
	{
		b := make([]byte, 84)
		put(b, 0, 0x21)
		put(b, 2, 0x05)
		put(b, 9, 0x3A)
		put(b, 15, 0xF3)
		put(b, 16+0, 0xE4)
		put(b, 16+48, 0x02)
		put(b, 16+63, 0x40)
		put16(b, 80, f16Half)
		put16(b, 82, f16Quarter)
		out = append(out, handBlock{"Q2_K", TypeQ2_K, b, map[int]float32{
			0: -0.5, 1: -0.5, 32: 2.5, 33: 0, 64: 0, 96: 0,
			144: 9.25, 145: -0.75, 159: -0.75, 255: -2.25, 191: 0,
		}})
	}

	// Q3_K: hmask[0..31], qs[32..95], scales[96..107], d@108; d = 0.25.
	// Stored 6-bit scale v, sc = v − 32; an all-zero field is v = 0, so
	// every sub-block not set below has d·sc = 0.25·−32 = −8.
	//   s0: v = 33 (low nibble 1 in byte 96, top bits 2 at bits 0..1 of
	//       byte 104) → d·sc = 0.25
	//   s9: v = 63 (low nibble F in the high nibble of byte 97, top bits 3
	//       at bits 4..5 of byte 105) → d·sc = 7.75
	// Element e = 128h + 32k + l: low two bits at bits 2k of qs byte 32h+l,
	// high bit at bit 4h+k of hmask byte l, q = bits − 4.
	//   e0: qs[0] = 3, hmask[0] bit 0 = 1 → 7 − 4 = 3 → 0.75
	//   e1: all zero → −4 → −1
	//   e32 (k=1): qs[0] bits 2..3 = 0, hmask[0] bit 1 = 0 → −4; sub-block 2
	//       → −8·−4 = 32
	//   e144 (h=1, k=0, l=16): qs[48] = 1, hmask[16] bit 4 = 1 → 5 − 4 = 1;
	//       sub-block 9 → 7.75
	//   e145: −4 → −31
	//   e255 (h=1, k=3, l=31): qs[63] bits 6..7 = 2, hmask[31] bit 7 = 1
	//       → 6 − 4 = 2; sub-block 15 → −16
	{
		b := make([]byte, 110)
		put(b, 0, 0x01)
		put(b, 16, 0x10)
		put(b, 31, 0x80)
		put(b, 32+0, 0x03)
		put(b, 32+48, 0x01)
		put(b, 32+63, 0x80)
		put(b, 96, 0x01, 0xF0)
		put(b, 104, 0x02, 0x30)
		put16(b, 108, f16Quarter)
		out = append(out, handBlock{"Q3_K", TypeQ3_K, b, map[int]float32{
			0: 0.75, 1: -1, 32: 32, 144: 7.75, 145: -31, 255: -16,
		}})
	}

	// Q4_K: d@0 = 0.5, dmin@2 = 1, scales[4..15], qs[16..143].
	//   s0: sc = scales[0]&63 = 3, m = scales[4]&63 = 2 → 1.5q − 2
	//   s5: sc = scales[9]&0xF | (scales[1]>>6)<<4 = 1 | 3<<4 = 49,
	//       m = scales[9]>>4 | (scales[5]>>6)<<4 = 2 | 1<<4 = 18
	//       → 24.5q − 18
	//   s1 then has sc = scales[1]&63 = 0 and m = scales[5]&63 = 0.
	// Element 64c + l: low nibble of qs byte 32c+l (l < 32), else the high
	// nibble of byte 32c+l−32.
	//   e0: qs[0] low nibble F → 1.5·15 − 2 = 20.5; e1: −2
	//   e32: qs[0] high nibble 4, sub-block 1 (0, 0) → 0
	//   e160 (c=2, l=32): qs[64] high nibble 2 → 24.5·2 − 18 = 31; e161: −18
	{
		b := make([]byte, 144)
		put16(b, 0, f16Half)
		put16(b, 2, f16One)
		put(b, 4+0, 0x03, 0xC0)
		put(b, 4+4, 0x02, 0x40)
		put(b, 4+9, 0x21)
		put(b, 16+0, 0x4F)
		put(b, 16+64, 0x20)
		out = append(out, handBlock{"Q4_K", TypeQ4_K, b, map[int]float32{
			0: 20.5, 1: -2, 32: 0, 160: 31, 161: -18,
		}})
	}

	// Q5_K: as Q4_K (same scales and mins), with qh[16..47] and the low
	// nibbles at qs[48..175]; element 32s+l has its fifth bit at bit s of
	// qh byte l.
	//   e0: nibble F, qh[0] bit 0 → 31 → 1.5·31 − 2 = 44.5; e1: −2
	//   e160 (s5, l=0): high nibble of qs[64] = 2, qh[0] bit 5 → 18
	//       → 24.5·18 − 18 = 423; e161: −18
	{
		b := make([]byte, 176)
		put16(b, 0, f16Half)
		put16(b, 2, f16One)
		put(b, 4+0, 0x03, 0xC0)
		put(b, 4+4, 0x02, 0x40)
		put(b, 4+9, 0x21)
		put(b, 16, 0x21)
		put(b, 48+0, 0x0F)
		put(b, 48+64, 0x20)
		out = append(out, handBlock{"Q5_K", TypeQ5_K, b, map[int]float32{
			0: 44.5, 1: -2, 160: 423, 161: -18,
		}})
	}

	// Q6_K: ql[0..127], qh[128..191], int8 scales[192..207], d@208 = 0.5.
	// Scales: s0 = 2, s2 = 1, s9 = −3, s15 = 127. Element 128h + 32k + l:
	// low nibble in ql byte 64h + 32(k%2) + l (high nibble for k ≥ 2), top
	// bits at bits 2k of qh byte 32h + l; q = bits − 32.
	//   e0: ql[0] low 5, qh[0] bits 0..1 = 2 → 37 − 32 = 5 → 0.5·2·5 = 5
	//   e1: 0 − 32 → 0.5·2·−32 = −32
	//   e32 (k=1): ql[32] low 1, qh[0] bits 2..3 = 0 → −31; s2 → −15.5
	//   e144 (h=1, k=0, l=16): ql[80] low A, qh[48] bits 0..1 = 1 → 26 − 32
	//       = −6; s9 → 0.5·−3·−6 = 9
	//   e255 (h=1, k=3, l=31): ql[127] high F, qh[63] bits 6..7 = 3 → 63 −
	//       32 = 31; s15 → 0.5·127·31 = 1968.5
	{
		b := make([]byte, 210)
		put(b, 0, 0x05)
		put(b, 32, 0x01)
		put(b, 80, 0x0A)
		put(b, 127, 0xF0)
		put(b, 128+0, 0x02)
		put(b, 128+48, 0x01)
		put(b, 128+63, 0xC0)
		put(b, 192+0, 2)
		put(b, 192+2, 1)
		put(b, 192+9, 0xFD)
		put(b, 192+15, 0x7F)
		put16(b, 208, f16Half)
		out = append(out, handBlock{"Q6_K", TypeQ6_K, b, map[int]float32{
			0: 5, 1: -32, 32: -15.5, 144: 9, 255: 1968.5,
		}})
	}

	// Q8_K: f32 d = 0.125, qs[4..259], bsums (ignored) filled with 0xAB.
	{
		b := make([]byte, 292)
		binary.LittleEndian.PutUint32(b, math.Float32bits(0.125))
		put(b, 4, 0x80, 0xFF)
		put(b, 4+255, 0x7F)
		for i := 260; i < 292; i++ {
			b[i] = 0xAB
		}
		out = append(out, handBlock{"Q8_K", TypeQ8_K, b, map[int]float32{
			0: -16, 1: -0.125, 255: 15.875,
		}})
	}

	// IQ4_NL: d = 2; byte j holds element j (low) and j+16 (high).
	// Byte 0 = 0x7A: e0 index 10 → 25·2 = 50, e16 index 7 → −10·2 = −20;
	// e1 index 0 → −127·2 = −254; e31 index 0 → −254.
	{
		b := make([]byte, 18)
		put16(b, 0, f16Two)
		put(b, 2, 0x7A)
		out = append(out, handBlock{"IQ4_NL", TypeIQ4_NL, b, map[int]float32{
			0: 50, 16: -20, 1: -254, 31: -254,
		}})
	}

	// IQ4_XS: d@0 = 0.5, scales_h@2 = 0xC002, scales_l[4..7], qs[8..135].
	//   s0: low nibble 1 (scales_l[0] low), top bits 2 (bits 0..1) → 33 →
	//       sc 1 → 0.5
	//   s7: low nibble F (scales_l[3] high), top bits 3 (bits 14..15) → 63
	//       → sc 31 → 15.5
	//   others: 0 → sc −32 → −16
	//   e0: qs[0] low 0 → −127·0.5 = −63.5; e16: high F → 113·0.5 = 56.5
	//   e224 (s7): qs[112] low 8 → 1·15.5; e240: high 0 → −127·15.5
	//   e32 (s1): index 0 → −127·−16 = 2032
	{
		b := make([]byte, 136)
		put16(b, 0, f16Half)
		put16(b, 2, 0xC002)
		put(b, 4, 0x01, 0, 0, 0xF0)
		put(b, 8+0, 0xF0)
		put(b, 8+112, 0x08)
		out = append(out, handBlock{"IQ4_XS", TypeIQ4_XS, b, map[int]float32{
			0: -63.5, 16: 56.5, 224: 15.5, 240: -1968.5, 32: 2032,
		}})
	}
	return out
}

func TestDequantizeHandBuilt(t *testing.T) {
	for _, hb := range handBlocks() {
		t.Run(hb.name, func(t *testing.T) {
			require.Len(t, hb.block, hb.typ.BlockBytes())
			got := make([]float32, hb.typ.BlockSize())
			require.NoError(t, Dequantize(hb.typ, got, hb.block))
			for e, v := range hb.want {
				assert.Equal(t, v, got[e], "element %d", e)
			}
			// Float32s reads the same block from a file.
			assert.True(t, CanFloat32(hb.typ))
		})
	}
}

// specDecode decodes one block of type typ the long way, from the format's
// definition: it extracts every field with bit arithmetic on the whole
// block read as a little-endian bit string and computes each element's
// value in float32 in the format's order of operations.
func specDecode(typ Type, b []byte) []float32 {
	bit := func(byteOff, i int) int { return int(b[byteOff+i/8]>>(i%8)) & 1 }
	bits := func(byteOff, i, n int) int { // n bits from bit i of the field at byteOff
		v := 0
		for k := range n {
			v |= bit(byteOff, i+k) << k
		}
		return v
	}
	f16 := func(off int) float32 { return fmtF16.Decode(uint32(binary.LittleEndian.Uint16(b[off:]))) }
	out := make([]float32, typ.BlockSize())
	switch typ {
	case TypeQ2_K:
		d, dmin := f16(80), f16(82)
		for e := range out {
			h, k, l := e/128, e/32%4, e%32
			q := bits(16, 8*(32*h+l)+2*k, 2)
			s := e / 16
			sc, m := bits(0, 8*s, 4), bits(0, 8*s+4, 4)
			out[e] = float32(d*float32(sc))*float32(q) - float32(dmin*float32(m))
		}
	case TypeQ3_K:
		d := f16(108)
		for e := range out {
			h, k, l := e/128, e/32%4, e%32
			q := bits(32, 8*(32*h+l)+2*k, 2) | bit(0, 8*l+4*h+k)<<2
			s := e / 16
			v := bits(96, 8*(s%8)+4*(s/8), 4) | bits(96, 8*(8+s%4)+2*(s/4), 2)<<4
			out[e] = float32(d*float32(v-32)) * float32(q-4)
		}
	case TypeQ4_K, TypeQ5_K:
		d, dmin := f16(0), f16(2)
		qs := 16
		if typ == TypeQ5_K {
			qs = 48
		}
		for e := range out {
			s, l := e/32, e%32
			var sc, m int
			if s < 4 {
				sc, m = bits(4, 8*s, 6), bits(4, 8*(s+4), 6)
			} else {
				sc = bits(4, 8*(s+4), 4) | bits(4, 8*(s-4)+6, 2)<<4
				m = bits(4, 8*(s+4)+4, 4) | bits(4, 8*s+6, 2)<<4
			}
			q := bits(qs, 8*(32*(s/2)+l)+4*(s%2), 4)
			if typ == TypeQ5_K {
				q |= bit(16, 8*l+s) << 4
			}
			out[e] = float32(d*float32(sc))*float32(q) - float32(dmin*float32(m))
		}
	case TypeQ6_K:
		d := f16(208)
		for e := range out {
			h, k, l := e/128, e/32%4, e%32
			lo := bits(0, 8*(64*h+32*(k%2)+l)+4*(k/2), 4)
			hi := bits(128, 8*(32*h+l)+2*k, 2)
			sc := int8(b[192+e/16])
			out[e] = d * float32(sc) * float32(lo|hi<<4-32)
		}
	case TypeQ8_K:
		d := math.Float32frombits(binary.LittleEndian.Uint32(b))
		for e := range out {
			out[e] = d * float32(int8(b[4+e]))
		}
	case TypeIQ4_NL:
		d := f16(0)
		for e := range out {
			out[e] = d * float32(IQ4NLValues[bits(2, 8*(e%16)+4*(e/16), 4)])
		}
	case TypeIQ4_XS:
		d := f16(0)
		for e := range out {
			s, j := e/32, e%32
			v := bits(4, 4*s, 4) | bits(2, 2*s, 2)<<4
			dl := d * float32(v-32)
			out[e] = dl * float32(IQ4NLValues[bits(8+16*s, 8*(j%16)+4*(j/16), 4)])
		}
	case TypeQ4_1, TypeQ5_1:
		d, m := f16(0), f16(2)
		qs := 4
		if typ == TypeQ5_1 {
			qs = 8
		}
		for e := range out {
			q := bits(qs, 8*(e%16)+4*(e/16), 4)
			if typ == TypeQ5_1 {
				q |= bit(4, e) << 4
			}
			out[e] = float32(d*float32(q)) + m
		}
	case TypeQ5_0:
		d := f16(0)
		for e := range out {
			q := bits(6, 8*(e%16)+4*(e/16), 4) | bit(2, e)<<4
			out[e] = float32(q-16) * d
		}
	default:
		panic("specDecode: " + typ.String())
	}
	return out
}

// decodedTypes lists the block types whose decoders UnpackBlocks' view
// and specDecode cover.
var decodedTypes = append(slices.Clone(specTypes), TypeIQ2_XXS, TypeIQ2_XS, TypeIQ2_S,
	TypeIQ3_XXS, TypeIQ3_S, TypeIQ1_S, TypeIQ1_M)

// specTypes are those of decodedTypes that specDecode decodes (the IQ grid
// types are checked on ggml's own blocks, TestGGMLDecodeGolden).
var specTypes = []Type{TypeQ4_1, TypeQ5_0, TypeQ5_1, TypeIQ4_NL, TypeQ2_K, TypeQ3_K,
	TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeQ8_K, TypeIQ4_XS}

// randomBlocks returns n random blocks of type typ whose float16 (or, for
// Q8_K, float32) scales are finite.
func randomBlocks(rng *rand.Rand, typ Type, n int) []byte {
	b := make([]byte, n*typ.BlockBytes())
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for blk := range n {
		x := b[blk*typ.BlockBytes():]
		for _, o := range f16Offsets(typ) {
			x[o+1] &= 0xBB // exponent field below 0x1F: finite
		}
		if typ == TypeQ8_K {
			binary.LittleEndian.PutUint32(x, math.Float32bits(float32(rng.NormFloat64())))
		}
	}
	return b
}

// f16Offsets returns the offsets of the float16 fields in a block of typ.
func f16Offsets(typ Type) []int {
	switch typ {
	case TypeQ4_1, TypeQ5_1, TypeQ4_K, TypeQ5_K:
		return []int{0, 2}
	case TypeQ4_0, TypeQ5_0, TypeQ8_0, TypeIQ4_NL, TypeIQ4_XS, TypeIQ2_XXS, TypeIQ2_XS, TypeIQ2_S,
		TypeIQ3_XXS, TypeIQ3_S, TypeIQ1_S:
		return []int{0}
	case TypeIQ1_M: // d's exponent is in the top nibbles of the last two scale words
		return []int{54}
	case TypeQ2_K:
		return []int{80, 82}
	case TypeQ3_K:
		return []int{108}
	case TypeQ6_K:
		return []int{208}
	}
	return nil
}

func TestDequantizeMatchesSpec(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	for _, typ := range specTypes {
		t.Run(typ.String(), func(t *testing.T) {
			const n = 64
			b := randomBlocks(rng, typ, n)
			got := make([]float32, n*typ.BlockSize())
			require.NoError(t, Dequantize(typ, got, b))
			bs, bb := typ.BlockSize(), typ.BlockBytes()
			for blk := range n {
				want := specDecode(typ, b[blk*bb:(blk+1)*bb])
				for e, w := range want {
					require.Equal(t, math.Float32bits(w), math.Float32bits(got[blk*bs+e]),
						"block %d element %d: want %v, got %v", blk, e, w, got[blk*bs+e])
				}
			}
		})
	}
}

func TestDequantizeErrors(t *testing.T) {
	var err error
	err = Dequantize(TypeQ4_K, make([]float32, 255), make([]byte, 144))
	assert.ErrorContains(t, err, "256")
	err = Dequantize(TypeQ4_K, make([]float32, 256), make([]byte, 143))
	assert.ErrorContains(t, err, "144")
	err = Dequantize(TypeQ8_1, make([]float32, 32), make([]byte, 36))
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Error(t, Dequantize(TypeQ6_K, make([]float32, 256), make([]byte, 209)))
	assert.NoError(t, Dequantize(TypeQ6_K, nil, nil))
}

// FuzzDequantize decodes the fuzzer's bytes as whole blocks of every type
// of specTypes (any bit pattern, NaN and infinite scales
// included) and compares each value with specDecode's: the same bits, or
// both NaN.
func FuzzDequantize(f *testing.F) {
	for _, hb := range handBlocks() {
		f.Add(hb.block)
	}
	f.Add(randomBlocks(rand.New(rand.NewPCG(1, 2)), TypeQ8_K, 2))
	f.Add(bytesRepeat(0xFF, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range specTypes {
			bs, bb := typ.BlockSize(), typ.BlockBytes()
			n := len(data) / bb
			got := make([]float32, n*bs)
			if err := Dequantize(typ, got, data[:n*bb]); err != nil {
				t.Fatalf("%v: %v", typ, err)
			}
			for blk := range n {
				want := specDecode(typ, data[blk*bb:(blk+1)*bb])
				for e, w := range want {
					g := got[blk*bs+e]
					if math.Float32bits(w) != math.Float32bits(g) && !(w != w && g != g) {
						t.Fatalf("%v block %d element %d: want %v, got %v", typ, blk, e, w, g)
					}
				}
			}
		}
	})
}

func bytesRepeat(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}
