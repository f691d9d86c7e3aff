package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// kdeqCase is one block decoder under test: its exported entry, Go
// reference, block geometry and the offsets of the float16 scales in a
// block (set to edge values by the tests).
type kdeqCase struct {
	name        string
	run, ref    func(dst []float32, src []byte)
	elems, size int
	halves      []int
}

var kdeqCases = []kdeqCase{
	{"Q2_K", dequantizeQ2_K, dequantQ2_KGo, qkk, q2_KBlockBytes, []int{80, 82}},
	{"Q3_K", dequantizeQ3_K, dequantQ3_KGo, qkk, q3_KBlockBytes, []int{108}},
	{"Q4_K", dequantizeQ4_K, dequantQ4_KGo, qkk, q4_KBlockBytes, []int{0, 2}},
	{"Q5_K", dequantizeQ5_K, dequantQ5_KGo, qkk, q5_KBlockBytes, []int{0, 2}},
	{"Q6_K", dequantizeQ6_K, dequantQ6_KGo, qkk, q6_KBlockBytes, []int{208}},
	{"IQ4_XS", dequantizeIQ4XS, dequantIQ4XSGo, qkk, iq4xsBlockBytes, []int{0}},
	{"IQ4_NL", dequantizeIQ4NL, dequantIQ4NLGo, ggmlBlock, iq4nlBlockBytes, []int{0}},
	{"Q4_1", dequantizeQ4_1, dequantQ4_1Go, ggmlBlock, q4_1BlockBytes, []int{0, 2}},
	{"Q5_0", dequantizeQ5_0, dequantQ5_0Go, ggmlBlock, q5_0BlockBytes, []int{0}},
	{"Q5_1", dequantizeQ5_1, dequantQ5_1Go, ggmlBlock, q5_1BlockBytes, []int{0, 2}},
}

// edgeHalves are float16 codes of every class: ±0, the smallest and largest
// subnormals, 1, the largest finite, ±Inf, signalling and quiet NaNs of
// both signs.
var edgeHalves = []uint16{0, 0x8000, 1, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff,
	0x7c00, 0xfc00, 0x7c01, 0xfc01, 0x7e00, 0xfe00, 0x7fff, 0xffff, 0x3555, 0x1234}

// kdeqBlocks returns nb random blocks of c: random bytes everywhere, then
// each float16 scale either a random finite code or (one time in three) an
// edge code; every fifth block has all its bytes equal (all codes and
// scales at one value), which covers every code value over the bytes.
func kdeqBlocks(r *rand.Rand, c kdeqCase, nb int) []byte {
	b := make([]byte, nb*c.size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for k := range nb {
		blk := b[k*c.size : (k+1)*c.size]
		if k%5 == 4 {
			v := byte(r.Uint32())
			for i := range blk {
				blk[i] = v
			}
		}
		for _, off := range c.halves {
			h := uint16(r.Uint32()) &^ 0x4000 // finite, moderate exponents mostly
			if r.IntN(3) == 0 {
				h = edgeHalves[r.IntN(len(edgeHalves))]
			}
			binary.LittleEndian.PutUint16(blk[off:], h)
		}
	}
	return b
}

// TestKDeqTiers compares every tier's decoder with its Go reference bit for
// bit: random and edge blocks, every block count from 1 to 40 at an odd
// source address and a misaligned destination.
func TestKDeqTiers(t *testing.T) {
	for _, c := range kdeqCases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(41, uint64(c.size)))
			const nb = 600
			src := kdeqBlocks(r, c, nb)
			want := make([]float32, nb*c.elems)
			c.ref(want, src)
			forEachTier(t, func(t *testing.T) {
				got := make([]float32, len(want))
				c.run(got, src)
				requireSame(t, floatBits(want), floatBits(got), "%s", c.name)
				for n := 1; n <= 40; n++ {
					in := make([]byte, n*c.size+1)
					copy(in[1:], src[n*c.size:])
					out := make([]float32, n*c.elems+1)
					c.run(out[1:], in[1:])
					requireSame(t, floatBits(want[n*c.elems:2*n*c.elems]), floatBits(out[1:]), "%s, %d blocks", c.name, n)
				}
			})
		})
	}
}

