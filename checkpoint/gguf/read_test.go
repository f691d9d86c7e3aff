package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hb builds GGUF bytes field by field, independently of the Writer.
type hb struct{ b []byte }

func (h *hb) raw(p ...byte) *hb { h.b = append(h.b, p...); return h }
func (h *hb) u8(x uint8) *hb    { return h.raw(x) }
func (h *hb) u16(x uint16) *hb  { h.b = binary.LittleEndian.AppendUint16(h.b, x); return h }
func (h *hb) u32(x uint32) *hb  { h.b = binary.LittleEndian.AppendUint32(h.b, x); return h }
func (h *hb) u64(x uint64) *hb  { h.b = binary.LittleEndian.AppendUint64(h.b, x); return h }
func (h *hb) f32(x float32) *hb { return h.u32(math.Float32bits(x)) }
func (h *hb) f64(x float64) *hb { return h.u64(math.Float64bits(x)) }
func (h *hb) str(s string) *hb  { h.u64(uint64(len(s))); h.b = append(h.b, s...); return h }
func (h *hb) padTo(n int) *hb   { return h.raw(make([]byte, (n-len(h.b)%n)%n)...) }
func (h *hb) bytes() []byte     { return bytes.Clone(h.b) }
func (h *hb) header(ver uint32, nT, nKV uint64) *hb {
	return h.raw('G', 'G', 'U', 'F').u32(ver).u64(nT).u64(nKV)
}

// kvStr appends a string key/value pair.
func (h *hb) kvStr(k, v string) *hb { return h.str(k).u32(8).str(v) }

// tinfo appends a tensor info.
func (h *hb) tinfo(name string, ne []uint64, typ uint32, off uint64) *hb {
	h.str(name).u32(uint32(len(ne)))
	for _, d := range ne {
		h.u64(d)
	}
	return h.u32(typ).u64(off)
}

// handFile returns a file with one KV pair of each of the 13 value types
// (plus a nested array), an F32 tensor of shape [2, 3] and a Q8_0 tensor
// of shape [32], built byte by byte.
func handFile() []byte {
	h := &hb{}
	h.header(3, 2, 16)
	h.kvStr("general.architecture", "llama")
	h.str("k.u8").u32(0).u8(200)
	h.str("k.i8").u32(1).u8(0x80) // -128
	h.str("k.u16").u32(2).u16(65535)
	h.str("k.i16").u32(3).u16(0xFFFE) // -2
	h.str("k.u32").u32(4).u32(4000000000)
	h.str("k.i32").u32(5).u32(0xFFFFFFFF) // -1
	h.str("k.f32").u32(6).f32(0.1)
	h.str("k.bool").u32(7).u8(1)
	h.str("k.str").u32(8).str("héllo")
	h.str("k.arr.str").u32(9).u32(8).u64(2).str("a").str("")
	h.str("k.u64").u32(10).u64(1 << 63)
	h.str("k.i64").u32(11).u64(0xFFFFFFFFFFFFFFF6) // -10
	h.str("k.f64").u32(12).f64(-2.5)
	h.str("k.arr.i32").u32(9).u32(5).u64(3).u32(1).u32(0xFFFFFFFE).u32(3)
	// An array of two arrays: [uint8{7}, bool{true, false}].
	h.str("k.arr.nested").u32(9).u32(9).u64(2).
		u32(0).u64(1).u8(7).
		u32(7).u64(2).u8(1).u8(0)
	h.tinfo("a", []uint64{3, 2}, 0, 0) // F32, torch shape [2, 3], 24 bytes
	h.tinfo("b", []uint64{32}, 8, 32)  // Q8_0, 34 bytes, at the next multiple of 32
	h.padTo(32)
	for i := range 6 {
		h.f32(float32(i) + 0.5)
	}
	h.padTo(32)
	h.u16(0x3800) // d = 0.5
	for j := range 32 {
		h.u8(uint8(int8(j - 16)))
	}
	return h.bytes()
}

