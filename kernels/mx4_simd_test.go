package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Differential tests of the E2M1 kernels (MXFP4, NVFP4, ggml MXFP4 blocks):
// every tier the machine has against the Go references, which mx_test.go
// and mx4_test.go check against hand-derived values.

// e2m1Ties are the E2M1 rounding boundaries and values (magnitudes that
// decide ties and saturation) for a block scale of 1.
var e2m1Ties = []float32{0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8}

// fp4Block fills v (one block) with values drawn to hit the kernels' edge
// cases: a block exponent anywhere in float32's range (subnormal blocks
// included), elements at and next to the rounding boundaries of that scale,
// random bits, and now and then a NaN, an infinity, zeros of both signs, all
// zeros, or the largest finite magnitude.
func fp4Block(r *rand.Rand, v []float32) {
	e := r.IntN(300) - 160 // 2^e: from below the subnormals to past the top
	if r.IntN(8) == 0 {
		e = r.IntN(12) - 130 // around the subnormal scales
	}
	sc := math.Ldexp(1, e)
	kind := r.IntN(16)
	for i := range v {
		var x float64
		switch r.IntN(6) {
		case 0:
			t := float64(e2m1Ties[r.IntN(len(e2m1Ties))]) * sc
			x = t
			if r.IntN(2) == 0 {
				f := float32(t)
				x = float64(math.Nextafter32(f, float32(math.Inf(2*r.IntN(2)-1))))
			}
		case 1:
			x = float64(math.Float32frombits(r.Uint32()))
		default:
			x = r.NormFloat64() * sc
		}
		if r.IntN(2) == 0 {
			x = -x
		}
		v[i] = float32(x)
	}
	switch kind {
	case 0:
		clear(v)
	case 1:
		v[r.IntN(len(v))] = float32(math.NaN())
	case 2:
		v[r.IntN(len(v))] = float32(math.Inf(2*r.IntN(2) - 1))
	case 3:
		v[r.IntN(len(v))] = math.Float32frombits(0x7f800001 + r.Uint32N(0x7fffff)) // signalling NaN
	case 4:
		v[r.IntN(len(v))] = math.MaxFloat32
	case 5:
		for i := range v {
			v[i] = math.Float32frombits(r.Uint32() & 0x807fffff) // subnormals only
		}
	case 6:
		for i := range v {
			v[i] = negZero()
		}
	}
}

// fp4Input returns n blocks of the given size from fp4Block.
func fp4Input(r *rand.Rand, n, block int) []float32 {
	x := make([]float32, n*block)
	for b := range n {
		fp4Block(r, x[b*block:(b+1)*block])
	}
	return x
}

// fp4BlockCounts are the numbers of blocks the tests quantize: every count
// up to a few AVX-512 chunks (64 blocks) and some around larger multiples.
func fp4BlockCounts() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 191, 255, 256, 257, 300, 513)
}

// withSentinel returns a slice of n bytes starting off bytes into a buffer
// that has 0xA5 after it, and a check that the bytes after it were kept.
func withSentinel(t *testing.T, n, off int) ([]byte, func()) {
	buf := make([]byte, off+n+8)
	for i := range buf {
		buf[i] = 0xA5
	}
	return buf[off : off+n], func() {
		t.Helper()
		for i, b := range buf[off+n:] {
			require.Equal(t, byte(0xA5), b, "byte %d after the output was written", i)
		}
	}
}

func TestQuantizeMXFP4Tiers(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	forEachTier(t, func(t *testing.T) {
		for _, nb := range fp4BlockCounts() {
			off := nb % 4 // src starts off floats into its buffer
			src := append(make([]float32, off), fp4Input(r, nb, mxBlock)...)[off:]
			n := len(src)
			wantC, wantS := make([]byte, n/2), make([]byte, n/mxBlock)
			quantizeMXFP4Go(wantC, wantS, src)
			codes, checkC := withSentinel(t, n/2, nb%3)
			scales, checkS := withSentinel(t, n/mxBlock, nb%5)
			quantizeMXFP4(codes, scales, src)
			requireSame(t, bytesAsU16(wantC), bytesAsU16(codes), "codes of %d blocks", nb)
			requireSame(t, bytesAsU16(wantS), bytesAsU16(scales), "scales of %d blocks", nb)
			checkC()
			checkS()

			want := make([]byte, nb*mxfp4GGUFBlockBytes)
			quantizeMXFP4GGUFGo(want, src)
			got, check := withSentinel(t, len(want), nb%7)
			quantizeMXFP4GGUF(got, src)
			requireSame(t, bytesAsU16(want), bytesAsU16(got), "ggml blocks of %d blocks", nb)
			check()
		}
	})
}

