package layout

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ldrSource is an in-memory Source over encoded tensors.
type ldrSource struct {
	tensors map[string]Tensor
	meta    map[string]string
}

func newLdrSource(ts []Tensor, meta map[string]string) *ldrSource {
	s := &ldrSource{tensors: map[string]Tensor{}, meta: map[string]string{}}
	for _, t := range ts {
		s.tensors[t.Name] = t
	}
	for k, v := range meta {
		s.meta[k] = v
	}
	return s
}

func (s *ldrSource) Tensor(name string) (safetensors.TensorInfo, []byte, bool) {
	t, ok := s.tensors[name]
	if !ok {
		return safetensors.TensorInfo{}, nil, false
	}
	return safetensors.TensorInfo{Name: t.Name, DType: t.DType, Shape: t.Shape, Size: int64(len(t.Data))}, t.Data, true
}

func (s *ldrSource) Metadata() map[string]string { return s.meta }

func (s *ldrSource) Names() []string {
	var out []string
	for n := range s.tensors {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ldrCast casts x of shape to datatype name, Actual form, last axis.
func ldrCast(t *testing.T, name string, x []float32, shape []int) *tcast.Tensor {
	t.Helper()
	c, err := tcast.Cast(x, shape, tcast.MustLookup(name), &tcast.Options{Form: tcast.Actual, Axis: -1})
	require.NoError(t, err)
	return c
}

// ldrRandom returns n weights of varied magnitudes (row scales differ).
func ldrRandom(seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(10)-5)))
	}
	return x
}

// ldrByName indexes encoded tensors.
func ldrByName(t *testing.T, ts []Tensor) map[string]Tensor {
	t.Helper()
	m := map[string]Tensor{}
	for _, x := range ts {
		_, dup := m[x.Name]
		require.False(t, dup, "duplicate tensor %s", x.Name)
		m[x.Name] = x
	}
	return m
}

// ldrExpect is one expected output tensor.
type ldrExpect struct {
	name  string
	dt    safetensors.DType
	shape []int
	data  []byte // nil: not checked here
}

// ldrCheckTensors checks the encoded tensors are exactly the expected ones.
func ldrCheckTensors(t *testing.T, ts []Tensor, want []ldrExpect) {
	t.Helper()
	got := ldrByName(t, ts)
	var names []string
	for _, w := range want {
		names = append(names, w.name)
		g, ok := got[w.name]
		if !assert.True(t, ok, "missing tensor %s", w.name) {
			continue
		}
		assert.Equal(t, w.dt, g.DType, "dtype of %s", w.name)
		assert.Equal(t, w.shape, g.Shape, "shape of %s", w.name)
		n := 1
		for _, d := range g.Shape {
			n *= d
		}
		assert.Len(t, g.Data, n*g.DType.BitSize()/8, "bytes of %s", w.name)
		if w.data != nil {
			assert.Equal(t, w.data, g.Data, "data of %s", w.name)
		}
	}
	var gotNames []string
	for n := range got {
		gotNames = append(gotNames, n)
	}
	slices.Sort(names)
	slices.Sort(gotNames)
	assert.Equal(t, names, gotNames)
}

// ldrSameValues checks the decoded tensor decompresses bit for bit to the
// original cast's values, and holds the same codes.
func ldrSameValues(t *testing.T, orig, dec *tcast.Tensor) {
	t.Helper()
	require.NotNil(t, dec)
	assert.Equal(t, tcast.Actual, dec.Form)
	assert.Equal(t, orig.Shape, dec.Shape)
	assert.Equal(t, len(orig.Shape)-1, dec.Axis)
	assert.Equal(t, orig.DataType.Code(), dec.DataType.Code())
	for _, pp := range [][2]*tcast.Part{{orig.Data, dec.Data}, {orig.Scale, dec.Scale}, {orig.Zero, dec.Zero}, {orig.TensorScale, dec.TensorScale}} {
		if pp[0] == nil {
			assert.Nil(t, pp[1])
			continue
		}
		require.NotNil(t, pp[1])
		assert.Equal(t, pp[0].Shape, pp[1].Shape)
		assert.Equal(t, pp[0].Bytes, pp[1].Bytes)
	}
	want, err := tcast.Decompress(orig)
	require.NoError(t, err)
	got, err := tcast.Decompress(dec)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		if want[i] != want[i] && got[i] != got[i] {
			continue
		}
		require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "value %d: %v vs %v", i, want[i], got[i])
	}
}

// Little-endian byte builders for expectations.
func le32(ws ...uint32) []byte {
	var b []byte
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

func le16(ws ...uint16) []byte {
	var b []byte
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint16(b, w)
	}
	return b
}

