package layout

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// GGUFTensor makes ldrSource a ggufSource: the tensors a GGUF layout wrote
// (those without a safetensors dtype) are its GGUF tensors.
func (s *ldrSource) GGUFTensor(name string) (gguf.TensorInfo, []byte, bool) {
	t, ok := s.tensors[name]
	if !ok || t.DType != 0 {
		return gguf.TensorInfo{}, nil, false
	}
	dims := slices.Clone(t.Shape)
	slices.Reverse(dims)
	return gguf.TensorInfo{Name: name, Type: t.GGML, Dims: dims, Size: int64(len(t.Data))}, t.Data, true
}

// GGUFInfo is GGUFTensor without the bytes.
func (s *ldrSource) GGUFInfo(name string) (gguf.TensorInfo, bool) {
	info, _, ok := s.GGUFTensor(name)
	return info, ok
}

// GGUFInfo describes a tensor of the file.
func (s ggufFileSource) GGUFInfo(name string) (gguf.TensorInfo, bool) { return s.f.Tensor(name) }

// ggufFileSource reads a parsed GGUF file, as a loader would.
type ggufFileSource struct{ f *gguf.File }

func (ggufFileSource) Tensor(string) (safetensors.TensorInfo, []byte, bool) {
	return safetensors.TensorInfo{}, nil, false
}

func (ggufFileSource) Metadata() map[string]string { return nil }

func (s ggufFileSource) Names() []string {
	var out []string
	for _, t := range s.f.Tensors {
		out = append(out, t.Name)
	}
	return out
}

func (s ggufFileSource) GGUFTensor(name string) (gguf.TensorInfo, []byte, bool) {
	info, ok := s.f.Tensor(name)
	if !ok {
		return gguf.TensorInfo{}, nil, false
	}
	b, err := s.f.TensorBytes(name)
	if err != nil {
		return gguf.TensorInfo{}, nil, false
	}
	return info, b, true
}

// plainSource is a Source that is not a ggufSource.
type plainSource struct{ s *ldrSource }

func (p plainSource) Tensor(n string) (safetensors.TensorInfo, []byte, bool) { return p.s.Tensor(n) }
func (p plainSource) Metadata() map[string]string                            { return p.s.Metadata() }
func (p plainSource) Names() []string                                        { return p.s.Names() }

func ggufGet(t *testing.T) ggufLayout {
	t.Helper()
	l, err := Get("gguf")
	require.NoError(t, err)
	g, ok := l.(ggufLayout)
	require.True(t, ok)
	return g
}

func ggufDT(t *testing.T, name string) *tcast.DataType {
	t.Helper()
	d, err := ggufGet(t).DataType(name)
	require.NoError(t, err)
	return d
}