// TestQuantizeMXFP4GGUFLayout checks the ggml blocks against quantizeMXFP4's
// codes and scales moved by hand: element j of a block in the low nibble of
// byte 1+j and element j+16 in the high nibble.
func TestQuantizeMXFP4GGUFLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	src := fp4Input(r, 200, mxBlock)
	codes, scales := make([]byte, len(src)/2), make([]byte, len(src)/mxBlock)
	quantizeMXFP4(codes, scales, src)
	forEachTier(t, func(t *testing.T) {
		g := make([]byte, len(scales)*mxfp4GGUFBlockBytes)
		quantizeMXFP4GGUF(g, src)
		for b := range scales {
			y := g[b*mxfp4GGUFBlockBytes:]
			require.Equal(t, scales[b], y[0], "block %d scale", b)
			for j := range 16 {
				e := func(i int) byte { return codes[b*16+i/2] >> (4 * (i % 2)) & 0xf }
				require.Equal(t, e(j)|e(j+16)<<4, y[1+j], "block %d byte %d", b, j)
			}
		}
	})
}

// nvfp4TensorScales are the tensor scales the NVFP4 tests use: ordinary
// ones, 0, subnormals, huge ones (6·s_t overflows), and the ones the
// assembly leaves to the Go reference (negative, infinite, NaN).
var nvfp4TensorScales = []float32{1, 0.5, 3.7e-3, 1.0 / 2688, 0, 1e-45, 1e-40, 1.2e-38, 6e37, 1e38,
	math.MaxFloat32, negZero(), -1, float32(math.Inf(1)), float32(math.NaN())}

func TestQuantizeNVFP4Tiers(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	forEachTier(t, func(t *testing.T) {
		for i, nb := range fp4BlockCounts() {
			off := nb % 4
			src := append(make([]float32, off), fp4Input(r, nb, nvfp4Block)...)[off:]
			n := len(src)
			sts := []float32{nvfp4TensorScales[i%len(nvfp4TensorScales)]}
			if nb == 257 || nb == 64 {
				sts = nvfp4TensorScales
			}
			// The tensor scale ModelOpt would pick, and one that puts
			// most blocks' scales in UE4M3's subnormals.
			if amax := math.Float32frombits(absMaxBitsGo(src)); amax > 0 && amax < math.MaxFloat32 {
				sts = append(sts, amax/2688, amax/6)
			}
			for _, st := range sts {
				wantC, wantS := make([]byte, n/2), make([]byte, n/nvfp4Block)
				quantizeNVFP4Go(wantC, wantS, src, st)
				codes, checkC := withSentinel(t, n/2, nb%3)
				scales, checkS := withSentinel(t, n/nvfp4Block, nb%5)
				quantizeNVFP4(codes, scales, src, st)
				requireSame(t, bytesAsU16(wantC), bytesAsU16(codes), "codes of %d blocks, s_t %g", nb, st)
				requireSame(t, bytesAsU16(wantS), bytesAsU16(scales), "scales of %d blocks, s_t %g", nb, st)
				checkC()
				checkS()
			}
		}
	})
}

// allCodes returns the codes and scales of 16·256 blocks of 32 E2M1
// elements: every byte code under every scale code.
func allCodes() (codes, scales []byte) {
	codes, scales = make([]byte, 16*256*16), make([]byte, 16*256)
	for i := range codes {
		codes[i] = byte(i)
	}
	for i := range scales {
		scales[i] = byte(i / 16)
	}
	return codes, scales
}

