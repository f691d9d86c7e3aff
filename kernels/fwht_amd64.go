//go:build amd64 && !purego

package kernels

import "math/bits"

// fwhtRows runs the AVX-512 kernels when the active tier has them, else the
// Go reference. Blocks of up to 128 values are transformed in registers
// (blocks of 2 and 4 eight values at a time, the last few in Go); a larger
// block takes its first seven stages in registers, 128 values at a time,
// into buf, then passes of up to four stages over buf, the last of which
// writes dst.
func fwhtRows(dst, src []float32, block int, buf []float64) {
	if active < tierAVX512 {
		fwhtRowsGo(dst, src, block, buf)
		return
	}
	sc := FWHTScale(block)
	n := len(src) &^ 7
	switch block {
	case 2:
		fwht2AVX512(dst[:n], src[:n], sc)
		fwhtRowsGo(dst[n:], src[n:], block, buf)
	case 4:
		fwht4AVX512(dst[:n], src[:n], sc)
		fwhtRowsGo(dst[n:], src[n:], block, buf)
	case 8:
		fwht8AVX512(dst, src, sc)
	case 16:
		fwht16AVX512(dst, src, sc)
	case 32:
		fwht32AVX512(dst, src, sc)
	case 64:
		fwht64AVX512(dst, src, sc)
	case 128:
		fwht128AVX512(dst, src, sc)
	default:
		for b := 0; b < len(src); b += block {
			fwhtBigAVX512(dst[b:b+block], src[b:b+block], buf, sc)
		}
	}
}

// fwhtBigAVX512 transforms one block of more than 128 values: the stages
// h = 1 to 64 into buf, then the others in passes, the first of one to four
// stages (what is left over by fours), the rest of four.
func fwhtBigAVX512(dst, src []float32, buf []float64, sc float64) {
	fwhtChunksAVX512(buf, src)
	left := bits.TrailingZeros(uint(len(src))) - 7 // stages h = 128 to len/2
	h := 128
	for r := (left-1)%4 + 1; left > 0; r = 4 {
		left -= r
		if left == 0 {
			switch r {
			case 1:
				fwhtPassOut1AVX512(dst, buf, h, sc)
			case 2:
				fwhtPassOut2AVX512(dst, buf, h, sc)
			case 3:
				fwhtPassOut3AVX512(dst, buf, h, sc)
			default:
				fwhtPassOut4AVX512(dst, buf, h, sc)
			}
			return
		}
		switch r {
		case 1:
			fwhtPass1AVX512(buf, h)
		case 2:
			fwhtPass2AVX512(buf, h)
		case 3:
			fwhtPass3AVX512(buf, h)
		default:
			fwhtPass4AVX512(buf, h)
		}
		h <<= r
	}
}