func TestReadHandBuilt(t *testing.T) {
	in := handFile()
	f, err := Read(bytes.NewReader(in), int64(len(in)), "hand.gguf")
	require.NoError(t, err)
	assert.Equal(t, uint32(3), f.Version)
	assert.Equal(t, 32, f.Alignment)
	assert.Equal(t, "llama", f.Architecture())

	want := []KV{
		{"general.architecture", String("llama")},
		{"k.u8", Uint8(200)},
		{"k.i8", Int8(-128)},
		{"k.u16", Uint16(65535)},
		{"k.i16", Int16(-2)},
		{"k.u32", Uint32(4000000000)},
		{"k.i32", Int32(-1)},
		{"k.f32", Float32(0.1)},
		{"k.bool", Bool(true)},
		{"k.str", String("héllo")},
		{"k.arr.str", Array([]string{"a", ""})},
		{"k.u64", Uint64(1 << 63)},
		{"k.i64", Int64(-10)},
		{"k.f64", Float64(-2.5)},
		{"k.arr.i32", Array([]int32{1, -2, 3})},
		{"k.arr.nested", ArrayOfArrays([]Value{Array([]uint8{7}), Array([]bool{true, false})})},
	}
	require.Equal(t, want, f.KV)
	for i := 1; i <= 13; i++ { // keys 1..13 were added in type-id order
		assert.Equal(t, ValueType(i-1), f.KV[i].Value.Type(), f.KV[i].Key)
	}
	v, ok := f.Get("k.arr.nested")
	require.True(t, ok)
	assert.Equal(t, ValueArray, v.Elem())
	assert.Equal(t, 2, v.Len())
	_, ok = f.Get("missing")
	assert.False(t, ok)

	require.Len(t, f.Tensors, 2)
	a, b := f.Tensors[0], f.Tensors[1]
	assert.Equal(t, TensorInfo{Name: "a", Type: TypeF32, Dims: []int{3, 2}, Offset: 0, Size: 24}, a)
	assert.Equal(t, []int{2, 3}, a.Shape())
	assert.Equal(t, TensorInfo{Name: "b", Type: TypeQ8_0, Dims: []int{32}, Offset: 32, Size: 34}, b)
	assert.Equal(t, []int{32}, b.Shape())
	dataStart := len(in) - 32 - 34 // data: a padded to 32 bytes, then b
	assert.Equal(t, int64(dataStart), f.DataOffset)
	assert.Zero(t, f.DataOffset%32)

	raw, err := f.TensorBytes("a")
	require.NoError(t, err)
	assert.Equal(t, in[dataStart:dataStart+24], raw)
	vals, err := f.Float32s("a")
	require.NoError(t, err)
	assert.Equal(t, []float32{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}, vals)

	vals, err = f.Float32s("b")
	require.NoError(t, err)
	require.Len(t, vals, 32)
	for j, x := range vals {
		assert.Equal(t, float32(j-16)/2, x, "element %d", j)
	}

	_, err = f.TensorBytes("nope")
	require.ErrorIs(t, err, ErrNoTensor)
	assert.Contains(t, err.Error(), "hand.gguf")
	_, err = f.Float32s("nope")
	require.ErrorIs(t, err, ErrNoTensor)
}

func TestOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, os.WriteFile(path, handFile(), 0o644))
	f, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, path, f.Name)
	vals, err := f.Float32s("a")
	require.NoError(t, err)
	assert.Len(t, vals, 6)
	require.NoError(t, f.Close())
	require.NoError(t, f.Close())
	_, err = f.TensorBytes("a")
	require.Error(t, err, "reading after Close")

	_, err = Open(filepath.Join(t.TempDir(), "missing.gguf"))
	require.ErrorIs(t, err, os.ErrNotExist)

	bad := filepath.Join(t.TempDir(), "bad.gguf")
	require.NoError(t, os.WriteFile(bad, []byte("GGUF\x02\x00\x00\x00"), 0o644))
	_, err = Open(bad)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, bad, fe.Path)
	assert.Contains(t, err.Error(), bad)
}