func lef32(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func lei64(vs ...int64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return b
}

func ctEncode(t *testing.T, name string, c *tcast.Tensor) ([]Tensor, map[string]string) {
	t.Helper()
	l, err := Get("compressed-tensors")
	require.NoError(t, err)
	meta := map[string]string{}
	ts, err := l.Encode(name, c, meta)
	require.NoError(t, err)
	return ts, meta
}

func ctDecode(t *testing.T, name string, ts []Tensor, meta map[string]string) *tcast.Tensor {
	t.Helper()
	l, _ := Get("compressed-tensors")
	d, ok, err := l.Decode(name, newLdrSource(ts, meta))
	require.NoError(t, err)
	require.True(t, ok)
	return d
}

// Hand-built examples: scales chosen to be exact so every code is known.
func TestCompressedTensorsHandBuilt(t *testing.T) {
	const w = "model.layers.0.mlp.down_proj.weight"
	const p = "model.layers.0.mlp.down_proj"
	// uint4_g32 rows: row 0 spans [−5, 10] (s = 15/15 = 1, zp = 5), row 1
	// [−3, 12] (s = 1, zp = 3); q_u = x + zp = i mod 16 in both.
	uint4x := make([]float32, 64)
	for i := range 32 {
		uint4x[i] = float32(i%16 - 5)
		uint4x[32+i] = float32(i%16 - 3)
	}
	nib := uint32(0x76543210) // i mod 16 for i = 0..7, one nibble each
	nib2 := uint32(0xFEDCBA98)
	nvfp4x := make([]float32, 32)
	copy(nvfp4x, []float32{2688, -2688, 448, 224})
	copy(nvfp4x[16:], []float32{6, 3, -1.5})
	mxfp4x := make([]float32, 64)
	copy(mxfp4x, []float32{6, -6, 1, 0.5})
	copy(mxfp4x[32:], []float32{12, -3, 2, 1})
	mxfp8x := make([]float32, 32)
	copy(mxfp8x, []float32{448, -448, 1, -1, 0.5, 2, 0, 3})
	tests := []struct {
		name  string
		dt    string
		x     []float32
		shape []int
		want  []ldrExpect
	}{{
		// s = 7/7 = 1 and 14/7 = 2 (float32 per channel), q = x/s; stored
		// q + 8, element i at bits 4i of the word.
		// row 0 q = 7 −7 0 1 2 3 −1 −2 → F 1 8 9 A B 7 6 → 0x67BA981F
		// row 1 q = 7 −7 1 2 0 −1 3 4 → F 1 9 A 8 7 B C → 0xCB78A91F
		name: "int4 channel", dt: "int4_channel",
		x:     []float32{7, -7, 0, 1, 2, 3, -1, -2, 14, -14, 2, 4, 0, -2, 6, 8},
		shape: []int{2, 8},
		want: []ldrExpect{
			{p + ".weight_packed", safetensors.I32, []int{2, 1}, le32(0x67BA981F, 0xCB78A91F)},
			{p + ".weight_scale", safetensors.F32, []int{2, 1}, lef32(1, 2)},
			{p + ".weight_shape", safetensors.I64, []int{2}, lei64(2, 8)},
		},
	}, {
		// 12 values: the second word holds 4 values (4 5 6 −3 → C D E 5)
		// and zero padding bits, not offset zeros.
		name: "int4 channel padded", dt: "int4_channel",
		x:     []float32{7, -7, 0, 1, 2, 3, -1, -2, 4, 5, 6, -3},
		shape: []int{1, 12},
		want: []ldrExpect{
			{p + ".weight_packed", safetensors.I32, []int{1, 2}, le32(0x67BA981F, 0x00005EDC)},
			{p + ".weight_scale", safetensors.F32, []int{1, 1}, lef32(1)},
			{p + ".weight_shape", safetensors.I64, []int{2}, lei64(1, 12)},
		},
	}, {
		// s = 127/127 = 1; stored q + 128: FF 01 80 81 | 7F 82 7E E4.
		name: "int8 channel", dt: "int8_channel",
		x:     []float32{127, -127, 0, 1, -1, 2, -2, 100},
		shape: []int{1, 8},
		want: []ldrExpect{
			{p + ".weight_packed", safetensors.I32, []int{1, 2}, le32(0x818001FF, 0xE47E827F)},
			{p + ".weight_scale", safetensors.F32, []int{1, 1}, lef32(1)},
			{p + ".weight_shape", safetensors.I64, []int{2}, lei64(1, 8)},
		},
	}, {
		// Asymmetric: stored q_u = i mod 16, scale float16 1.0 = 0x3C00,
		// zero points 5 and 3 packed along dim 0: 5 | 3<<4 = 0x35.
		name: "uint4 group 32", dt: "uint4_g32",
		x: uint4x, shape: []int{2, 32},
		want: []ldrExpect{
			{p + ".weight_packed", safetensors.I32, []int{2, 4}, le32(nib, nib2, nib, nib2, nib, nib2, nib, nib2)},
			{p + ".weight_scale", safetensors.F16, []int{2, 1}, le16(0x3C00, 0x3C00)},
			{p + ".weight_shape", safetensors.I64, []int{2}, lei64(2, 32)},
			{p + ".weight_zero_point", safetensors.I32, []int{1, 1}, le32(0x35)},
		},
	}, {
		// uint8 with uint8 zero points: each row, widened to include 0, spans
		// 255/256, so s = (255/256)/255 = 1/256 (float32 0x3B800000) and
		// zp = round(−lo·256); q_u = x·256 + zp, element i at bits 8i.
		// row 0 [0.5 255/256 0.75 0.625], lo 0:     zp 0,   q 128 255 192 160 → 0xA0C0FF80
		// row 1 [−255/256 −0.5 −0.75 −0.625], lo −255/256: zp 255, q 0 127 63 95 → 0x5F3F7F00
		// row 2 [−0.5 127/256 0 0.25], lo −0.5:     zp 128, q 0 255 128 192 → 0xC080FF00
		// row 3 [−0.25 191/256 0 −0.125], lo −0.25: zp 64,  q 0 255 64 32   → 0x2040FF00
		// Zero points packed along dim 0 in 8-bit fields: 0 | 255<<8 | 128<<16 | 64<<24.
		// An int8 zero point could not hold 255 or 128.
		name: "uint8 channel", dt: "uint8_channel",
		x: []float32{0.5, 255.0 / 256, 0.75, 0.625, -255.0 / 256, -0.5, -0.75, -0.625,
			-0.5, 127.0 / 256, 0, 0.25, -0.25, 191.0 / 256, 0, -0.125},
		shape: []int{4, 4},
		want: []ldrExpect{
			{p + ".weight_packed", safetensors.I32, []int{4, 1}, le32(0xA0C0FF80, 0x5F3F7F00, 0xC080FF00, 0x2040FF00)},
			{p + ".weight_scale", safetensors.F32, []int{4, 1}, le32(0x3B800000, 0x3B800000, 0x3B800000, 0x3B800000)},
			{p + ".weight_shape", safetensors.I64, []int{2}, lei64(4, 4)},
			{p + ".weight_zero_point", safetensors.I32, []int{1, 1}, le32(0x4080FF00)},
		},
	}, {
		// amax 448 → scale 1; E4M3 codes of 448 −448 1 −1 0.5 2 0 3.
		name: "fp8 tensor", dt: "fp8e4_tensor",
		x:     []float32{448, -448, 1, -1, 0.5, 2, 0, 3},
		shape: []int{1, 8},
		want: []ldrExpect{
			{p + ".weight", safetensors.F8E4M3, []int{1, 8}, []byte{0x7E, 0xFE, 0x38, 0xB8, 0x30, 0x40, 0x00, 0x44}},
			{p + ".weight_scale", safetensors.F32, []int{1}, lef32(1)},
		},
	}, {
		// amax 2688 → s_t = 2688/2688 = 1, global scale 1/1. Block 0: s_b =
		// 448 (0x7E), codes 6 −6 1 .5 → 7 F 2 1 → bytes F7 12. Block 1: s_b =
		// 1 (0x38), codes 6 3 −1.5 → 7 5 B → bytes 57 0B.
		name: "nvfp4", dt: "nvfp4",
		x: nvfp4x, shape: []int{1, 32},
		want: []ldrExpect{
			{p + ".weight_packed", safetensors.U8, []int{1, 16}, []byte{0xF7, 0x12, 0, 0, 0, 0, 0, 0, 0x57, 0x0B, 0, 0, 0, 0, 0, 0}},
			{p + ".weight_scale", safetensors.F8E4M3, []int{1, 2}, []byte{0x7E, 0x38}},
			{p + ".weight_global_scale", safetensors.F32, []int{1}, lef32(1)},
		},
	}, {
		// Block 0 amax 6 → 2^(2−2), E8M0 127: F7 12. Block 1 amax 12 →
		// 2^(3−2), E8M0 128: 12 −3 2 1 / 2 → 7 B 2 1 → B7 12.
		name: "mxfp4", dt: "mxfp4",
		x: mxfp4x, shape: []int{1, 64},
		want: []ldrExpect{
			{p + ".weight_packed", safetensors.U8, []int{1, 32},
				append(append([]byte{0xF7, 0x12}, make([]byte, 14)...), append([]byte{0xB7, 0x12}, make([]byte, 14)...)...)},
			{p + ".weight_scale", safetensors.U8, []int{1, 2}, []byte{127, 128}},
		},
	}, {
		// amax 448 → 2^(8−8), E8M0 127; E4M3 codes as for fp8 above.
		name: "mxfp8", dt: "mxfp8e4",
		x: mxfp8x, shape: []int{1, 32},
		want: []ldrExpect{
			{p + ".weight", safetensors.F8E4M3, []int{1, 32}, append([]byte{0x7E, 0xFE, 0x38, 0xB8, 0x30, 0x40, 0x00, 0x44}, make([]byte, 24)...)},
			{p + ".weight_scale", safetensors.U8, []int{1, 1}, []byte{127}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ldrCast(t, tc.dt, tc.x, tc.shape)
			ts, meta := ctEncode(t, w, c)
			ldrCheckTensors(t, ts, tc.want)
			wantMeta := map[string]string{KeyCTDataTypePrefix + p: tcast.MustLookup(tc.dt).Name()}
			if tc.dt == "nvfp4" {
				wantMeta[KeyCTGlobalScalePrefix+p] = fmt.Sprintf("0x%08x", binary.LittleEndian.Uint32(c.TensorScale.Bytes))
			}
			assert.Equal(t, wantMeta, meta)
			d := ctDecode(t, w, ts, meta)
			assert.Equal(t, tcast.MustLookup(tc.dt).Name(), d.DataType.Name())
			ldrSameValues(t, c, d)
			// The decoded values are the hand-picked inputs.
			v, err := tcast.Decompress(d)
			require.NoError(t, err)
			assert.Equal(t, tc.x, v)
		})
	}
}

// ctUnpackWord returns value i of a row of b-bit values packed in int32 words,
// read independently of the layout's own unpacker.
func ctUnpackWord(words []byte, i, b int) uint32 {
	per := 32 / b
	w := binary.LittleEndian.Uint32(words[4*(i/per):])
	return (w >> (b * (i % per))) & (1<<b - 1)
}

// signExtend reads a b-bit two's-complement code.
func signExtend(c uint32, b int) int {
	v := int(c & (1<<b - 1))
	if v >= 1<<(b-1) {
		v -= 1 << b
	}
	return v
}

// Every supported datatype on random weights: the tensors the spec names, with
// the spec's dtypes, shapes and packing, and a bit-exact Decode, with and
// without the metadata.
func TestCompressedTensorsDatatypes(t *testing.T) {
	const w = "model.layers.3.self_attn.o_proj.weight"
	const p = "model.layers.3.self_attn.o_proj"
	type row struct {
		dt      string
		shape   []int
		format  string
		bits    int
		group   int // 0: channel (pack) / per the strategy
		scaleDT safetensors.DType
		asym    bool
		sshape  []int
	}
	tests := []row{
		{"int4_g32", []int{4, 256}, "pack-quantized", 4, 32, safetensors.F16, false, []int{4, 8}},
		{"int4_g64", []int{4, 256}, "pack-quantized", 4, 64, safetensors.F16, false, []int{4, 4}},
		{"int4_g128", []int{4, 256}, "pack-quantized", 4, 128, safetensors.F16, false, []int{4, 2}},
		{"int8_g32", []int{3, 96}, "pack-quantized", 8, 32, safetensors.F16, false, []int{3, 3}},
		{"int8_g128", []int{4, 256}, "pack-quantized", 8, 128, safetensors.F16, false, []int{4, 2}},
		{"int4_channel", []int{5, 36}, "pack-quantized", 4, 0, safetensors.F32, false, []int{5, 1}},
		{"int8_channel", []int{5, 38}, "pack-quantized", 8, 0, safetensors.F32, false, []int{5, 1}},
		{"int4_b32", []int{4, 64}, "pack-quantized", 4, 32, safetensors.BF16, false, []int{4, 2}},
		{"uint4_g32", []int{9, 64}, "pack-quantized", 4, 32, safetensors.F16, true, []int{9, 2}},
		{"uint4_g128", []int{4, 256}, "pack-quantized", 4, 128, safetensors.F16, true, []int{4, 2}},
		{"uint8_g64", []int{6, 128}, "pack-quantized", 8, 64, safetensors.F16, true, []int{6, 2}},
		{"uint4_channel", []int{17, 40}, "pack-quantized", 4, 0, safetensors.F32, true, []int{17, 1}},
		{"uint8_channel", []int{5, 40}, "pack-quantized", 8, 0, safetensors.F32, true, []int{5, 1}},
		{"fp8e4_tensor", []int{4, 64}, "float-quantized", 8, 0, safetensors.F32, false, []int{1}},
		{"fp8e4_channel", []int{4, 64}, "float-quantized", 8, 0, safetensors.F32, false, []int{4, 1}},
		{"fp8e4_block128", []int{130, 200}, "float-quantized", 8, 0, safetensors.F32, false, []int{2, 2}},
		{"fp8_f", []int{4, 64}, "float-quantized", 8, 0, safetensors.F16, false, []int{1}},
		{"nvfp4", []int{4, 64}, "nvfp4-pack-quantized", 4, 16, safetensors.F8E4M3, false, []int{4, 4}},
		{"mxfp4", []int{4, 64}, "mxfp4-pack-quantized", 4, 32, safetensors.U8, false, []int{4, 2}},
		{"mxfp8e4", []int{4, 64}, "mxfp8-quantized", 8, 32, safetensors.U8, false, []int{4, 2}},
	}
	for i, tc := range tests {
		t.Run(tc.dt, func(t *testing.T) {
			out, in := tc.shape[0], tc.shape[1]
			x := ldrRandom(uint64(i+1), out*in)
			c := ldrCast(t, tc.dt, x, tc.shape)
			ts, meta := ctEncode(t, w, c)
			var want []ldrExpect
			switch tc.format {
			case "pack-quantized":
				want = []ldrExpect{
					{p + ".weight_packed", safetensors.I32, []int{out, (in*tc.bits + 31) / 32}, nil},
					{p + ".weight_scale", tc.scaleDT, tc.sshape, c.Scale.Bytes},
					{p + ".weight_shape", safetensors.I64, []int{2}, lei64(int64(out), int64(in))},
				}
				if tc.asym {
					want = append(want, ldrExpect{p + ".weight_zero_point", safetensors.I32, []int{(out*tc.bits + 31) / 32, tc.sshape[1]}, nil})
				}
			case "float-quantized", "mxfp8-quantized":
				want = []ldrExpect{
					{p + ".weight", safetensors.F8E4M3, []int{out, in}, c.Data.Bytes},
					{p + ".weight_scale", tc.scaleDT, tc.sshape, c.Scale.Bytes},
				}
			default:
				want = []ldrExpect{
					{p + ".weight_packed", safetensors.U8, []int{out, in / 2}, nil},
					{p + ".weight_scale", tc.scaleDT, tc.sshape, c.Scale.Bytes},
				}
				if tc.format == "nvfp4-pack-quantized" {
					want = append(want, ldrExpect{p + ".weight_global_scale", safetensors.F32, []int{1}, nil})
				}
			}
			ldrCheckTensors(t, ts, want)
			got := ldrByName(t, ts)
			switch tc.format {
			case "pack-quantized":
				// Offset binary: stored = q + 2^(b−1) for signed q; the
				// unsigned q_u as is; padding bits zero.
				words := got[p+".weight_packed"].Data
				rowBytes := 4 * ((in*tc.bits + 31) / 32)
				for r := range out {
					row := words[r*rowBytes : (r+1)*rowBytes]
					for j := range in {
						code := uint32(c.Data.Bytes[r*in+j])
						want := code
						if !tc.asym {
							want = uint32(signExtend(code, tc.bits) + 1<<(tc.bits-1))
						}
						require.Equal(t, want, ctUnpackWord(row, j, tc.bits), "row %d col %d", r, j)
					}
					for j := in; j < rowBytes*8/tc.bits; j++ {
						require.Zero(t, ctUnpackWord(row, j, tc.bits), "padding row %d col %d", r, j)
					}
				}
				if tc.asym {
					zw := got[p+".weight_zero_point"].Data
					groups := tc.sshape[1]
					per := 32 / tc.bits
					for r := range out {
						for g := range groups {
							word := binary.LittleEndian.Uint32(zw[4*((r/per)*groups+g):])
							zp := (word >> (tc.bits * (r % per))) & (1<<tc.bits - 1)
							require.Equal(t, uint32(c.Zero.Format.Decode(uint32(c.Zero.Bytes[r*groups+g]))), zp, "zero point row %d group %d", r, g)
						}
					}
				}
			case "nvfp4-pack-quantized", "mxfp4-pack-quantized":
				packed := got[p+".weight_packed"].Data
				for k, b := range packed {
					require.Equal(t, c.Data.Bytes[2*k], b&0x0F, "low nibble of byte %d", k)
					require.Equal(t, c.Data.Bytes[2*k+1], b>>4, "high nibble of byte %d", k)
				}
				if tc.format == "nvfp4-pack-quantized" {
					st := math.Float32frombits(binary.LittleEndian.Uint32(c.TensorScale.Bytes))
					assert.Equal(t, lef32(1/st), got[p+".weight_global_scale"].Data, "global scale is 1/s_t")
				}
			}
			assert.Equal(t, tcast.MustLookup(tc.dt).Name(), meta[KeyCTDataTypePrefix+p])
			d := ctDecode(t, w, ts, meta)
			assert.Equal(t, tcast.MustLookup(tc.dt).Name(), d.DataType.Name())
			ldrSameValues(t, c, d)
			// Without metadata the format itself names an equivalent datatype.
			bare := ctDecode(t, w, ts, map[string]string{})
			if c.TensorScale == nil {
				ldrSameValues(t, c, bare)
			} else if _, exact := globalScale(binary.LittleEndian.Uint32(c.TensorScale.Bytes)); exact {
				ldrSameValues(t, c, bare)
			}
		})
	}
}

// The reciprocal global scale does not always give s_t back in float32: then
// the exact bits go to the metadata, which Decode prefers while it agrees
// with the stored tensor.
func TestCompressedTensorsGlobalScaleReciprocal(t *testing.T) {
	const w = "lm.w.weight"
	const key = KeyCTGlobalScalePrefix + "lm.w"
	x := make([]float32, 32)
	x[0] = 5 // s_t = 5/2688 = 0x3AF3CF3D; float32(1/float32(1/s_t)) ≠ s_t
	x[17] = -1.25
	c := ldrCast(t, "nvfp4", x, []int{1, 32})
	require.Equal(t, le32(0x3AF3CF3D), c.TensorScale.Bytes)
	st := math.Float32frombits(0x3AF3CF3D)
	g := 1 / st
	require.NotEqual(t, st, 1/g, "the example must not round-trip")

	ts, meta := ctEncode(t, w, c)
	assert.Equal(t, "0x3af3cf3d", meta[key])
	assert.Equal(t, lef32(g), ldrByName(t, ts)["lm.w.weight_global_scale"].Data)
	ldrSameValues(t, c, ctDecode(t, w, ts, meta))

	// Without the record, 1/g is one ulp off: same codes, other tensor scale.
	bare := ctDecode(t, w, ts, map[string]string{"tcast.datatype.lm.w": "nvfp4"})
	assert.Equal(t, lef32(1/g), bare.TensorScale.Bytes)
	assert.NotEqual(t, c.TensorScale.Bytes, bare.TensorScale.Bytes)

	// A rewritten global scale wins over a stale record.
	ts2 := slices.Clone(ts)
	for i := range ts2 {
		if ts2[i].Name == "lm.w.weight_global_scale" {
			ts2[i].Data = lef32(2)
		}
	}
	d := ctDecode(t, w, ts2, meta)
	assert.Equal(t, lef32(0.5), d.TensorScale.Bytes)

	// The exact bits are recorded at a fixed width for every value, so that a
	// converter can declare the key before casting and patch it in place.
	x[0] = 6
	_, meta = ctEncode(t, w, ldrCast(t, "nvfp4", x, []int{1, 32}))
	assert.Len(t, meta[key], len("0x00000000"))
}

func TestCompressedTensorsCheck(t *testing.T) {
	l, err := Get("compressed-tensors")
	require.NoError(t, err)
	for _, n := range []string{"int4_g32", "int4_g128", "int8_g64", "int4_channel", "int8_channel", "uint4_g128", "uint8_channel",
		"fp8e4_tensor", "fp8e4_channel", "fp8e4_block128", "nvfp4", "mxfp4", "mxfp8e4"} {
		assert.NoError(t, l.Check(tcast.MustLookup(n), 1, 2), n)
	}
	tests := []struct {
		dt         string
		axis, rank int
		msg        string
	}{
		{"mxfp6e2", 1, 2, "mxfp6e2"},
		{"float16", 1, 2, "unscaled"},
		{"mx9", 1, 2, "subtile"},
		{"int8_F", 1, 2, "group or channel"},
		{"uint4_ff32", 1, 2, "int8 zero point"},
		{"int4_f32", 1, 2, "safetensors dtype"},
		{"fp8e5_tensor", 1, 2, "not supported"},
		{"mxfp4", 0, 2, "last (input) axis"},
		{"int4_g32", 0, 2, "last (input) axis"},
		{"nvfp4", 2, 3, "rank 3"},
		{"int4_g32", 0, 1, "rank 1"},
	}
	for _, tc := range tests {
		err := l.Check(tcast.MustLookup(tc.dt), tc.axis, tc.rank)
		if assert.Error(t, err, tc.dt) {
			assert.Contains(t, err.Error(), tc.msg)
		}
	}
}

func TestCompressedTensorsEncodeRejects(t *testing.T) {
	l, _ := Get("compressed-tensors")
	for _, tc := range []struct {
		dt    string
		shape []int
		msg   string
	}{
		{"int4_g32", []int{2, 48}, "not a multiple of the group size 32"},
		{"nvfp4", []int{2, 24}, "group size 16"},
		{"mxfp4", []int{2, 40}, "group size 32"},
		{"mxfp8e4", []int{1, 16}, "group size 32"},
		{"int4_channel", []int{2, 2, 8}, "rank 3"},
	} {
		c := ldrCast(t, tc.dt, ldrRandom(3, ldrProduct(tc.shape)), tc.shape)
		_, err := l.Encode("a.weight", c, map[string]string{})
		if assert.Error(t, err, tc.dt) {
			assert.Contains(t, err.Error(), tc.msg)
		}
	}
	// A zero point outside the 4-bit range cannot be stored.
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32(i%16 - 5)
	}
	c := ldrCast(t, "uint4_g32", x, []int{1, 32})
	c.Zero.Bytes[0] = 20
	_, err := l.Encode("a.weight", c, map[string]string{})
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "zero point 20")
	}
	// A virtual tensor holds no codes.
	v, err := tcast.Cast(x, []int{1, 32}, tcast.MustLookup("mxfp4"), nil)
	require.NoError(t, err)
	_, err = l.Encode("a.weight", v, map[string]string{})
	assert.Error(t, err)
}