func TestGGUFDataType(t *testing.T) {
	l := ggufGet(t)
	assert.Equal(t, GGUF, l.Container())
	for _, tc := range []struct{ name, want, code string }{
		{"q8_0", "q8_0", "int8_float16_t32"},
		{"Q8_0", "q8_0", "int8_float16_t32"},
		{"q4_0", "q4_0", "int4_float16_t32"},
		{"Q4_0", "q4_0", "int4_float16_t32"},
		{"mxfp4", "mxfp4e2", "float4_e2m1fn_float8_e8m0fnu_t32"},
		{"mxfp4e2", "mxfp4e2", "float4_e2m1fn_float8_e8m0fnu_t32"},
		{"MXFP4", "mxfp4e2", "float4_e2m1fn_float8_e8m0fnu_t32"},
		{"e2m1_e8m0_t32", "e2m1_e8m0_t32", "float4_e2m1fn_float8_e8m0fnu_t32"},
	} {
		d, err := DataType(l, tc.name)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, d.Name(), tc.name)
		assert.Equal(t, tc.code, d.Code(), tc.name)
		assert.NoError(t, l.Check(d, 1, 2), tc.name)
	}
	q8, _ := l.DataType("q8_0")
	assert.Equal(t, "int8", q8.Elem().Name())
	assert.Equal(t, "float16", q8.Spec().Scale.Name())
	q4, _ := l.DataType("q4_0")
	assert.Equal(t, "int4", q4.Elem().Name())
	assert.Equal(t, float32(-8), q4.Elem().Decode(0x8), "Q4_0's q−8 reaches −8")

	for _, tc := range []struct {
		name    string
		known   bool
		msg     string
		closest string
	}{
		{"nvfp4", true, "layout gguf: cannot hold datatype nvfp4; it takes mxfp4, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, iq4_nl, iq4_xs, iq3_s, iq3_xxs, iq2_s, iq2_xs, iq2_xxs, iq1_m, iq1_s, tq1_0, tq2_0, q1_0, q2_0, f32, f16, bf16", ""},
		{"int8_g32", true, "cannot hold datatype int8_g32", ""},
		{"mxfp4t16", true, "cannot hold datatype mxfp4t16", ""},
		{"q8", false, `layout gguf: unknown datatype "q8"; it takes mxfp4, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, iq4_nl, iq4_xs, iq3_s, iq3_xxs, iq2_s, iq2_xs, iq2_xxs, iq1_m, iq1_s, tq1_0, tq2_0, q1_0, q2_0, f32, f16, bf16`, "q8_0"},
		{"q4_O", false, `unknown datatype "q4_O"`, "q4_0"},
		{"mxpf4", false, `unknown datatype "mxpf4"`, "mxfp4"},
	} {
		_, err := l.DataType(tc.name)
		var de *DataTypeError
		require.True(t, errors.As(err, &de), "%s: %v", tc.name, err)
		assert.Contains(t, err.Error(), tc.msg, tc.name)
		assert.Equal(t, []string{"mxfp4", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q8_k", "iq4_nl", "iq4_xs", "iq3_s", "iq3_xxs", "iq2_s", "iq2_xs", "iq2_xxs", "iq1_m", "iq1_s", "tq1_0", "tq2_0", "q1_0", "q2_0", "f32", "f16", "bf16"}, de.Accepted)
		var le *tcast.LookupError
		assert.Equal(t, !tc.known, errors.As(err, &le), "%s: an unknown name wraps tcast's lookup error", tc.name)
		if tc.closest != "" {
			assert.Contains(t, de.Closest, tc.closest, tc.name)
		}
	}
}

// ggufInput returns values covering the cases ggml's quantizers treat
// specially: an all-zero block, a float16 scale overflow, a float16 scale
// underflow, a negative largest magnitude, ties and a NaN.
func ggufInput(n int) []float32 {
	r := rand.New(rand.NewPCG(uint64(n), 3))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(12)-6)))
	}
	blocks := n / 32
	special := func(b int, f func(blk []float32)) {
		if b < blocks {
			f(x[32*b : 32*b+32])
		}
	}
	special(0, func(blk []float32) { clear(blk) })
	special(1, func(blk []float32) { blk[5] = 3e7 })
	special(2, func(blk []float32) {
		for i := range blk {
			blk[i] = float32(i-16) * 1e-9
		}
	})
	special(3, func(blk []float32) {
		for i := range blk {
			blk[i] = float32(i%5-2) * 0.5
		}
		blk[7] = -9
	})
	special(4, func(blk []float32) { blk[3] = float32(math.NaN()) })
	return x
}

// Cast runs ggml's quantizer: the Actual tensor holds its codes and float16
// scales, decompresses to exactly what ggml's dequantizer gives, and Encode
// writes ggml's blocks back.
func TestGGUFCastMatchesGGML(t *testing.T) {
	l := ggufGet(t)
	for _, tc := range []struct {
		dt  string
		typ gguf.Type
	}{
		{"q8_0", gguf.TypeQ8_0},
		{"q4_0", gguf.TypeQ4_0},
	} {
		for _, shape := range [][]int{{96}, {6, 64}, {2, 3, 32}, {1, 2, 2, 64}} {
			n := ldrProduct(shape)
			x := ggufInput(n)
			dt := ggufDT(t, tc.dt)
			c, err := l.Cast(x, shape, dt, nil)
			require.NoError(t, err)
			assert.Equal(t, tcast.Actual, c.Form)
			assert.Same(t, dt, c.DataType)
			assert.Equal(t, shape, c.Shape)
			assert.Equal(t, len(shape)-1, c.Axis)

			size, _ := tc.typ.Size(int64(n))
			blocks := make([]byte, size)
			require.NoError(t, gguf.Quantize(tc.typ, blocks, x, nil)) // ggml's rule without importance
			want := make([]float32, n)
			require.NoError(t, gguf.Dequantize(tc.typ, want, blocks))
			got, err := tcast.Decompress(c)
			require.NoError(t, err)
			assert.Equal(t, bitsOf(want), bitsOf(got), "%s %v values", tc.dt, shape)

			ts, err := l.Encode("blk.0.ffn_down.weight", c, map[string]string{})
			require.NoError(t, err)
			require.Len(t, ts, 1)
			assert.Equal(t, Spec{Name: "blk.0.ffn_down.weight", Shape: shape, GGML: tc.typ}, ts[0].Spec)
			assert.Equal(t, blocks, ts[0].Data, "%s %v blocks", tc.dt, shape)
		}
	}
}

