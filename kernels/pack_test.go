package kernels

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPackBitsLayouts checks the byte layout on small hand-derived examples.
func TestPackBitsLayouts(t *testing.T) {
	cases := []struct {
		name  string
		width uint
		codes []uint8
		want  []byte
	}{
		// docs/NUMERICS.md §10, from AMD's HIP test program: fp4x2 (+6, −6) → F7, (+1, −1) → A2.
		{"fp4 (+6,-6)", 4, []uint8{0x7, 0xf}, []byte{0xf7}},
		{"fp4 (+1,-1)", 4, []uint8{0x2, 0xa}, []byte{0xa2}},
		// e2m3 (+7.5, −7.5) → DF 0F; (+1, −1) → 08 0A; (+0.125, −0.125) → 41 08; (+0, −0) → 00 08.
		{"e2m3 (+7.5,-7.5)", 6, []uint8{0x1f, 0x3f}, []byte{0xdf, 0x0f}},
		{"e2m3 (+1,-1)", 6, []uint8{0x08, 0x28}, []byte{0x08, 0x0a}},
		{"e2m3 (+0.125,-0.125)", 6, []uint8{0x01, 0x21}, []byte{0x41, 0x08}},
		{"e2m3 (+0,-0)", 6, []uint8{0x00, 0x20}, []byte{0x00, 0x08}},
		// e3m2 (+28, −28) → DF 0F; (+0.25, −0.25) → 04 09.
		{"e3m2 (+28,-28)", 6, []uint8{0x1f, 0x3f}, []byte{0xdf, 0x0f}},
		{"e3m2 (+0.25,-0.25)", 6, []uint8{0x04, 0x24}, []byte{0x04, 0x09}},
		// 4 six-bit codes in 3 bytes: b0 = c0|c1<<6, b1 = c1>>2|c2<<4, b2 = c2>>4|c3<<2.
		{"6-bit x4", 6, []uint8{0x01, 0x02, 0x03, 0x3f}, []byte{0x81, 0x30, 0xfc}},
		// 3-bit 1..7,0: bits 001 010 011 100 101 110 111 000 from bit 0 up.
		{"3-bit", 3, []uint8{1, 2, 3, 4, 5, 6, 7, 0}, []byte{0xd1, 0x58, 0x1f}},
		// 2-bit indices: element 4k+i in bits 2i+1:2i.
		{"2-bit", 2, []uint8{0, 1, 2, 3, 3}, []byte{0xe4, 0x03}},
		// 5-bit 0x1f,0x00,0x15: 11111 00000 10101 → bytes 0x1f, 0x54 (bits 8..14 = 00 10101).
		{"5-bit", 5, []uint8{0x1f, 0x00, 0x15}, []byte{0x1f, 0x54}},
		// 7-bit 0x7f,0x01: 1111111 then 0000001 → 0xff, 0x00 (bit 7 is the 1 of c1's LSB).
		{"7-bit", 7, []uint8{0x7f, 0x01}, []byte{0xff, 0x00}},
		// masks: element 8k+i is bit i of byte k.
		{"1-bit", 1, []uint8{1, 0, 1, 1, 0, 0, 0, 0, 1}, []byte{0x0d, 0x01}},
		{"8-bit", 8, []uint8{0x12, 0xfe}, []byte{0x12, 0xfe}},
		{"bits above the width are dropped", 4, []uint8{0xf3, 0x1c}, []byte{0xc3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, len(c.want), PackedLen(len(c.codes), c.width))
			got := make([]byte, len(c.want))
			PackBits(got, c.codes, c.width)
			assert.Equal(t, c.want, got)
			back := make([]uint8, len(c.codes))
			UnpackBits(back, got, c.width)
			for i := range back {
				assert.Equal(t, c.codes[i]&(1<<c.width-1), back[i], "code %d", i)
			}
		})
	}
}

func FuzzPackUnpack(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5}, uint8(3))
	f.Add([]byte{0xff, 0x00, 0xaa}, uint8(6))
	f.Fuzz(func(t *testing.T, codes []byte, w uint8) {
		width := uint(w%8) + 1
		for i := range codes {
			codes[i] &= 1<<width - 1
		}
		packed := make([]byte, PackedLen(len(codes), width))
		PackBits(packed, codes, width)
		if n := len(codes) * int(width) % 8; n != 0 && packed[len(packed)-1]>>n != 0 {
			t.Fatalf("width %d: padding bits of the last byte are not zero: %#x", width, packed[len(packed)-1])
		}
		back := make([]byte, len(codes))
		UnpackBits(back, packed, width)
		if !bytes.Equal(back, codes) {
			t.Fatalf("width %d: %x → %x → %x", width, codes, packed, back)
		}
	})
}

// TestPackBitsAgainstBitLoop compares PackBits and UnpackBits of every
// width with a plain bit-by-bit loop, at every length up to 70 codes.
func TestPackBitsAgainstBitLoop(t *testing.T) {
	for width := uint(1); width <= 8; width++ {
		for n := 0; n <= 70; n++ {
			codes := make([]uint8, n)
			for i := range codes {
				codes[i] = uint8(i*37 + int(width)*11 + n)
			}
			want := make([]byte, PackedLen(n, width))
			for i, c := range codes {
				for b := uint(0); b < width; b++ {
					bit := int(uint(i)*width + b)
					want[bit/8] |= (c >> b & 1) << (bit % 8)
				}
			}
			got := make([]byte, len(want))
			PackBits(got, codes, width)
			require.Equal(t, want, got, "pack width %d, %d codes", width, n)
			back := make([]uint8, n)
			UnpackBits(back, got, width)
			for i, c := range codes {
				require.Equal(t, c&(1<<width-1), back[i], "unpack width %d, %d codes: code %d", width, n, i)
			}
		}
	}
}
