package kernels

import "encoding/binary"

// The decoders of the IQ grid types, in ggml's layouts (ggml-common.h's
// block_iq*): each gives exactly the floats of ggml's dequantize_row_*.
// Every layout is a super-block of 256 elements; a float16 d scales the
// sub-blocks' small scales, which scale the grid points' values.

const (
	iq2xxsBlockBytes = 66  // d, then 8 × (4 point bytes, 4 sign and scale bytes)
	iq2xsBlockBytes  = 74  // d, 32 × (9-bit point, 7 sign bits), 8 scale bytes
	iq2sBlockBytes   = 82  // d, 32 point bytes, 32 sign bytes, 8 high-bit bytes, 8 scale bytes
	iq3xxsBlockBytes = 98  // d, 64 point bytes, 8 × (28 sign bits, 4-bit scale)
	iq3sBlockBytes   = 110 // d, 64 point bytes, 8 high-bit bytes, 32 sign bytes, 4 scale bytes
	iq1sBlockBytes   = 50  // d, 32 point bytes, 8 × (3 × 4 high bits, 3-bit scale, delta sign)
	iq1mBlockBytes   = 56  // 32 point bytes, 16 high-bit bytes, 8 scale bytes holding d too
	iq1Delta         = 0.125
)

// signed returns v, or −v when bit j of neg is set.
func signed(v float32, neg uint8, j int) float32 {
	if neg>>j&1 != 0 {
		return -v
	}
	return v
}

// putSigned writes the values of point p of g, times s and with the signs
// of the low bits of neg, to y.
func putSigned(y []float32, g *iqGrid, p int, s float32, neg uint8) {
	n := g.width
	for j, v := range g.vals[p*n : p*n+n] {
		y[j] = signed(s*v, neg, j)
	}
}