func TestReadZeroTensors(t *testing.T) {
	// With no tensors ggml does not require the padding after the header.
	in := (&hb{}).header(3, 0, 1).kvStr("general.architecture", "x").bytes()
	f, err := Read(bytes.NewReader(in), int64(len(in)), "")
	require.NoError(t, err)
	assert.Empty(t, f.Tensors)
	assert.Len(t, f.KV, 1)
}

// handAligned returns a file with general.alignment 64, a gap in the data
// section, tensors stored out of info order, an empty tensor and a 0-d
// tensor, built byte by byte.
func handAligned() []byte {
	h := &hb{}
	h.header(3, 4, 1)
	h.str("general.alignment").u32(4).u32(64)
	h.tinfo("zero", []uint64{0, 5}, 1, 0)    // F16, no elements
	h.tinfo("scalar", nil, 0, 0)             // F32, 0-d, 4 bytes at 0
	h.tinfo("later", []uint64{2}, 30, 128)   // BF16 with a gap before it
	h.tinfo("earlier", []uint64{64}, 24, 64) // I8, out of info order
	h.padTo(64)
	h.f32(-1.25).padTo(64)
	for i := range 64 {
		h.u8(uint8(int8(i - 32)))
	}
	h.u16(0x3FC0).u16(0xC040) // bf16 1.5, -3
	return h.bytes()
}

func TestReadAlignmentAndEmptyTensors(t *testing.T) {
	in := handAligned()
	start := len(in) - 128 - 4

	f, err := Read(bytes.NewReader(in), int64(len(in)), "a.gguf")
	require.NoError(t, err)
	assert.Equal(t, 64, f.Alignment)
	assert.Equal(t, int64(start), f.DataOffset)
	zero, _ := f.Tensor("zero")
	assert.Equal(t, []int{5, 0}, zero.Shape())
	assert.Zero(t, zero.Size)
	vals, err := f.Float32s("zero")
	require.NoError(t, err)
	assert.Empty(t, vals)
	scalar, _ := f.Tensor("scalar")
	assert.Empty(t, scalar.Dims)
	assert.Equal(t, int64(1), scalar.NumElements())
	vals, err = f.Float32s("scalar")
	require.NoError(t, err)
	assert.Equal(t, []float32{-1.25}, vals)
	vals, err = f.Float32s("later")
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5, -3}, vals)
	vals, err = f.Float32s("earlier")
	require.NoError(t, err)
	assert.Equal(t, float32(-32), vals[0])
	assert.Equal(t, float32(31), vals[63])
}