// TestGGUFCastMatchesQuantize checks the ggml types quantized by
// gguf.Quantize: the Actual tensor decompresses to exactly the floats
// ggml's decoders (gguf.Dequantize) give for gguf.Quantize's blocks, and
// Encode writes blocks that decode to them.
func TestGGUFCastMatchesQuantize(t *testing.T) {
	l := ggufGet(t)
	for _, name := range []string{"q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q8_k", "iq4_nl", "iq4_xs",
		"tq1_0", "tq2_0", "q1_0", "q2_0"} {
		dt := ggufDT(t, name)
		typ, ok := ggufTypeOf(dt)
		require.True(t, ok)
		for _, shape := range [][]int{{512}, {3, 256}, {2, 1, 256}} {
			n := ldrProduct(shape)
			x := ggufInput(n)
			c, err := l.Cast(x, shape, dt, nil)
			require.NoError(t, err, name)
			assert.Equal(t, tcast.Actual, c.Form)
			assert.Same(t, dt, c.DataType)
			size, _ := typ.Size(int64(n))
			blocks := make([]byte, size)
			require.NoError(t, gguf.Quantize(typ, blocks, x, nil))
			want := make([]float32, n)
			require.NoError(t, gguf.Dequantize(typ, want, blocks))
			got, err := tcast.Decompress(c)
			require.NoError(t, err)
			assert.Equal(t, bitsOf(want), bitsOf(got), "%s %v values", name, shape)
			ts, err := l.Encode("blk.0.ffn_down.weight", c, map[string]string{})
			require.NoError(t, err, name)
			require.Len(t, ts, 1)
			assert.Equal(t, Spec{Name: "blk.0.ffn_down.weight", Shape: shape, GGML: typ}, ts[0].Spec)
			// The same values; the same bytes too, except where a
			// super-block's scales have more than one float16 D and
			// integers (tiny blocks with subnormal scales, even integers).
			back := make([]float32, n)
			require.NoError(t, gguf.Dequantize(typ, back, ts[0].Data))
			assert.Equal(t, bitsOf(want), bitsOf(back), "%s %v encoded values", name, shape)
		}
		// A row that is not whole blocks is refused.
		_, err := l.Cast(make([]float32, 3*typ.BlockSize()/2), []int{3 * typ.BlockSize() / 2}, dt, nil)
		assert.ErrorContains(t, err, "not a multiple of the block size", name)
	}
}

// TestGGUFPlainFloats checks f32, f16 and bf16: any shape, written as the
// float codes, in F32, F16 and BF16 tensors.
func TestGGUFPlainFloats(t *testing.T) {
	l := ggufGet(t)
	x := []float32{1, -2.5, 3.140625, 65504, 1e-8, 0}
	for _, tc := range []struct {
		name string
		typ  gguf.Type
		want []byte
	}{
		{"f32", gguf.TypeF32, []byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0, 0, 0, 0x49, 0x40, 0, 0xe0, 0x7f, 0x47, 0x77, 0xcc, 0x2b, 0x32, 0, 0, 0, 0}},
		{"F16", gguf.TypeF16, []byte{0, 0x3c, 0x00, 0xc1, 0x48, 0x42, 0xff, 0x7b, 0x00, 0x00, 0, 0}},
		{"bf16", gguf.TypeBF16, []byte{0x80, 0x3f, 0x20, 0xc0, 0x49, 0x40, 0x80, 0x47, 0x2c, 0x32, 0, 0}},
	} {
		dt := ggufDT(t, tc.name)
		require.NoError(t, l.Check(dt, 0, 2), tc.name)
		c, err := l.Cast(x, []int{2, 3}, dt, &tcast.Options{Axis: 0})
		require.NoError(t, err, tc.name)
		ts, err := l.Encode("w", c, map[string]string{})
		require.NoError(t, err, tc.name)
		require.Len(t, ts, 1)
		assert.Equal(t, Spec{Name: "w", Shape: []int{2, 3}, GGML: tc.typ}, ts[0].Spec, tc.name)
		assert.Equal(t, tc.want, ts[0].Data, tc.name)
	}
}

