package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The block layouts of UnpackBlocks and PackBlocks, one unpack and one pack
// per type. An unpack function decodes one block x into codes q (as ints,
// signed for the signed types), scales s and mins m; a pack function lays
// q, s and m out in the zeroed block y, or returns what does not fit.

// f16At decodes the little-endian float16 at x[o:].
func f16At(x []byte, o int) float32 {
	return fmtF16.Decode(uint32(binary.LittleEndian.Uint16(x[o:])))
}

// putF16 stores v at y[o:] as a little-endian float16, or says why not:
// the what (a scale or min) v is not a float16.
func putF16(y []byte, o int, v float32, what string) string {
	h, ok := f16Exact(v)
	if !ok {
		return fmt.Sprintf("%s %v is not a float16", what, v)
	}
	binary.LittleEndian.PutUint16(y[o:], h)
	return ""
}

// getNibbles decodes 32 nibbles in split-half order: element j in the low
// nibble of y[j], element j+16 in its high nibble.
func getNibbles(q []int, y []byte) {
	for j := range 16 {
		q[j], q[j+16] = int(y[j]&15), int(y[j]>>4)
	}
}

// putNibbles is the inverse of getNibbles; it keeps the low 4 bits of each
// code.
func putNibbles(y []byte, q []int) {
	for j := range 16 {
		y[j] = byte(q[j]&15 | (q[j+16]&15)<<4)
	}
}

// getQ5Codes decodes 32 5-bit codes (0..31) from the uint32 of fifth bits
// and 16 bytes of low nibbles at y.
func getQ5Codes(q []int, y []byte) {
	qh := binary.LittleEndian.Uint32(y)
	getNibbles(q, y[4:20])
	for j := range 32 {
		q[j] |= int(qh>>j&1) << 4
	}
}

// putQ5Codes writes 32 5-bit codes (0..31) as the uint32 of fifth bits and
// 16 bytes of low nibbles.
func putQ5Codes(y []byte, q []int) {
	var qh uint32
	for j := range 16 {
		lo, hi := q[j], q[j+16]
		y[4+j] = byte(lo&15 | (hi&15)<<4)
		qh |= uint32(lo>>4&1)<<j | uint32(hi>>4&1)<<(j+16)
	}
	binary.LittleEndian.PutUint32(y, qh)
}

// codesInRange says which code of q, if any, is outside lo..hi.
func codesInRange(q []int, lo, hi int) string {
	for i, c := range q {
		if c < lo || c > hi {
			return fmt.Sprintf("element %d has code %d, outside %d..%d", i, c, lo, hi)
		}
	}
	return ""
}

// superScale splits the sub-block scales (or mins, as what says) s into a
// float16 D and integers l in lo..hi with float32(D·l[j]) = s[j], or says
// there are none.
func superScale(s []float32, lo, hi int, what string) (uint16, []int, string) {
	l := make([]int, len(s))
	h, ok := splitScales(s, lo, hi, l)
	if !ok {
		return 0, nil, fmt.Sprintf(
			"the sub-block %ss %v are not D·l for one float16 D and integers l in %d..%d",
			what, s, lo, hi)
	}
	return h, l, ""
}

// superScaleMin is superScale of the sub-block scales s and of the mins m,
// each into integers in 0..hi.
func superScaleMin(s, m []float32, hi int) (hd uint16, ls []int, hm uint16, lm []int, msg string) {
	if hd, ls, msg = superScale(s, 0, hi, "scale"); msg != "" {
		return 0, nil, 0, nil, msg
	}
	if hm, lm, msg = superScale(m, 0, hi, "min"); msg != "" {
		return 0, nil, 0, nil, msg
	}
	return hd, ls, hm, lm, ""
}

// Q4_1 and Q5_1: a float16 scale d and a float16 m, value q·d + m.

func unpackQ4_1(x []byte, q []int, s, m []float32) {
	s[0], m[0] = f16At(x, 0), -f16At(x, 2)
	getNibbles(q, x[4:20])
}

func unpackQ5_1(x []byte, q []int, s, m []float32) {
	s[0], m[0] = f16At(x, 0), -f16At(x, 2)
	getQ5Codes(q, x[4:])
}

// putScaleMin stores the scale and the negated min of a Q4_1 or Q5_1 block.
func putScaleMin(y []byte, s, m []float32) string {
	if msg := putF16(y, 0, s[0], "scale"); msg != "" {
		return msg
	}
	return putF16(y, 2, -m[0], "min")
}

func packQ4_1(y []byte, q []int, s, m []float32) string {
	if msg := putScaleMin(y, s, m); msg != "" {
		return msg
	}
	if msg := codesInRange(q, 0, 15); msg != "" {
		return msg
	}
	putNibbles(y[4:], q)
	return ""
}