func TestFloat32sPlainTypes(t *testing.T) {
	tests := []struct {
		typ  Type
		data []byte
		want []float32
	}{
		{TypeF32, (&hb{}).f32(1).f32(-0.375).bytes(), []float32{1, -0.375}},
		{TypeF16, (&hb{}).u16(0x3C00).u16(0xC500).u16(0x0001).u16(0x7C00).bytes(),
			[]float32{1, -5, 0x1p-24, float32(math.Inf(1))}},
		{TypeBF16, (&hb{}).u16(0x3F80).u16(0xBF00).bytes(), []float32{1, -0.5}},
		{TypeF64, (&hb{}).f64(0.5).f64(1 + 0x1p-30).bytes(), []float32{0.5, 1}},
		{TypeI8, []byte{0x7F, 0x80}, []float32{127, -128}},
		{TypeI16, (&hb{}).u16(0x8000).u16(3).bytes(), []float32{-32768, 3}},
		{TypeI32, (&hb{}).u32(0x80000000).u32(1<<24 + 1).bytes(), []float32{-2147483648, 1 << 24}},
		{TypeI64, (&hb{}).u64(1 << 62).u64(math.MaxUint64).bytes(), []float32{0x1p62, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String(), func(t *testing.T) {
			var w Writer
			require.NoError(t, w.AddKV(KeyArchitecture, String("t")))
			require.NoError(t, w.AddTensor("x", tt.typ, []int{len(tt.want)}, tt.data))
			f := readBack(t, &w)
			got, err := f.Float32s("x")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFloat32sUnsupported(t *testing.T) {
	var w Writer
	require.NoError(t, w.AddKV(KeyArchitecture, String("t")))
	require.NoError(t, w.AddTensor("k", TypeQ8_1, []int{32}, make([]byte, 36)))
	f := readBack(t, &w)
	_, err := f.Float32s("k")
	require.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "Q8_1")
	raw, err := f.TensorBytes("k")
	require.NoError(t, err)
	assert.Len(t, raw, 36)
}

// readBack writes w to memory and reads it back.
func readBack(t *testing.T, w *Writer) *File {
	t.Helper()
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "mem.gguf")
	require.NoError(t, err)
	return f
}

// badCase describes an invalid file and the error expected for it.
type badCase struct {
	name   string
	in     []byte
	tensor string // expected FormatError.Tensor
	key    string // expected FormatError.Key
	reason string // expected substring of the reason
	offset int64  // expected offset, or -1 not to check
	kind   error  // the sentinel errors.Is matches; nil: ErrInvalid
}

func badCases() []badCase {
	// prefix is a valid header up to the tensor infos with nT tensors and
	// the architecture key.
	prefix := func(nT uint64) *hb {
		return (&hb{}).header(3, nT, 1).kvStr("general.architecture", "x")
	}
	kvEnd := int64(len(prefix(0).b))
	withData := func(h *hb, n int) []byte { return h.padTo(32).raw(make([]byte, n)...).bytes() }
	long := strings.Repeat("n", 64)

	return []badCase{
		{name: "empty", in: nil, reason: "magic needs 4 bytes", offset: 0, kind: ErrTruncated},
		{name: "bad magic", in: []byte("GGML\x03\x00\x00\x00"), reason: `bad magic "GGML"`, offset: 0, kind: ErrNotFormat},
		{name: "version 2", in: (&hb{}).header(2, 0, 0).bytes(), reason: "unsupported GGUF version 2", offset: 4, kind: ErrUnsupported},
		{name: "version 4", in: (&hb{}).header(4, 0, 0).bytes(), reason: "unsupported GGUF version 4", offset: 4, kind: ErrUnsupported},
		{name: "version 1", in: (&hb{}).header(1, 0, 0).bytes(), reason: "unsupported GGUF version 1", offset: 4, kind: ErrUnsupported},
		{name: "big-endian", in: (&hb{}).raw('G', 'G', 'U', 'F', 0, 0, 0, 3).u64(0).u64(0).bytes(),
			reason: "big-endian", offset: 4, kind: ErrUnsupported},
		{name: "truncated counts", in: (&hb{}).raw('G', 'G', 'U', 'F').u32(3).u64(0).bytes(),
			reason: "kv_count needs 8 bytes", offset: 16, kind: ErrTruncated},
		{name: "tensor count above the limit", in: (&hb{}).header(3, MaxTensors+1, 0).raw(make([]byte, (MaxTensors+1)*minTensorInfo)...).bytes(),
			reason: "tensor_count 262145 is more than 262144, the limit", offset: 8, kind: ErrTooLarge},
		{name: "kv count above the limit", in: (&hb{}).header(3, 0, MaxTensors+1).raw(make([]byte, (MaxTensors+1)*minKV)...).bytes(),
			reason: "kv_count 262145 is more than 262144", offset: 8, kind: ErrTooLarge},
		{name: "tensor count beyond file", in: (&hb{}).header(3, 1<<40, 0).bytes(),
			reason: "tensor_count 1099511627776 and kv_count 0 cannot fit", offset: 8, kind: ErrTruncated},
		{name: "kv count beyond file", in: (&hb{}).header(3, 0, math.MaxUint64).raw(make([]byte, 100)...).bytes(),
			reason: "kv_count 18446744073709551615 cannot fit", offset: 8, kind: ErrTruncated},
		{name: "counts together beyond file", in: (&hb{}).header(3, 2, 2).raw(make([]byte, 60)...).bytes(),
			reason: "cannot fit in the 60 bytes", offset: 8, kind: ErrTruncated},
		{name: "key length beyond file", in: (&hb{}).header(3, 0, 1).u64(1 << 40).raw(make([]byte, 16)...).bytes(),
			reason: "key of 1099511627776 bytes extends beyond the end of the file", offset: 24, kind: ErrTruncated},
		{name: "string value beyond file", in: (&hb{}).header(3, 0, 1).str("k").u32(8).u64(100).raw('a').bytes(),
			key: "k", reason: "string value of 100 bytes extends beyond", offset: 24 + 9 + 4, kind: ErrTruncated},
		{name: "invalid value type", in: (&hb{}).header(3, 0, 1).str("k").u32(13).u8(0).bytes(),
			key: "k", reason: "invalid value type 13", offset: 33},
		{name: "invalid array type", in: (&hb{}).header(3, 0, 1).str("k").u32(9).u32(99).u64(0).bytes(),
			key: "k", reason: "invalid array element type 99", offset: 37},
		{name: "array length beyond file", in: (&hb{}).header(3, 0, 1).str("k").u32(9).u32(4).u64(1 << 60).u32(1).bytes(),
			key: "k", reason: "array of 1152921504606846976 uint32 elements", offset: 41, kind: ErrTruncated},
		{name: "string array beyond file", in: (&hb{}).header(3, 0, 1).str("k").u32(9).u32(8).u64(3).str("a").bytes(),
			key: "k", reason: "array of 3 string elements", offset: 41, kind: ErrTruncated},
		{name: "arrays nested too deep", in: (&hb{}).header(3, 0, 1).str("k").u32(9).
			u32(9).u64(1).u32(9).u64(1).u32(9).u64(1).u32(9).u64(1).u32(0).u64(0).bytes(),
			key: "k", reason: "arrays nested deeper than 4", offset: -1},
		{name: "duplicate key", in: (&hb{}).header(3, 0, 2).kvStr("a", "1").kvStr("a", "2").bytes(),
			key: "a", reason: "duplicate key", offset: 24 + 22},
		{name: "alignment not u32", in: (&hb{}).header(3, 0, 1).str("general.alignment").u32(10).u64(32).bytes(),
			key: "general.alignment", reason: "alignment is a uint64, want uint32", offset: 49},
		{name: "alignment not power of two", in: (&hb{}).header(3, 0, 1).str("general.alignment").u32(4).u32(48).bytes(),
			key: "general.alignment", reason: "alignment 48 is not a power of two", offset: 53},
		{name: "alignment zero", in: (&hb{}).header(3, 0, 1).str("general.alignment").u32(4).u32(0).bytes(),
			key: "general.alignment", reason: "alignment 0 is not a power of two", offset: 53},
		{name: "name of 64 bytes", in: withData(prefix(1).tinfo(long, []uint64{1}, 0, 0), 4),
			reason: "tensor name of 64 bytes is longer than 63 bytes", offset: kvEnd},
		{name: "name not UTF-8", in: withData(prefix(1).tinfo("w\xff", []uint64{1}, 0, 0), 32),
			tensor: "w\xff", reason: "tensor name is not valid UTF-8", offset: kvEnd},
		{name: "name with a truncated rune", in: withData(prefix(1).tinfo("blk.\xe2\x82", []uint64{1}, 0, 0), 32),
			tensor: "blk.\xe2\x82", reason: "tensor name is not valid UTF-8", offset: kvEnd},
		{name: "n_dims 5", in: withData(prefix(1).tinfo("t5", []uint64{1, 1, 1, 1, 1}, 0, 0), 4),
			tensor: "t5", reason: "n_dims 5 > 4", offset: kvEnd + 10},
		{name: "dims overflow", in: withData(prefix(1).tinfo("big", []uint64{1 << 32, 1 << 32}, 0, 0), 4),
			tensor: "big", reason: "overflows int64", offset: kvEnd + 11},
		{name: "dimension too large", in: withData(prefix(1).tinfo("big", []uint64{1 << 63}, 0, 0), 4),
			tensor: "big", reason: "dimension 0 is 9223372036854775808", offset: kvEnd + 15},
		{name: "size overflow", in: withData(prefix(1).tinfo("big", []uint64{1 << 31, 1 << 31}, 0, 0), 4),
			tensor: "big", reason: "size in bytes of F32 dims [2147483648 2147483648] overflows", offset: kvEnd + 11},
		{name: "unknown type", in: withData(prefix(1).tinfo("u", []uint64{4}, 4, 0), 32),
			tensor: "u", reason: "unknown ggml type 4", offset: kvEnd + 9 + 4 + 8, kind: ErrUnsupported},
		{name: "unknown type 1000", in: withData(prefix(1).tinfo("u", []uint64{4}, 1000, 0), 32),
			tensor: "u", reason: "unknown ggml type 1000", offset: -1, kind: ErrUnsupported},
		{name: "ne0 not multiple of block", in: withData(prefix(1).tinfo("q", []uint64{16, 2}, 8, 0), 64),
			tensor: "q", reason: "ne[0] = 16 is not a multiple of the Q8_0 block size 32", offset: kvEnd + 9},
		{name: "scalar of a block type", in: withData(prefix(1).tinfo("q", nil, 39, 0), 64),
			tensor: "q", reason: "ne[0] = 1 is not a multiple of the MXFP4 block size 32", offset: -1},
		{name: "duplicate tensor", in: withData(prefix(2).tinfo("d", []uint64{1}, 0, 0).tinfo("d", []uint64{1}, 0, 32), 64),
			tensor: "d", reason: "duplicate tensor name", offset: -1},
		{name: "offset misaligned", in: withData(prefix(1).tinfo("m", []uint64{2}, 0, 8), 64),
			tensor: "m", reason: "data offset 8 is not a multiple of the alignment 32", offset: kvEnd + 9 + 4 + 8 + 4},
		{name: "offset too large", in: withData(prefix(1).tinfo("m", []uint64{2}, 0, 1<<63), 64),
			tensor: "m", reason: "offset 9223372036854775808 is too large", offset: -1},
		{name: "tensor beyond file", in: withData(prefix(1).tinfo("e", []uint64{9}, 0, 0), 32),
			tensor: "e", reason: "extends beyond the end of the file", offset: kvEnd + 9 + 4 + 8 + 4, kind: ErrTruncated},
		{name: "tensor offset beyond file", in: withData(prefix(1).tinfo("e", []uint64{1}, 0, 64), 32),
			tensor: "e", reason: "extends beyond the end of the file", offset: -1, kind: ErrTruncated},
		{name: "data section beyond file", in: prefix(1).tinfo("e", []uint64{0}, 0, 0).bytes(),
			reason: "data section at", offset: -1, kind: ErrTruncated},
		{name: "overlapping tensors", in: withData(prefix(2).tinfo("o1", []uint64{16}, 0, 0).tinfo("o2", []uint64{4}, 0, 32), 64),
			tensor: "o2", reason: `overlaps tensor "o1" at [0, 64)`, offset: -1},
		{name: "same offset", in: withData(prefix(2).tinfo("s1", []uint64{4}, 0, 0).tinfo("s2", []uint64{4}, 0, 0), 64),
			tensor: "s2", reason: `overlaps tensor "s1"`, offset: -1},
		{name: "truncated tensor info", in: prefix(1).str("t").u32(1).bytes(),
			tensor: "t", reason: "dimension needs 8 bytes", offset: kvEnd + 13, kind: ErrTruncated},
	}
}

func TestReadBadInput(t *testing.T) {
	for _, tt := range badCases() {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tt.in), int64(len(tt.in)), "bad.gguf")
			require.Error(t, err)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "bad.gguf", fe.Path)
			assert.Equal(t, tt.tensor, fe.Tensor)
			assert.Equal(t, tt.key, fe.Key)
			assert.Contains(t, fe.Reason, tt.reason)
			if tt.offset >= 0 {
				assert.Equal(t, tt.offset, fe.Offset)
			}
			kind := tt.kind
			if kind == nil {
				kind = ErrInvalid
			}
			assert.ErrorIs(t, err, kind)
			assert.Equal(t, "gguf", fe.Format)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "gguf: bad.gguf: "), msg)
			if tt.tensor != "" {
				assert.Contains(t, msg, "tensor "+strconv.Quote(tt.tensor))
			}
		})
	}
}

