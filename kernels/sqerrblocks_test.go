package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// e2m1BlockTies are the E2M1 rounding boundaries (midpoints of neighbouring
// values, from the value table 0, 0.5, 1, 1.5, 2, 3, 4, 6) and the values
// themselves.
var e2m1BlockTies = []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 0, 0.5, 1, 1.5, 2, 3, 4, 6, 7, 8}

// sqErrBlocksInput returns nb blocks of blockLen values of the given kind
// and nc candidates per block: multipliers 2^−k and decode factors 2^k
// around each block's exponent (the MXFP4 search's e−1, e, e+1), or, for
// kind "scales", arbitrary finite multipliers and factors.
func sqErrBlocksInput(r *rand.Rand, kind string, nb, blockLen, nc int) (x, mul, dmul []float32) {
	x = make([]float32, nb*blockLen)
	for b := range nb {
		e := r.IntN(60) - 30
		switch kind {
		case "subnormal":
			e = -140 + r.IntN(10)
		case "huge":
			e = 120 + r.IntN(7)
		}
		for i := range blockLen {
			v := &x[b*blockLen+i]
			switch kind {
			case "ties":
				t := e2m1BlockTies[r.IntN(len(e2m1BlockTies))]
				bits := math.Float32bits(t) + uint32(r.IntN(3)) - 1
				if t == 0 {
					bits = uint32(r.IntN(2))
				}
				*v = float32(math.Ldexp(float64(math.Float32frombits(bits)), e))
			case "edge":
				*v = math.Float32frombits(edgeBits(r))
			default:
				*v = float32(math.Ldexp(r.NormFloat64(), e))
			}
			if r.IntN(2) == 0 {
				*v = -*v
			}
		}
		if kind == "ties" && r.IntN(4) == 0 {
			for i := range blockLen {
				x[b*blockLen+i] = 0
			}
		}
	}
	mul, dmul = make([]float32, nc*nb), make([]float32, nc*nb)
	for b := range nb {
		var amax float32
		for _, v := range x[b*blockLen : (b+1)*blockLen] {
			if a := float32(math.Abs(float64(v))); a > amax && a <= math.MaxFloat32 {
				amax = a
			}
		}
		_, e := math.Frexp(float64(amax))
		e -= 3 // amax / 2^e in [4, 8): the rule's exponent
		for c := range nc {
			k := min(max(e+c-1, -127), 127)
			mul[c*nb+b] = float32(math.Ldexp(1, -k))
			dmul[c*nb+b] = float32(math.Ldexp(1, k))
			if kind == "scales" {
				mul[c*nb+b] = math.Float32frombits(r.Uint32() & 0x7f7fffff)
				dmul[c*nb+b] = math.Float32frombits(r.Uint32() & 0x7f7fffff)
			}
		}
	}
	return x, mul, dmul
}

// checkSqErrBlocks compares SqErrE2M1Blocks with SqErrE2M1 block by block
// and with the codec-based sum (sqErrRef): the same bits, or NaN for both.
func checkSqErrBlocks(t *testing.T, errs []float64, x []float32, blockLen int, mul, dmul []float32, msg string, args ...any) {
	t.Helper()
	for i := range errs {
		errs[i] = -1
	}
	require.True(t, SqErrE2M1Blocks(errs, x, blockLen, mul, dmul))
	nb := len(x) / blockLen
	for b := range nb {
		for c := range len(mul) / max(nb, 1) {
			blk := SqErrBlock{V: x[b*blockLen : (b+1)*blockLen], Mul: mul[c*nb+b], DMul: dmul[c*nb+b]}
			want := SqErrE2M1(&blk)
			ref := sqErrRef(&blk, func(q float32) float32 { return e2m1Codec.Decode(e2m1Codec.Encode(q, RoundEven, true, 0)) })
			got := errs[c*nb+b]
			at := fmt.Sprintf(msg, args...) + fmt.Sprintf(": block %d candidate %d", b, c)
			if want != want {
				require.True(t, got != got && ref != ref, "%s: got %v, want NaN", at, got)
				continue
			}
			require.Equal(t, math.Float64bits(want), math.Float64bits(got), at)
			require.Equal(t, math.Float64bits(ref), math.Float64bits(got), at+" (codec)")
		}
	}
}

// TestSqErrE2M1Blocks: the batch candidate errors of every tier equal the
// one-block reference for random, tie, zero, subnormal, huge and NaN/Inf
// blocks, block counts that are and are not multiples of 8, unaligned
// slices, and 1 to 4 candidates.
func TestSqErrE2M1Blocks(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 4))
		for _, kind := range []string{"gauss", "ties", "subnormal", "huge", "edge", "scales"} {
			for _, blockLen := range []int{1, 2, 7, 16, 32, 33} {
				for _, nb := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 40} {
					for _, nc := range []int{3, 3, 1, 4} {
						off := r.IntN(4)
						x, mul, dmul := sqErrBlocksInput(r, kind, nb, blockLen, nc)
						x = append(make([]float32, off), x...)[off:]
						mul = append(make([]float32, off), mul...)[off:]
						errs := make([]float64, len(mul)+off)[off:]
						checkSqErrBlocks(t, errs, x, blockLen, mul, dmul, "%s blockLen=%d nb=%d nc=%d", kind, blockLen, nb, nc)
					}
				}
			}
		}
	})
}