func TestDequantizeMXFP4Tiers(t *testing.T) {
	codes, scales := allCodes()
	g := make([]byte, len(scales)*mxfp4GGUFBlockBytes)
	for b := range scales {
		g[b*mxfp4GGUFBlockBytes] = scales[b]
		copy(g[b*mxfp4GGUFBlockBytes+1:], codes[b*16:b*16+16])
	}
	n := len(scales) * mxBlock
	want, wantG := make([]float32, n), make([]float32, n)
	dequantizeMXFP4Go(want, codes, scales)
	dequantizeMXFP4GGUFGo(wantG, g)
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			got := make([]float32, n)
			dequantizeMXFP4(got, codes, scales)
			requireSame(t, floatBits(want), floatBits(got), "all codes")
			dequantizeMXFP4GGUF(got, g)
			requireSame(t, floatBits(wantG), floatBits(got), "all codes, ggml blocks")
			// Short lengths, dst at every float offset from a 64-byte
			// boundary (the non-temporal kernels need it aligned).
			for nb := range 40 {
				off := nb % 17
				m := nb * mxBlock
				w := make([]float32, m)
				dequantizeMXFP4Go(w, codes[32*nb:], scales[2*nb:])
				buf := make([]float32, m+off+1)
				buf[m+off] = 42
				got := buf[off : off+m]
				dequantizeMXFP4(got, codes[32*nb:], scales[2*nb:])
				requireSame(t, floatBits(w), floatBits(got), "%d blocks at offset %d", nb, off)
				require.Equal(t, float32(42), buf[m+off])
				dequantizeMXFP4GGUFGo(w, g[17*nb:])
				dequantizeMXFP4GGUF(got, g[17*nb:])
				requireSame(t, floatBits(w), floatBits(got), "%d ggml blocks at offset %d", nb, off)
				require.Equal(t, float32(42), buf[m+off])
			}
		})
	})
}

func TestDequantizeNVFP4Tiers(t *testing.T) {
	codes, scales := allCodes() // 16 blocks of 16 per scale code
	scales = append(scales, scales...)
	n := len(scales) * nvfp4Block
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			for _, st := range nvfp4TensorScales {
				want, got := make([]float32, n), make([]float32, n)
				dequantizeNVFP4Go(want, codes, scales, st)
				dequantizeNVFP4(got, codes, scales, st)
				requireSame(t, floatBits(want), floatBits(got), "s_t %g", st)
			}
			for nb := range 80 {
				off := nb % 17
				m := nb * nvfp4Block
				w := make([]float32, m)
				dequantizeNVFP4Go(w, codes[24*nb:], scales[3*nb:], 0.75)
				buf := make([]float32, m+off+1)
				buf[m+off] = 42
				got := buf[off : off+m]
				dequantizeNVFP4(got, codes[24*nb:], scales[3*nb:], 0.75)
				requireSame(t, floatBits(w), floatBits(got), "%d blocks at offset %d", nb, off)
				require.Equal(t, float32(42), buf[m+off])
			}
		})
	})
}

// bytesAsU16 widens b for requireSame, which reports the first differing
// element.
func bytesAsU16(b []byte) []uint16 {
	u := make([]uint16, len(b))
	for i, c := range b {
		u[i] = uint16(c)
	}
	return u
}

// floatBits returns the bits of f, for comparisons that see NaN payloads.
func floatBits(f []float32) []uint32 {
	b := make([]uint32, len(f))
	for i, x := range f {
		b[i] = math.Float32bits(x)
	}
	return b
}

// TestMX4NoAllocs checks that the E2M1 kernels allocate nothing, on every
// tier and with non-temporal stores.
func TestMX4NoAllocs(t *testing.T) {
	src := weightsInput(4096)
	codes, scales, nscales := make([]byte, 2048), make([]byte, 128), make([]byte, 256)
	g, dst := make([]byte, 128*mxfp4GGUFBlockBytes), make([]float32, 4096)
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			allocs := testing.AllocsPerRun(5, func() {
				quantizeMXFP4(codes, scales, src)
				dequantizeMXFP4(dst, codes, scales)
				quantizeMXFP4GGUF(g, src)
				dequantizeMXFP4GGUF(dst, g)
				quantizeNVFP4(codes, nscales, src, 0.01)
				dequantizeNVFP4(dst, codes, nscales, 0.01)
			})
			require.Zero(t, allocs)
		})
	})
}