func TestReadMaxNameLen(t *testing.T) {
	name := strings.Repeat("n", MaxNameLen)
	in := (&hb{}).header(3, 1, 0).tinfo(name, []uint64{1}, 0, 0).padTo(32).f32(1).bytes()
	f, err := Read(bytes.NewReader(in), int64(len(in)), "")
	require.NoError(t, err)
	assert.Equal(t, name, f.Tensors[0].Name)
}

func TestReadTruncatedPrefixes(t *testing.T) {
	// Every proper prefix of a valid file is an error, never a panic; the
	// file has data at its very end, so every cut hits something.
	in := handFile()
	for n := range len(in) {
		_, err := Read(bytes.NewReader(in[:n]), int64(n), "cut.gguf")
		var fe *FormatError
		require.ErrorAs(t, err, &fe, "prefix of %d bytes", n)
		require.ErrorIs(t, err, ErrTruncated, "prefix of %d bytes: %v", n, err)
	}
}

func TestReadShortReaderAt(t *testing.T) {
	// A ReaderAt shorter than the size it is said to have.
	in := handFile()
	_, err := Read(bytes.NewReader(in[:40]), int64(len(in)), "short.gguf")
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)

	// Header complete, data missing: the error comes from TensorBytes.
	f, err := Read(bytes.NewReader(in[:len(in)-1]), int64(len(in)), "short.gguf")
	require.NoError(t, err)
	_, err = f.TensorBytes("b")
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "b", fe.Tensor)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)

	_, err = Read(bytes.NewReader(in), -1, "neg.gguf")
	require.ErrorAs(t, err, &fe)
}