// TestKDeqScalesExhaustive decodes, under every tier, blocks whose first
// float16 scale takes every code (the second, if any, a code derived from
// it), with the other bytes random.
func TestKDeqScalesExhaustive(t *testing.T) {
	for _, c := range kdeqCases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(43, uint64(c.size)))
			nb := 1 << 16
			if c.elems == qkk {
				nb = 1 << 13 // every eighth code, and the edges below
			}
			src := kdeqBlocks(r, c, nb+len(edgeHalves)*len(edgeHalves))
			for k := range nb {
				h := uint16(k)
				if c.elems == qkk {
					h = uint16(8*k + r.IntN(8))
				}
				binary.LittleEndian.PutUint16(src[k*c.size+c.halves[0]:], h)
				if len(c.halves) > 1 {
					binary.LittleEndian.PutUint16(src[k*c.size+c.halves[1]:], h^0x8000+uint16(r.IntN(4)))
				}
			}
			// Every pair of edge codes, where a block has two.
			for i, a := range edgeHalves {
				for j, b := range edgeHalves {
					blk := src[(nb+i*len(edgeHalves)+j)*c.size:]
					binary.LittleEndian.PutUint16(blk[c.halves[0]:], a)
					if len(c.halves) > 1 {
						binary.LittleEndian.PutUint16(blk[c.halves[1]:], b)
					}
				}
			}
			want := make([]float32, len(src)/c.size*c.elems)
			c.ref(want, src)
			forEachTier(t, func(t *testing.T) {
				got := make([]float32, len(want))
				c.run(got, src)
				requireSame(t, floatBits(want), floatBits(got), "%s", c.name)
			})
		})
	}
}

// TestKDeqHandDerived checks one block of each 256-element type against
// values worked out from the format's definition: all codes at one value
// and all scales at one value.
func TestKDeqHandDerived(t *testing.T) {
	// Q4_K: d = 0.5, dmin = 0.25, every scale byte 0x21 (sub-blocks 0..3:
	// sc = m = 33; 4..7: sc = 1 | (0x21>>6)<<4 = 1, m = 2 | 0 = 2), every
	// code byte 0x53 (low nibble 3, high 5).
	blk := make([]byte, q4_KBlockBytes)
	binary.LittleEndian.PutUint16(blk[0:], 0x3800)
	binary.LittleEndian.PutUint16(blk[2:], 0x3400)
	for i := 4; i < 16; i++ {
		blk[i] = 0x21
	}
	for i := 16; i < q4_KBlockBytes; i++ {
		blk[i] = 0x53
	}
	want := make([]float32, qkk)
	for s := range 8 {
		sc, m := float32(33), float32(33)
		if s >= 4 {
			sc, m = 1, 2
		}
		q := float32(3)
		if s%2 == 1 {
			q = 5
		}
		for l := range 32 {
			want[32*s+l] = 0.5*sc*q - 0.25*m
		}
	}
	forEachTier(t, func(t *testing.T) {
		got := make([]float32, qkk)
		dequantizeQ4_K(got, blk)
		require.Equal(t, want, got)
	})
}

// FuzzKDeq decodes the fuzzer's bytes, padded with zeros to whole blocks,
// as blocks of every type under every tier and compares with the Go
// references.
func FuzzKDeq(f *testing.F) {
	f.Add([]byte{0x00, 0x7c, 0x01, 0x7c, 0xff, 0xff, 0x12})
	f.Add(make([]byte, 210*3))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range kdeqCases {
			nb := max(1, (len(data)+c.size-1)/c.size)
			src := make([]byte, nb*c.size)
			copy(src, data)
			want := make([]float32, nb*c.elems)
			c.ref(want, src)
			for _, tr := range tiers() {
				restore := useTier(tr)
				got := make([]float32, len(want))
				c.run(got, src)
				restore()
				requireSame(t, floatBits(want), floatBits(got), "%v %s", tr, c.name)
			}
		}
	})
}

// BenchmarkKDeq decodes 4096×1024 values of each type (the blocks in L3 or
// memory, the floats streaming out), beside the memory-read loop.
func BenchmarkKDeq(b *testing.B) {
	const n = 1 << 22
	r := rand.New(rand.NewPCG(47, 48))
	for _, c := range kdeqCases {
		src := kdeqBlocks(r, c, n/c.elems)
		for i := range n / c.elems {
			binary.LittleEndian.PutUint16(src[i*c.size+c.halves[0]:], 0x3c00)
		}
		dst := make([]float32, n)
		for _, tr := range tiers() {
			b.Run(fmt.Sprintf("%s/%v", c.name, tr), func(b *testing.B) {
				defer useTier(tr)()
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					c.run(dst, src)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gvalues/s")
			})
		}
	}
}