func ldrProduct(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func TestCompressedTensorsDecodeAbsent(t *testing.T) {
	l, _ := Get("compressed-tensors")
	// An unconverted weight under its own name is not a converted one.
	src := newLdrSource([]Tensor{{Spec: Spec{Name: "a.weight", DType: safetensors.BF16, Shape: []int{1, 2}}, Data: make([]byte, 4)}}, nil)
	d, ok, err := l.Decode("a.weight", src)
	assert.NoError(t, err)
	assert.False(t, ok)
	assert.Nil(t, d)
	_, ok, err = l.Decode("b.weight", src)
	assert.NoError(t, err)
	assert.False(t, ok)

	// A damaged converted weight is an error.
	c := ldrCast(t, "int4_g32", ldrRandom(5, 128), []int{2, 64})
	ts, meta := ctEncode(t, "a.weight", c)
	for i := range ts {
		if ts[i].Name == "a.weight_scale" {
			ts[i].Shape = []int{2, 3}
		}
	}
	_, ok, err = l.Decode("a.weight", newLdrSource(ts, meta))
	assert.True(t, ok)
	assert.Error(t, err)
	// Metadata naming a datatype of another format is an error.
	ts, meta = ctEncode(t, "a.weight", c)
	meta[KeyCTDataTypePrefix+"a"] = "fp8e4_tensor"
	_, ok, err = l.Decode("a.weight", newLdrSource(ts, meta))
	assert.True(t, ok)
	assert.ErrorContains(t, err, "float-quantized")
}

func TestCompressedTensorsFiles(t *testing.T) {
	l, _ := Get("compressed-tensors")
	src := []byte(`{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "rms_norm_eps": 1e-05, "quantization_config": {"old": true}, "vocab_size": 10}`)
	kept := []string{"lm_head.weight", "model.embed_tokens.weight", "model.layers.0.mlp.gate.bias", "lm_head.weight"}
	tests := []struct {
		dt   string
		args map[string]any
		fmt  string
	}{
		{"int4_g128", map[string]any{"num_bits": 4.0, "type": "int", "symmetric": true, "group_size": 128.0, "strategy": "group"}, "pack-quantized"},
		{"int8_channel", map[string]any{"num_bits": 8.0, "type": "int", "symmetric": true, "group_size": nil, "strategy": "channel"}, "pack-quantized"},
		{"uint4_g128", map[string]any{"num_bits": 4.0, "type": "int", "symmetric": false, "group_size": 128.0, "strategy": "group"}, "pack-quantized"},
		{"fp8e4_tensor", map[string]any{"num_bits": 8.0, "type": "float", "symmetric": true, "group_size": nil, "strategy": "tensor"}, "float-quantized"},
		{"fp8e4_channel", map[string]any{"num_bits": 8.0, "type": "float", "strategy": "channel"}, "float-quantized"},
		{"fp8e4_block128", map[string]any{"num_bits": 8.0, "type": "float", "strategy": "block", "block_structure": []any{128.0, 128.0}, "group_size": nil}, "float-quantized"},
		{"nvfp4", map[string]any{"num_bits": 4.0, "type": "float", "symmetric": true, "group_size": 16.0, "strategy": "tensor_group"}, "nvfp4-pack-quantized"},
		{"mxfp4", map[string]any{"num_bits": 4.0, "type": "float", "group_size": 32.0, "strategy": "group"}, "mxfp4-pack-quantized"},
		{"mxfp8e4", map[string]any{"num_bits": 8.0, "type": "float", "group_size": 32.0, "strategy": "group"}, "mxfp8-quantized"},
	}
	for _, tc := range tests {
		t.Run(tc.dt, func(t *testing.T) {
			files, err := l.Files(tcast.MustLookup(tc.dt), []Converted{{Name: "model.layers.0.mlp.down_proj.weight", Shape: []int{64, 128}}}, kept, src)
			require.NoError(t, err)
			require.Len(t, files, 1)
			var cfg map[string]any
			require.NoError(t, json.Unmarshal(files["config.json"], &cfg))
			assert.Equal(t, []any{"LlamaForCausalLM"}, cfg["architectures"])
			assert.Equal(t, 64.0, cfg["hidden_size"])
			assert.Contains(t, string(files["config.json"]), `"rms_norm_eps": 1e-05`, "numbers are kept as written")
			qc := cfg["quantization_config"].(map[string]any)
			assert.NotContains(t, qc, "old")
			assert.Equal(t, "compressed-tensors", qc["quant_method"])
			assert.Equal(t, tc.fmt, qc["format"])
			assert.Equal(t, "compressed", qc["quantization_status"])
			assert.Equal(t, []any{"lm_head", "model.embed_tokens"}, qc["ignore"])
			assert.Contains(t, qc, "kv_cache_scheme")
			assert.Nil(t, qc["kv_cache_scheme"])
			assert.NotEmpty(t, qc["version"])
			groups := qc["config_groups"].(map[string]any)
			require.Len(t, groups, 1)
			g := groups["group_0"].(map[string]any)
			assert.Equal(t, []any{"Linear"}, g["targets"])
			assert.Equal(t, tc.fmt, g["format"])
			assert.Contains(t, g, "input_activations")
			assert.Nil(t, g["input_activations"])
			assert.Nil(t, g["output_activations"])
			wa := g["weights"].(map[string]any)
			for k, v := range tc.args {
				assert.Equal(t, v, wa[k], "weights.%s", k)
			}
			if tc.args["strategy"] != "block" {
				assert.NotContains(t, wa, "block_structure")
			}
			assert.Equal(t, false, wa["dynamic"])
			assert.Equal(t, "minmax", wa["observer"])
			// Key order of the source is kept, quantization_config in place.
			s := string(files["config.json"])
			assert.Less(t, strings.Index(s, `"architectures"`), strings.Index(s, `"quantization_config"`))
			assert.Less(t, strings.Index(s, `"quantization_config"`), strings.Index(s, `"vocab_size"`))
		})
	}
	// No source config: an object with quantization_config only.
	files, err := l.Files(tcast.MustLookup("mxfp4"), nil, nil, nil)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(files["config.json"], &cfg))
	assert.Len(t, cfg, 1)
	assert.Equal(t, []any{}, cfg["quantization_config"].(map[string]any)["ignore"])
	_, err = l.Files(tcast.MustLookup("mxfp4"), nil, nil, []byte(`[1, 2]`))
	assert.Error(t, err)
	_, err = l.Files(tcast.MustLookup("mxfp6e2"), nil, nil, nil)
	assert.Error(t, err)
}

func TestPackInt32Inverse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, b := range []int{4, 8} {
		for _, dims := range [][2]int{{1, 1}, {3, 7}, {9, 33}, {17, 8}} {
			rows, n := dims[0], dims[1]
			v := make([]byte, rows*n)
			for i := range v {
				v[i] = byte(r.IntN(1 << b))
			}
			for _, col := range []bool{false, true} {
				w := packInt32(v, rows, n, b, col)
				assert.Equal(t, v, unpackInt32(w, rows, n, b, col), "b=%d %v col=%v", b, dims, col)
			}
		}
	}
}