func TestFormatErrorMessage(t *testing.T) {
	err := &FormatError{Format: format, Path: "m.gguf", Tensor: "blk.0.w", Offset: 120, Reason: "n_dims 5 > 4"}
	assert.Equal(t, `gguf: m.gguf: tensor "blk.0.w": offset 120: n_dims 5 > 4`, err.Error())
	err = &FormatError{Format: format, Key: "k", Offset: 3, Reason: "r", Err: io.ErrUnexpectedEOF}
	assert.Equal(t, `gguf: key "k": offset 3: r: unexpected EOF`, err.Error())
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// TestTensorData checks that the views of a mapped file and the copies of
// a file read through ReadAt give the same bytes as TensorBytes, that
// releasing pages leaves them readable, and that nothing is read after
// Close.
func TestTensorData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, os.WriteFile(path, handFile(), 0o644))
	for _, mapped := range []bool{true, false} {
		if !mapped {
			old := mmapHook
			mmapHook = func(*os.File, int64) ([]byte, error) { return nil, os.ErrInvalid }
			t.Cleanup(func() { mmapHook = old })
		}
		f, err := Open(path)
		require.NoError(t, err)
		assert.Equal(t, mapped, f.data != nil)
		for _, ti := range f.Tensors {
			want, err := f.TensorBytes(ti.Name)
			require.NoError(t, err)
			got, err := f.TensorData(ti.Name)
			require.NoError(t, err)
			assert.Equal(t, want, got, ti.Name)
			assert.Len(t, got, cap(got), "a view ends at its tensor")
			f.ReleaseRange(ti.Name, -5, 1<<40)
			f.ReleaseRange(ti.Name, 3, -1)
			r, err := f.TensorRange(ti.Name, 1, ti.Size-1)
			require.NoError(t, err)
			assert.Equal(t, want[1:], r, ti.Name)
		}
		f.ReleaseRange("nope", 0, 1)
		_, err = f.TensorData("nope")
		require.ErrorIs(t, err, ErrNoTensor)
		require.NoError(t, f.Close())
		for _, read := range []func(string) ([]byte, error){f.TensorData, f.TensorBytes} {
			_, err = read("a")
			require.ErrorIs(t, err, os.ErrClosed, "mapped %v", mapped)
		}
		f.ReleaseRange("a", 0, 1)
	}
}