// TestGGUFCastMXFP4 checks that mxfp4 with tcast's default options, which
// the layout quantizes straight into ggml blocks (gguf.Quantize), gives
// the tensor tcast.Cast gives and the blocks PackMXFP4 makes of it, for every
// name of the datatype and inputs with NaNs, infinities, zeros and
// subnormals.
func TestGGUFCastMXFP4(t *testing.T) {
	l := ggufGet(t)
	r := rand.New(rand.NewPCG(51, 52))
	for _, name := range []string{"mxfp4", "mxfp4e2", "MXFP4", "e2m1_e8m0_t32"} {
		dt := ggufDT(t, name)
		for _, shape := range [][]int{{32}, {6, 64}, {2, 3, 96}, {1, 2, 2, 1024}} {
			n := ldrProduct(shape)
			x := make([]float32, n)
			for i := range x {
				switch r.IntN(20) {
				case 0:
					x[i] = float32(math.NaN())
				case 1:
					x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
				case 2:
					x[i] = math.Float32frombits(r.Uint32() & 0x807fffff)
				default:
					x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20))
				}
			}
			for _, o := range []*tcast.Options{nil, {Form: tcast.Virtual}, {Axis: -1}, {PowerOfTwoScales: true}, {Seed: 5}} {
				got, err := l.Cast(x, shape, dt, o)
				require.NoError(t, err)
				oa := tcast.DefaultOptions()
				if o != nil {
					oa = *o
				}
				oa.Form = tcast.Actual
				want, err := tcast.Cast(x, shape, dt, &oa)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s %v", name, shape)

				blocks := make([]byte, n/32*17)
				require.NoError(t, gguf.JoinBlocks(gguf.TypeMXFP4, blocks, want.Data.Bytes, want.Scale.Bytes))
				ts, err := l.Encode("w", got, map[string]string{})
				require.NoError(t, err)
				require.Equal(t, blocks, ts[0].Data, "%s %v", name, shape)
			}
		}
	}
}