func packQ5_1(y []byte, q []int, s, m []float32) string {
	if msg := putScaleMin(y, s, m); msg != "" {
		return msg
	}
	putQ5Codes(y[4:], q)
	return ""
}

// Q5_0 and IQ4_NL: a float16 scale; Q5_0's codes are offset by 16, IQ4_NL's
// are table indices.

func unpackQ5_0(x []byte, q []int, s, _ []float32) {
	s[0] = f16At(x, 0)
	getQ5Codes(q, x[2:])
	for j := range 32 {
		q[j] -= 16
	}
}

func packQ5_0(y []byte, q []int, s, _ []float32) string {
	if msg := putF16(y, 0, s[0], "scale"); msg != "" {
		return msg
	}
	u := make([]int, 32)
	for i, c := range q {
		u[i] = c + 16
	}
	putQ5Codes(y[2:], u)
	return ""
}

func unpackIQ4_NL(x []byte, q []int, s, _ []float32) {
	s[0] = f16At(x, 0)
	getNibbles(q, x[2:18])
}

func packIQ4_NL(y []byte, q []int, s, _ []float32) string {
	if msg := putF16(y, 0, s[0], "scale"); msg != "" {
		return msg
	}
	putNibbles(y[2:], q)
	return ""
}

// Q8_K: a float32 scale, 256 int8 codes and the sums of each 16 codes.

func unpackQ8_K(x []byte, q []int, s, _ []float32) {
	s[0] = math.Float32frombits(binary.LittleEndian.Uint32(x))
	for j := range 256 {
		q[j] = int(int8(x[4+j]))
	}
}

func packQ8_K(y []byte, q []int, s, _ []float32) string {
	binary.LittleEndian.PutUint32(y, math.Float32bits(s[0]))
	for j := range 16 {
		sum := 0
		for i := 16 * j; i < 16*j+16; i++ {
			y[4+i] = byte(int8(q[i]))
			sum += q[i]
		}
		binary.LittleEndian.PutUint16(y[260+2*j:], uint16(int16(sum)))
	}
	return ""
}

// Q2_K: 4-bit sub-block scales and mins under float16 d and dmin, 2-bit
// codes.

func unpackQ2_K(x []byte, q []int, s, m []float32) {
	d, dmin := f16At(x, 80), f16At(x, 82)
	for j := range 16 {
		s[j], m[j] = d*float32(x[j]&15), dmin*float32(x[j]>>4)
	}
	for e := range 256 {
		q[e] = int(x[16+e/128*32+e%32] >> (2 * (e / 32 % 4)) & 3)
	}
}

func packQ2_K(y []byte, q []int, s, m []float32) string {
	hd, ls, hm, lm, msg := superScaleMin(s, m, 15)
	if msg != "" {
		return msg
	}
	for j := range 16 {
		y[j] = byte(ls[j] | lm[j]<<4)
	}
	for e := range 256 {
		y[16+e/128*32+e%32] |= byte(q[e] << (2 * (e / 32 % 4)))
	}
	binary.LittleEndian.PutUint16(y[80:], hd)
	binary.LittleEndian.PutUint16(y[82:], hm)
	return ""
}

// Q3_K: 6-bit signed sub-block scales under a float16 d, 3-bit signed
// codes (2 low bits and a high bit mask).

func unpackQ3_K(x []byte, q []int, s, _ []float32) {
	d := f16At(x, 108)
	for j := range 16 {
		lo := x[96+j%8] >> (4 * (j / 8)) & 15
		hi := x[104+j%4] >> (2 * (j / 4)) & 3
		s[j] = d * float32(int(lo|hi<<4)-32)
	}
	for e := range 256 {
		h, k, l := e/128, e/32%4, e%32
		q[e] = int(x[32+32*h+l]>>(2*k)&3) | int(x[l]>>(4*h+k)&1)<<2 - 4
	}
}

func packQ3_K(y []byte, q []int, s, _ []float32) string {
	hd, ls, msg := superScale(s, -32, 31, "scale")
	if msg != "" {
		return msg
	}
	for j := range 16 {
		v := byte(ls[j] + 32)
		y[96+j%8] |= (v & 15) << (4 * (j / 8))
		y[104+j%4] |= (v >> 4) << (2 * (j / 4))
	}
	for e := range 256 {
		h, k, l := e/128, e/32%4, e%32
		c := byte(q[e] + 4)
		y[32+32*h+l] |= (c & 3) << (2 * k)
		y[l] |= (c >> 2) << (4*h + k)
	}
	binary.LittleEndian.PutUint16(y[108:], hd)
	return ""
}

// Q4_K and Q5_K: 6-bit sub-block scales and mins under float16 d and dmin
// in 12 bytes, 4-bit codes (Q5_K: and a fifth bit).