// dequantizeIQ2XXS decodes IQ2_XXS blocks: per 32 elements, 4 grid bytes
// then a word of 4 × 7 sign bits and a 4-bit scale l, d·(0.5+l)/4.
func dequantizeIQ2XXS(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ2XXS", len(dst), qkk, len(src), iq2xxsBlockBytes)
	for b := range nb {
		x := src[b*iq2xxsBlockBytes : (b+1)*iq2xxsBlockBytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := f16At(x)
		for ib := range 8 {
			q := x[2+8*ib:]
			aux := binary.LittleEndian.Uint32(q[4:])
			db := d * (0.5 + float32(aux>>28)) * 0.25
			for l := range 4 {
				putSigned(y[32*ib+8*l:], iq2xxsGrid, int(q[l]), db, iqSigns[aux>>(7*l)&127])
			}
		}
	}
}

// dequantizeIQ2XS decodes IQ2_XS blocks: 32 words of a 9-bit point and 7
// sign bits, then a 4-bit scale per 16 elements.
func dequantizeIQ2XS(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ2XS", len(dst), qkk, len(src), iq2xsBlockBytes)
	for b := range nb {
		x := src[b*iq2xsBlockBytes : (b+1)*iq2xsBlockBytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := f16At(x)
		for k := range 32 {
			q := binary.LittleEndian.Uint16(x[2+2*k:])
			db := d * (0.5 + float32(x[66+k/4]>>(4*(k/2%2))&15)) * 0.25
			putSigned(y[8*k:], iq2xsGrid, int(q&511), db, iqSigns[q>>9])
		}
	}
}

// dequantizeIQ2S decodes IQ2_S blocks: 10-bit points (a byte and 2 bits of
// qh), a sign byte per point and a 4-bit scale per 16 elements.
func dequantizeIQ2S(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ2S", len(dst), qkk, len(src), iq2sBlockBytes)
	for b := range nb {
		x := src[b*iq2sBlockBytes : (b+1)*iq2sBlockBytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := f16At(x)
		for k := range 32 {
			p := int(x[2+k]) | int(x[66+k/4]>>(2*(k%4))&3)<<8
			db := d * (0.5 + float32(x[74+k/4]>>(4*(k/2%2))&15)) * 0.25
			putSigned(y[8*k:], iq2sGrid, p, db, x[34+k])
		}
	}
}

// dequantizeIQ3XXS decodes IQ3_XXS blocks: a point byte per 4 elements,
// then per 32 elements a word of 4 × 7 sign bits and a 4-bit scale l,
// d·(0.5+l)/2.
func dequantizeIQ3XXS(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ3XXS", len(dst), qkk, len(src), iq3xxsBlockBytes)
	for b := range nb {
		x := src[b*iq3xxsBlockBytes : (b+1)*iq3xxsBlockBytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := f16At(x)
		for ib := range 8 {
			aux := binary.LittleEndian.Uint32(x[66+4*ib:])
			db := d * (0.5 + float32(aux>>28)) * 0.5
			for l := range 4 {
				neg := iqSigns[aux>>(7*l)&127]
				putSigned(y[32*ib+8*l:], iq3xxsGrid, int(x[2+8*ib+2*l]), db, neg)
				putSigned(y[32*ib+8*l+4:], iq3xxsGrid, int(x[3+8*ib+2*l]), db, neg>>4)
			}
		}
	}
}

// dequantizeIQ3S decodes IQ3_S blocks: 9-bit points (a byte and a bit of
// qh) per 4 elements, a sign byte per 8 and a 4-bit scale l per 32,
// d·(1+2l).
func dequantizeIQ3S(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ3S", len(dst), qkk, len(src), iq3sBlockBytes)
	for b := range nb {
		x := src[b*iq3sBlockBytes : (b+1)*iq3sBlockBytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := f16At(x)
		for k := range 64 {
			p := int(x[2+k]) | int(x[66+k/8]>>(k%8)&1)<<8
			db := d * float32(1+2*int(x[106+k/16]>>(4*(k/8%2))&15))
			putSigned(y[4*k:], iq3sGrid, p, db, x[74+k/2]>>(4*(k%2)))
		}
	}
}

// dequantizeIQ1S decodes IQ1_S blocks: 11-bit points of the ternary grid
// per 8 elements and, per 32, a 3-bit scale l (d·(2l+1)) and the sign of
// the shift of 1/8 added to every level.
func dequantizeIQ1S(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ1S", len(dst), qkk, len(src), iq1sBlockBytes)
	for b := range nb {
		x := src[b*iq1sBlockBytes : (b+1)*iq1sBlockBytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := f16At(x)
		for ib := range 8 {
			qh := binary.LittleEndian.Uint16(x[34+2*ib:])
			dl := d * float32(2*int(qh>>12&7)+1)
			delta := float32(iq1Delta)
			if qh&0x8000 != 0 {
				delta = -iq1Delta
			}
			for l := range 4 {
				p := int(x[2+4*ib+l]) | int(qh>>(3*l)&7)<<8
				putShifted(y[32*ib+8*l:], p, dl, delta)
			}
		}
	}
}

// putShifted writes the 8 values of IQ1 point p, as s·(v+delta), to y.
func putShifted(y []float32, p int, s, delta float32) {
	for j, v := range iq1sGrid.vals[p*8 : p*8+8] {
		y[j] = s * (v + delta)
	}
}

// iq1mScale returns the float16 d of an IQ1_M block, whose 16 bits are the
// top 4 bits of each of its 4 scale words.
func iq1mScale(x []byte) float32 {
	var h uint16
	for k := range 4 {
		h |= binary.LittleEndian.Uint16(x[48+2*k:]) >> 12 << (4 * k)
	}
	return float16To32(h)
}

// dequantizeIQ1M decodes IQ1_M blocks: 11-bit points per 8 elements, each
// with the sign of its shift, and a 3-bit scale l per 16, d·(2l+1).
func dequantizeIQ1M(dst []float32, src []byte) {
	nb := checkBlocksOf("dequantizeIQ1M", len(dst), qkk, len(src), iq1mBlockBytes)
	for b := range nb {
		x := src[b*iq1mBlockBytes : (b+1)*iq1mBlockBytes]
		y := dst[b*qkk : (b+1)*qkk]
		d := iq1mScale(x)
		for k := range 32 {
			h := x[32+k/2] >> (4 * (k % 2))
			sc := binary.LittleEndian.Uint16(x[48+2*(k/8):])
			dl := d * float32(2*int(sc>>(6*(k/4%2)+3*(k/2%2))&7)+1)
			delta := float32(iq1Delta)
			if h&8 != 0 {
				delta = -iq1Delta
			}
			putShifted(y[8*k:], int(x[k])|int(h&7)<<8, dl, delta)
		}
	}
}