func TestGGUFHandBuilt(t *testing.T) {
	l := ggufGet(t)
	x := make([]float32, 32)
	tests := []struct {
		name   string
		x      map[int]float32
		cast   func() (*tcast.Tensor, error)
		blocks []byte // the first bytes; the rest are 0x00 (Q8_0, MXFP4) or 0x88 (Q4_0)
		fill   byte
		codes  map[int]byte // the tcast codes, zero elsewhere
		values map[int]float32
	}{
		{
			// ggml Q8_0: amax 254, d = 2 (f16 0x4000), x/2 rounded half away.
			name: "q8_0 ggml",
			x:    map[int]float32{0: 254, 1: -3, 2: 5, 3: 1, 4: -1},
			cast: func() (*tcast.Tensor, error) {
				return l.Cast(x, []int{1, 32}, ggufDT(t, "q8_0"), nil)
			},
			blocks: []byte{0x00, 0x40, 0x7F, 0xFE, 0x03, 0x01, 0xFF},
			codes:  map[int]byte{0: 0x7F, 1: 0xFE, 2: 0x03, 3: 0x01, 4: 0xFF},
			values: map[int]float32{0: 254, 1: -4, 2: 6, 3: 2, 4: -2},
		},
		{
			// ggml Q4_0: the largest magnitude is 7, d = 7/−8 = −0.875 (f16
			// 0xBB00), q = trunc(x/d + 8.5): 7 → 0, −7 → 16.5 → 15, 1 → 7,
			// −3 → 11, 0 → 8. Bytes: element j low, element j+16 high.
			name: "q4_0 ggml",
			x:    map[int]float32{0: 7, 1: -7, 2: 1, 16: -3},
			cast: func() (*tcast.Tensor, error) {
				return l.Cast(x, []int{1, 32}, ggufDT(t, "q4_0"), nil)
			},
			blocks: []byte{0x00, 0xBB, 0xB0, 0x8F, 0x87},
			fill:   0x88,
			// tcast codes q−8 as int4: −8 → 0x8, 7, −1 → 0xF, 3.
			codes:  map[int]byte{0: 0x8, 1: 0x7, 2: 0xF, 16: 0x3},
			values: map[int]float32{0: 7, 1: -6.125, 2: 0.875, 16: -2.625},
		},
		{
			// tcast's own rule for the q4_0 datatype: scale amax/7 = 1 (f16
			// 0x3C00), codes 7, −7, 1, −3; stored as q = code + 8.
			name: "q4_0 tcast rule",
			x:    map[int]float32{0: 7, 1: -7, 2: 1, 16: -3},
			cast: func() (*tcast.Tensor, error) {
				return tcast.Cast(x, []int{1, 32}, ggufDT(t, "q4_0"), &tcast.Options{Form: tcast.Actual})
			},
			blocks: []byte{0x00, 0x3C, 0x5F, 0x81, 0x89},
			fill:   0x88,
			codes:  map[int]byte{0: 0x7, 1: 0x9, 2: 0x1, 16: 0xD},
			values: map[int]float32{0: 7, 1: -7, 2: 1, 16: -3},
		},
		{
			// MXFP4: amax 6, E8M0 127 (2^0); E2M1 codes 6 → 7, −6 → F,
			// 1 → 2, 0.5 → 1, 3 → 5, −0.5 → 9.
			name: "mxfp4",
			x:    map[int]float32{0: 6, 1: -6, 2: 1, 3: 0.5, 16: 3, 17: -0.5},
			cast: func() (*tcast.Tensor, error) {
				return l.Cast(x, []int{1, 32}, ggufDT(t, "mxfp4"), nil)
			},
			blocks: []byte{127, 0x57, 0x9F, 0x02, 0x01},
			codes:  map[int]byte{0: 0x7, 1: 0xF, 2: 0x2, 3: 0x1, 16: 0x5, 17: 0x9},
			values: map[int]float32{0: 6, 1: -6, 2: 1, 3: 0.5, 16: 3, 17: -0.5},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clear(x)
			for i, v := range tc.x {
				x[i] = v
			}
			c, err := tc.cast()
			require.NoError(t, err)
			for i := range 32 {
				assert.Equal(t, tc.codes[i], c.Data.Bytes[i], "code %d", i)
			}
			ts, err := l.Encode("w", c, map[string]string{})
			require.NoError(t, err)
			require.Len(t, ts, 1)
			want := bytes.Repeat([]byte{tc.fill}, len(ts[0].Data))
			copy(want, tc.blocks)
			assert.Equal(t, want, ts[0].Data)
			v, err := tcast.Decompress(c)
			require.NoError(t, err)
			for i := range 32 {
				assert.Equal(t, tc.values[i], v[i], "value %d", i)
			}
			d, ok, err := l.Decode("w", newLdrSource(ts, nil))
			require.NoError(t, err)
			require.True(t, ok)
			ldrSameValues(t, c, d)
		})
	}
}

// A GGUF file written with gguf.Writer and read back with gguf.Read: Find
// names the block tensors, and Decode gives what the reader's Float32s
// dequantizes, bit for bit.
func TestGGUFFileRoundTrip(t *testing.T) {
	l := ggufGet(t)
	var w gguf.Writer
	require.NoError(t, w.AddKV(gguf.KeyArchitecture, gguf.String("llama")))
	weights := map[string]*tcast.Tensor{}
	for i, tc := range []struct {
		name, dt string
		shape    []int
	}{
		{"blk.0.attn_q.weight", "q8_0", []int{8, 64}},
		{"blk.0.ffn_up.weight", "q4_0", []int{2, 4, 96}},
		{"blk.0.ffn_down.weight", "mxfp4", []int{5, 32}},
		{"blk.0.attn_norm.weight", "q8_0", []int{64}},
	} {
		x := ggufInput(ldrProduct(tc.shape))
		x[i] = float32(math.Inf(-1))
		c, err := l.Cast(x, tc.shape, ggufDT(t, tc.dt), nil)
		require.NoError(t, err)
		ts, err := l.Encode(tc.name, c, map[string]string{})
		require.NoError(t, err)
		require.NoError(t, w.AddTensor(ts[0].Name, ts[0].GGML, ts[0].Shape, ts[0].Data))
		weights[tc.name] = c
	}
	require.NoError(t, w.AddTensor("output_norm.weight", gguf.TypeF32, []int{2}, make([]byte, 8)))
	var buf bytes.Buffer
	_, err := w.WriteTo(&buf)
	require.NoError(t, err)
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "test.gguf")
	require.NoError(t, err)
	src := ggufFileSource{f}

	found := l.Find(src)
	require.Len(t, found, len(weights))
	for name, c := range weights {
		assert.Equal(t, []string{name}, found[name])
		d, ok, err := l.Decode(name, src)
		require.NoError(t, err, name)
		require.True(t, ok, name)
		ldrSameValues(t, c, d)
		got, err := tcast.Decompress(d)
		require.NoError(t, err)
		want, err := f.Float32s(name)
		require.NoError(t, err)
		assert.Equal(t, bitsOf(want), bitsOf(got), name)
	}
	_, ok, err := l.Decode("output_norm.weight", src)
	assert.NoError(t, err)
	assert.False(t, ok, "an F32 tensor is not a cast weight")
	_, ok, err = l.Decode("absent", src)
	assert.NoError(t, err)
	assert.False(t, ok)
}