// TestSqErrE2M1BlocksArgs: lengths that do not fit are refused.
func TestSqErrE2M1BlocksArgs(t *testing.T) {
	x := make([]float32, 64)
	m := make([]float32, 6)
	tests := []struct {
		name      string
		errs      []float64
		x         []float32
		blockLen  int
		mul, dmul []float32
		ok        bool
	}{
		{"fits", make([]float64, 6), x, 32, m, m, true},
		{"empty", nil, nil, 32, nil, nil, true},
		{"zero block length", make([]float64, 6), x, 0, m, m, false},
		{"partial block", make([]float64, 6), x[:63], 32, m, m, false},
		{"candidates not per block", make([]float64, 5), x, 32, m[:5], m[:5], false},
		{"short dmul", make([]float64, 6), x, 32, m, m[:4], false},
		{"short errs", make([]float64, 4), x, 32, m, m, false},
		{"candidates without blocks", make([]float64, 6), nil, 32, m, m, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.ok, SqErrE2M1Blocks(tt.errs, tt.x, tt.blockLen, tt.mul, tt.dmul))
		})
	}
}

// FuzzSqErrE2M1Blocks compares the batch candidate errors of the active
// tier with the one-block reference on fuzzed values (any bit patterns) in
// blocks of a fuzzed length, with the MXFP4 candidates around each block's
// exponent shifted by a fuzzed amount.
func FuzzSqErrE2M1Blocks(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0x40, 0, 0, 0xb0, 0xc0, 0, 0, 0x80, 0x3e}, uint8(1), int8(0))
	f.Add(make([]byte, 4*8*32), uint8(32), int8(-3))
	f.Fuzz(func(t *testing.T, data []byte, blockLen uint8, shift int8) {
		bl := int(blockLen%40) + 1
		n := len(data) / 4 / bl * bl
		x := make([]float32, n)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		nb := n / bl
		mul, dmul := make([]float32, 3*nb), make([]float32, 3*nb)
		for b := range nb {
			var amax float32
			for _, v := range x[b*bl : (b+1)*bl] {
				if a := float32(math.Abs(float64(v))); a > amax && a <= math.MaxFloat32 {
					amax = a
				}
			}
			_, e := math.Frexp(float64(amax))
			for c := range 3 {
				k := min(max(e-3+c-1+int(shift), -127), 127)
				mul[c*nb+b], dmul[c*nb+b] = float32(math.Ldexp(1, -k)), float32(math.Ldexp(1, k))
			}
		}
		checkSqErrBlocks(t, make([]float64, 3*nb), x, bl, mul, dmul, "fuzz blockLen=%d", bl)
	})
}

// e2m1EncodeInput returns n values for the E2M1 encoder: ties and E2M1
// values ±1 ulp scaled by small powers of two, edge bit patterns (NaN, Inf,
// zeros, subnormals, huge) and gaussians, mixed.
func e2m1EncodeInput(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(3) {
		case 0:
			t := e2m1BlockTies[r.IntN(len(e2m1BlockTies))]
			bits := math.Float32bits(float32(math.Ldexp(float64(t), r.IntN(3)-1))) + uint32(r.IntN(3)) - 1
			x[i] = math.Float32frombits(bits | r.Uint32()&0x80000000)
		case 1:
			x[i] = math.Float32frombits(edgeBits(r))
		default:
			x[i] = float32(r.NormFloat64() * 3)
		}
	}
	return x
}

// checkEncodeE2M1 compares EncodeFloat's E2M1 codes with the codec's,
// value by value.
func checkEncodeE2M1(t *testing.T, dst []uint8, src []float32, msg string, args ...any) {
	t.Helper()
	EncodeFloat(&e2m1Codec, dst, src, RoundEven, true, 0)
	for i, x := range src {
		if want := uint8(e2m1Codec.Encode(x, RoundEven, true, 0)); dst[i] != want {
			require.Equal(t, want, dst[i], "%s: value %d = %v (%#x)", fmt.Sprintf(msg, args...), i, x, math.Float32bits(x))
		}
	}
}

// TestEncodeE2M1Tiers: the E2M1 slice encoder of every tier equals the codec
// for every length up to three vectors and more, unaligned slices, and
// slices with and without NaNs.
func TestEncodeE2M1Tiers(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 30))
		for _, n := range testLengths() {
			off := r.IntN(4)
			src := e2m1EncodeInput(r, n+off)[off:]
			if r.IntN(2) == 0 {
				for i := range src {
					if src[i] != src[i] {
						src[i] = 1.25
					}
				}
			}
			checkEncodeE2M1(t, make([]uint8, n+off)[off:], src, "n=%d", n)
		}
	})
}

// FuzzEncodeE2M1 compares the E2M1 slice encoder of the active tier with
// the codec on fuzzed bit patterns.
func FuzzEncodeE2M1(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0x40, 0, 0, 0xa0, 0x40, 0, 0, 0xc0, 0x7f})
	f.Add(make([]byte, 4*40))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := make([]float32, len(data)/4)
		for i := range src {
			src[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		checkEncodeE2M1(t, make([]uint8, len(src)), src, "fuzz")
	})
}

// TestMulSlice: MulSlice of every tier gives each product as float32
// multiplication rounds it (edge values, powers of two, every length).
func TestMulSlice(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(8, 80))
		for _, n := range testLengths() {
			off := r.IntN(4)
			src := edgeFloats(r, n+off)[off:]
			dst := make([]float32, n+off)[off:]
			for _, m := range []float32{0.5, 0x1p-127, 3, float32(r.NormFloat64())} {
				MulSlice(dst, src, m)
				for i, x := range src {
					want := x * m
					if want != want {
						require.True(t, dst[i] != dst[i], "n=%d m=%v i=%d", n, m, i)
						continue
					}
					require.Equal(t, math.Float32bits(want), math.Float32bits(dst[i]), "n=%d m=%v i=%d", n, m, i)
				}
			}
		}
	})
}