// kScaleMinOf returns the 6-bit scale and min of sub-block j of a Q4_K or
// Q5_K block's 12 scale bytes.
func kScaleMinOf(sc []byte, j int) (s, m uint8) {
	if j < 4 {
		return sc[j] & 63, sc[j+4] & 63
	}
	return sc[j+4]&15 | sc[j-4]>>6<<4, sc[j+4]>>4 | sc[j]>>6<<4
}

func unpackQ4_K(x []byte, q []int, s, m []float32) { unpackQ45K(x, q, s, m, false) }

func unpackQ5_K(x []byte, q []int, s, m []float32) { unpackQ45K(x, q, s, m, true) }

func unpackQ45K(x []byte, q []int, s, m []float32, q5 bool) {
	d, dmin := f16At(x, 0), f16At(x, 2)
	for j := range 8 {
		sc, mn := kScaleMinOf(x[4:16], j)
		s[j], m[j] = d*float32(sc), dmin*float32(mn)
	}
	qs := 16
	if q5 {
		qs = 48
	}
	for e := range 256 {
		j, l := e/32, e%32
		q[e] = int(x[qs+32*(j/2)+l] >> (4 * (j % 2)) & 15)
		if q5 {
			q[e] |= int(x[16+l]>>j&1) << 4
		}
	}
}

func packQ4_K(y []byte, q []int, s, m []float32) string { return packQ45K(y, q, s, m, false) }

func packQ5_K(y []byte, q []int, s, m []float32) string { return packQ45K(y, q, s, m, true) }

func packQ45K(y []byte, q []int, s, m []float32, q5 bool) string {
	hd, ls, hm, lm, msg := superScaleMin(s, m, 63)
	if msg != "" {
		return msg
	}
	binary.LittleEndian.PutUint16(y[0:], hd)
	binary.LittleEndian.PutUint16(y[2:], hm)
	for j := range 4 {
		y[4+j] = byte(ls[j] | ls[j+4]>>4<<6)
		y[8+j] = byte(lm[j] | lm[j+4]>>4<<6)
		y[12+j] = byte(ls[j+4]&15 | (lm[j+4]&15)<<4)
	}
	qs := 16
	if q5 {
		qs = 48
	}
	for e := range 256 {
		j, l := e/32, e%32
		y[qs+32*(j/2)+l] |= byte(q[e]&15) << (4 * (j % 2))
		if q5 {
			y[16+l] |= byte(q[e]>>4) << j
		}
	}
	return ""
}

// Q6_K: int8 sub-block scales under a float16 d, 6-bit signed codes (4 low
// bits and 2 high bits).

func unpackQ6_K(x []byte, q []int, s, _ []float32) {
	d := f16At(x, 208)
	for j := range 16 {
		s[j] = d * float32(int8(x[192+j]))
	}
	for e := range 256 {
		h, k, l := e/128, e/32%4, e%32
		lo := int(x[64*h+32*(k%2)+l] >> (4 * (k / 2)) & 15)
		hi := int(x[128+32*h+l] >> (2 * k) & 3)
		q[e] = lo | hi<<4 - 32
	}
}

func packQ6_K(y []byte, q []int, s, _ []float32) string {
	hd, ls, msg := superScale(s, -128, 127, "scale")
	if msg != "" {
		return msg
	}
	for j := range 16 {
		y[192+j] = byte(int8(ls[j]))
	}
	for e := range 256 {
		h, k, l := e/128, e/32%4, e%32
		c := byte(q[e] + 32)
		y[64*h+32*(k%2)+l] |= (c & 15) << (4 * (k / 2))
		y[128+32*h+l] |= (c >> 4) << (2 * k)
	}
	binary.LittleEndian.PutUint16(y[208:], hd)
	return ""
}

// IQ4_XS: 6-bit signed sub-block scales under a float16 d, IQ4_NL's table
// indices.

func unpackIQ4_XS(x []byte, q []int, s, _ []float32) {
	d := f16At(x, 0)
	sh := binary.LittleEndian.Uint16(x[2:])
	for j := range 8 {
		ls := int(x[4+j/2]>>(4*(j%2))&15) | int(sh>>(2*j)&3)<<4
		s[j] = d * float32(ls-32)
		getNibbles(q[32*j:32*j+32], x[8+16*j:24+16*j])
	}
}

func packIQ4_XS(y []byte, q []int, s, _ []float32) string {
	hd, ls, msg := superScale(s, -32, 31, "scale")
	if msg != "" {
		return msg
	}
	binary.LittleEndian.PutUint16(y[0:], hd)
	var sh uint16
	for j := range 8 {
		v := byte(ls[j] + 32)
		y[4+j/2] |= (v & 15) << (4 * (j % 2))
		sh |= uint16(v>>4) << (2 * j)
		putNibbles(y[8+16*j:], q[32*j:32*j+32])
	}
	binary.LittleEndian.PutUint16(y[2:], sh)
	return ""
}