func TestGGUFCheckAndSpecs(t *testing.T) {
	l := ggufGet(t)
	mx := ggufDT(t, "mxfp4")
	for rank := 1; rank <= 4; rank++ {
		assert.NoError(t, l.Check(mx, rank-1, rank))
	}
	for _, tc := range []struct {
		dt         *tcast.DataType
		axis, rank int
		msg        string
	}{
		{mx, 0, 0, "1 to 4 dimensions, not 0"},
		{mx, 4, 5, "1 to 4 dimensions, not 5"},
		{mx, 0, 2, "last (innermost) axis 1, not 0"},
		{tcast.MustLookup("nvfp4"), 1, 2, "cannot hold datatype nvfp4"},
		{tcast.MustLookup("int8_g32"), 1, 2, "cannot hold datatype int8_g32"},
		{nil, 1, 2, "nil datatype"},
	} {
		err := l.Check(tc.dt, tc.axis, tc.rank)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), tc.msg)
		}
	}
	specs, meta, err := l.Specs("blk.1.attn_k.weight", []int{3, 64}, ggufDT(t, "q8_0"), 1)
	require.NoError(t, err)
	assert.Nil(t, meta)
	assert.Equal(t, []Spec{{Name: "blk.1.attn_k.weight", Shape: []int{3, 64}, GGML: gguf.TypeQ8_0}}, specs)
	assert.EqualValues(t, 3*2*34, specs[0].Bytes(GGUF))
	specs, _, err = l.Specs("w", []int{2, 3, 32}, ggufDT(t, "q4_0"), 2)
	require.NoError(t, err)
	assert.EqualValues(t, 6*18, specs[0].Bytes(GGUF))
	specs, _, err = l.Specs("w", []int{64}, mx, 0)
	require.NoError(t, err)
	assert.EqualValues(t, 2*17, specs[0].Bytes(GGUF))

	_, _, err = l.Specs("w", []int{3, 48}, mx, 1)
	assert.ErrorContains(t, err, "not a multiple of the group size 32")
	_, _, err = l.Specs(strings.Repeat("n", 64), []int{3, 32}, mx, 1)
	assert.ErrorContains(t, err, "at most 63 bytes")
	_, _, err = l.Specs(strings.Repeat("n", 63), []int{3, 32}, mx, 1)
	assert.NoError(t, err)

	files, err := l.Files(mx, nil, []string{"a.weight"}, []byte(`{}`))
	assert.NoError(t, err)
	assert.Nil(t, files)
}

func TestGGUFCastOptions(t *testing.T) {
	l := ggufGet(t)
	q8 := ggufDT(t, "q8_0")
	x := ggufInput(64)
	for _, o := range []tcast.Options{
		{Mode: scale.Ceil}, {Rounding: dtype.RoundAway}, {FullRange: true}, {Keep: fullMask(t, 64)},
	} {
		_, err := l.Cast(x, []int{2, 32}, q8, &o)
		assert.ErrorContains(t, err, "apply to mxfp4 only")
	}
	_, err := l.Cast(x, []int{2, 32}, q8, &tcast.Options{Axis: tcast.FirstAxis})
	assert.ErrorContains(t, err, "last (innermost) axis")
	_, err = l.Cast(x, []int{2, 32}, q8, &tcast.Options{Axis: 5})
	assert.ErrorContains(t, err, "out of range")
	_, err = l.Cast(x[:32], []int{2, 32}, q8, nil)
	assert.ErrorContains(t, err, "x has 32")
	_, err = l.Cast(x, []int{4, 16}, q8, nil)
	assert.ErrorContains(t, err, "not a multiple of the block size 32")
	_, err = l.Cast(x, []int{2, 32}, tcast.MustLookup("int8_g32"), nil)
	assert.ErrorContains(t, err, "cannot hold")
	// The options and form the Actual result asks for are the caller's;
	// Form is always Actual, and the last axis is named either way.
	for _, o := range []*tcast.Options{nil, {Form: tcast.Virtual}, {Axis: -1}, {Axis: 1}} {
		c, err := l.Cast(x, []int{2, 32}, q8, o)
		require.NoError(t, err)
		assert.Equal(t, tcast.Actual, c.Form)
	}

	// mxfp4 goes through tcast.Cast with the options given.
	mx := ggufDT(t, "mxfp4")
	c, err := l.Cast(x, []int{2, 32}, mx, &tcast.Options{Mode: scale.Ceil, Form: tcast.Compressed})
	require.NoError(t, err)
	want, err := tcast.Cast(x, []int{2, 32}, mx, &tcast.Options{Mode: scale.Ceil, Form: tcast.Actual})
	require.NoError(t, err)
	assert.Equal(t, tcast.Actual, c.Form)
	assert.Equal(t, scale.Ceil, c.Mode)
	assert.Equal(t, want.Data.Bytes, c.Data.Bytes)
	assert.Equal(t, want.Scale.Bytes, c.Scale.Bytes)
}

func TestGGUFFindAndDecodeAbsent(t *testing.T) {
	l := ggufGet(t)
	c, err := l.Cast(ggufInput(64), []int{2, 32}, ggufDT(t, "q4_0"), nil)
	require.NoError(t, err)
	ts, err := l.Encode("blk.0.ffn_gate.weight", c, map[string]string{})
	require.NoError(t, err)
	ts = append(ts,
		Tensor{Spec: Spec{Name: "token_embd.weight", Shape: []int{2}, GGML: gguf.TypeF16}, Data: make([]byte, 4)},
		Tensor{Spec: specOf("st.weight", safetensors.BF16, []int{1, 32}), Data: make([]byte, 64)},
	)
	src := newLdrSource(ts, nil)
	assert.Equal(t, map[string][]string{"blk.0.ffn_gate.weight": {"blk.0.ffn_gate.weight"}}, l.Find(src))
	for _, n := range []string{"token_embd.weight", "st.weight", "absent"} {
		d, ok, err := l.Decode(n, src)
		assert.NoError(t, err, n)
		assert.False(t, ok, n)
		assert.Nil(t, d, n)
	}
	// A Source that is not a ggufSource holds no GGUF weights.
	assert.Empty(t, l.Find(plainSource{src}))
	_, ok, err := l.Decode("blk.0.ffn_gate.weight", plainSource{src})
	assert.NoError(t, err)
	assert.False(t, ok)
	// Other layouts do not claim GGUF tensors.
	for _, ln := range []string{"compressed-tensors", "gpt-oss", "modelopt", "fp8-block", "tcast"} {
		o, _ := Get(ln)
		assert.Empty(t, o.Find(src), ln)
	}
}

func TestGGUFDecodeDamaged(t *testing.T) {
	l := ggufGet(t)
	tests := []struct {
		name  string
		typ   gguf.Type
		shape []int
		n     int
		msg   string
	}{
		{"short data", gguf.TypeQ8_0, []int{2, 32}, 67, "holds 67 bytes, want 68"},
		{"long data", gguf.TypeMXFP4, []int{32}, 18, "holds 18 bytes, want 17"},
		{"partial block", gguf.TypeQ4_0, []int{2, 16}, 18, "not a multiple of 32"},
		{"no dimensions", gguf.TypeQ8_0, []int{}, 34, "0 dimensions"},
		{"five dimensions", gguf.TypeQ8_0, []int{1, 1, 1, 1, 32}, 34, "5 dimensions"},
		{"negative dimension", gguf.TypeQ4_0, []int{-1, 32}, 18, "bad shape"},
		{"overflow", gguf.TypeQ4_0, []int{1 << 40, 1 << 40, 32}, 18, "bad shape"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := []Tensor{{Spec: Spec{Name: "w", Shape: tc.shape, GGML: tc.typ}, Data: make([]byte, tc.n)}}
			var d *tcast.Tensor
			var ok bool
			var err error
			require.NotPanics(t, func() { d, ok, err = l.Decode("w", newLdrSource(ts, nil)) })
			assert.True(t, ok)
			assert.Nil(t, d)
			var fe *FormatError
			require.True(t, errors.As(err, &fe), "%T %v", err, err)
			assert.Equal(t, "gguf", fe.Layout)
			assert.Equal(t, "w", fe.Weight)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	// A 4-bit code above 15 cannot be encoded.
	c, err := l.Cast(ggufInput(32), []int{32}, ggufDT(t, "q4_0"), nil)
	require.NoError(t, err)
	c.Data.Bytes[3] = 0x10
	_, err = l.Encode("w", c, map[string]string{})
	var fe *FormatError
	assert.True(t, errors.As(err, &fe), "%v", err)
}

// FuzzGGUFDecode decodes arbitrary GGUF tensors: Decode never panics, its
// errors are *FormatError, and a weight it accepts decompresses and encodes
// back to the same bytes.
func FuzzGGUFDecode(f *testing.F) {
	f.Add(uint8(0), uint8(2), uint16(32), uint16(2), uint16(1), make([]byte, 68))
	f.Add(uint8(1), uint8(1), uint16(64), uint16(0), uint16(0), bytes.Repeat([]byte{0x3C, 0x88}, 18))
	f.Add(uint8(2), uint8(3), uint16(32), uint16(1), uint16(2), bytes.Repeat([]byte{0xFF, 0x12}, 17))
	f.Add(uint8(3), uint8(1), uint16(16), uint16(0), uint16(0), make([]byte, 9))
	f.Add(uint8(0), uint8(0), uint16(0), uint16(0), uint16(0), []byte{})
	types := []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeMXFP4, gguf.TypeF32, gguf.TypeNVFP4,
		gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeIQ4_NL, gguf.TypeQ2_K, gguf.TypeQ3_K,
		gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ8_K, gguf.TypeIQ4_XS}
	for i, typ := range types[5:] { // a block of random bytes of every other type
		r := rand.New(rand.NewPCG(uint64(i), 61))
		b := make([]byte, typ.BlockBytes())
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		f.Add(uint8(5+i), uint8(1), uint16(typ.BlockSize()), uint16(0), uint16(0), b)
		inf := bytes.Repeat([]byte{0xFF}, len(b)) // a float16 +Inf first
		inf[0], inf[1] = 0x00, 0x7C
		f.Add(uint8(5+i), uint8(1), uint16(typ.BlockSize()), uint16(0), uint16(0), inf)
	}
	f.Fuzz(func(t *testing.T, typSel, rank uint8, d0, d1, d2 uint16, data []byte) {
		typ := types[int(typSel)%len(types)]
		shape := []int{1, 1, int(d2), int(d1), int(d0)}[5-min(int(rank), 5):]
		ts := []Tensor{{Spec: Spec{Name: "w", Shape: shape, GGML: typ}, Data: data}}
		l, _ := Get("gguf")
		d, ok, err := l.Decode("w", newLdrSource(ts, nil))
		if ok != ggufBlockType(typ) {
			t.Fatalf("Decode claims=%v a %v tensor", ok, typ)
		}
		if !ok {
			return
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FormatError: %v", err, err)
			}
			return
		}
		if _, err := tcast.Decompress(d); err != nil {
			t.Fatalf("decoded weight does not decompress: %v", err)
		}
		back, err := l.Encode("w", d, map[string]string{})
		if err != nil {
			t.Fatalf("decoded weight does not encode: %v", err)
		}
		if back[0].GGML != typ || !slices.Equal(back[0].Shape, shape) {
			t.Fatalf("tensor changed in a decode/encode round trip")
		}
		switch typ {
		case gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeMXFP4:
			if !bytes.Equal(back[0].Data, data) {
				t.Fatalf("tensor changed in a decode/encode round trip")
			}
		default:
			// A super-block's scales may have more than one float16 D and
			// integers: the same values, not always the same bytes.
			n := ldrProduct(shape)
			want, got := make([]float32, n), make([]float32, n)
			if gguf.Dequantize(typ, want, data) != nil || gguf.Dequantize(typ, got, back[0].Data) != nil {
				t.Fatalf("%v blocks do not decode", typ)
			}
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) && !(want[i] != want[i] && got[i] != got[i]) {
					t.Fatalf("%v element %d changed in a decode/encode round trip: %v → %v", typ, i, want[i], got[i])
				}
			}
		}
	})
}

// fullMask returns an all-false keep mask of n elements.
func fullMask(t *testing.T, n int) *mask.Mask {
	t.Helper()
	m, err := mask.New([]int{n})
	require.NoError(t, err)
	return m
}
