package gguf

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

func TestWriterBytes(t *testing.T) {
	t.Run("F32", func(t *testing.T) {
		var w Writer
		require.NoError(t, w.AddKV("general.architecture", String("test")))
		require.NoError(t, w.AddTensor("w", TypeF32, []int{2}, (&hb{}).f32(1).f32(2).bytes()))
		var buf bytes.Buffer
		n, err := w.WriteTo(&buf)
		require.NoError(t, err)

		want := (&hb{}).
			raw('G', 'G', 'U', 'F').u32(3).u64(1).u64(1).   // 24 bytes
			str("general.architecture").u32(8).str("test"). // 44 bytes
			str("w").u32(1).u64(2).u32(0).u64(0).           // 33 bytes: 101
			raw(make([]byte, 27)...).                       // pad to 128
			f32(1).f32(2).raw(make([]byte, 24)...).bytes()
		assert.Equal(t, want, buf.Bytes())
		assert.Equal(t, int64(160), n)
		size, err := w.Size()
		require.NoError(t, err)
		assert.Equal(t, int64(160), size)
	})
	t.Run("Q8_0 and F16 with alignment 64", func(t *testing.T) {
		var w Writer
		require.NoError(t, w.AddKV("general.alignment", Uint32(64)))
		require.NoError(t, w.AddKV("general.architecture", String("q")))
		q := make([]byte, 34)
		q[0], q[1], q[2] = 0x00, 0x3C, 0x05
		require.NoError(t, w.AddTensor("q", TypeQ8_0, []int{1, 32}, q))
		require.NoError(t, w.AddTensor("h", TypeF16, []int{3, 1}, []byte{0, 0x3C, 0, 0x40, 0, 0x42}))
		var buf bytes.Buffer
		_, err := w.WriteTo(&buf)
		require.NoError(t, err)

		h := (&hb{}).raw('G', 'G', 'U', 'F').u32(3).u64(2).u64(3).
			str("general.alignment").u32(4).u32(64).
			str("general.architecture").u32(8).str("q").
			str("general.quantization_version").u32(4).u32(2).
			str("q").u32(2).u64(32).u64(1).u32(8).u64(0). // ne reversed: [32, 1]
			str("h").u32(2).u64(1).u64(3).u32(1).u64(64)  // Q8_0's 34 bytes padded to 64
		h.padTo(64)
		h.raw(q...).padTo(64).raw(0, 0x3C, 0, 0x40, 0, 0x42).padTo(64)
		assert.Equal(t, h.bytes(), buf.Bytes())
		var d Writer // declared, not added: the same size
		require.NoError(t, d.AddKV("general.alignment", Uint32(64)))
		require.NoError(t, d.AddKV("general.architecture", String("q")))
		require.NoError(t, d.DeclareTensor("q", TypeQ8_0, []int{1, 32}))
		require.NoError(t, d.DeclareTensor("h", TypeF16, []int{3, 1}))
		size, err := d.Size()
		require.NoError(t, err)
		assert.Equal(t, int64(buf.Len()), size)
	})
}

func TestWriterKeepsQuantizationVersion(t *testing.T) {
	var w Writer
	require.NoError(t, w.AddKV(KeyQuantizationVersion, Uint32(2)))
	require.NoError(t, w.AddKV(KeyArchitecture, String("a")))
	require.NoError(t, w.AddTensor("m", TypeMXFP4, []int{32}, make([]byte, 17)))
	f := readBack(t, &w)
	require.Len(t, f.KV, 2)
	assert.Equal(t, KeyQuantizationVersion, f.KV[0].Key)

	// Not added when nothing is quantized.
	var w2 Writer
	require.NoError(t, w2.AddKV(KeyArchitecture, String("a")))
	require.NoError(t, w2.AddTensor("b", TypeBF16, []int{2}, make([]byte, 4)))
	f = readBack(t, &w2)
	require.Len(t, f.KV, 1)
	_, ok := f.Get(KeyQuantizationVersion)
	assert.False(t, ok)
}

func TestRoundTripTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var types []Type
	for typ := range typeTable {
		types = append(types, typ)
	}
	for _, typ := range types {
		t.Run(typ.String(), func(t *testing.T) {
			shapes := [][]int{{3, 2 * typ.BlockSize()}, {2, 1, 2, typ.BlockSize()}, {typ.BlockSize()}}
			var w Writer
			require.NoError(t, w.AddKV(KeyArchitecture, String("rt")))
			var want [][]byte
			for i, shape := range shapes {
				n := int64(1)
				for _, d := range shape {
					n *= int64(d)
				}
				size, ok := typ.Size(n)
				require.True(t, ok)
				data := make([]byte, size)
				for j := range data {
					data[j] = byte(rng.Uint32())
				}
				want = append(want, data)
				require.NoError(t, w.AddTensor("t"+string(rune('0'+i)), typ, shape, data))
			}
			f := readBack(t, &w)
			require.Len(t, f.Tensors, len(shapes))
			var off int64
			for i, ti := range f.Tensors {
				assert.Equal(t, typ, ti.Type)
				assert.Equal(t, shapes[i], ti.Shape())
				assert.Equal(t, int64(len(want[i])), ti.Size)
				assert.Equal(t, off, ti.Offset, "ggml requires contiguous padded offsets")
				off += (ti.Size + 31) / 32 * 32
				got, err := f.TensorBytes(ti.Name)
				require.NoError(t, err)
				assert.Equal(t, want[i], got)

				vals, err := f.Float32s(ti.Name)
				if _, ok := dequantizers[typ]; !ok {
					assert.ErrorIs(t, err, errors.ErrUnsupported)
					continue
				}
				require.NoError(t, err)
				require.Len(t, vals, int(ti.NumElements()))
			}
			_, ok := f.Get(KeyQuantizationVersion)
			assert.Equal(t, typ.Quantized(), ok)
		})
	}
}

func TestRoundTripFloat32s(t *testing.T) {
	// Values written by the block codecs come back through Float32s.
	x := make([]float32, 2*64)
	for i := range x {
		x[i] = float32(i%37) - 18.25
	}
	q8 := make([]byte, len(x)/32*34)
	quantizeTo(t, TypeQ8_0, q8, x, nil)
	q4 := make([]byte, len(x)/32*18)
	quantizeTo(t, TypeQ4_0, q4, x, nil)
	codes := make([]uint8, len(x))
	for i := range codes {
		codes[i] = uint8(i * 7 % 16)
	}
	mx := make([]byte, len(x)/32*17)
	require.NoError(t, JoinBlocks(TypeMXFP4, mx, codes, []uint8{120, 127, 130, 0}))
	nv := make([]byte, len(x)/64*36)
	require.NoError(t, JoinBlocks(TypeNVFP4, nv, codes, []uint8{0x38, 0x30, 0x40, 0x01, 0x7E, 0x00, 0x39, 0x3A}))

	var w Writer
	require.NoError(t, w.AddKV(KeyArchitecture, String("rt")))
	blocks := map[string]struct {
		typ  Type
		data []byte
	}{
		"q8": {TypeQ8_0, q8},
		"q4": {TypeQ4_0, q4},
		"mx": {TypeMXFP4, mx},
		"nv": {TypeNVFP4, nv},
	}
	for _, name := range []string{"q8", "q4", "mx", "nv"} {
		b := blocks[name]
		require.NoError(t, w.AddTensor(name, b.typ, []int{2, 64}, b.data))
	}
	f := readBack(t, &w)
	for name, b := range blocks {
		got, err := f.Float32s(name)
		require.NoError(t, err, name)
		want := make([]float32, len(x))
		dequantizeFrom(t, b.typ, want, b.data)
		assert.Equal(t, math32bits(want), math32bits(got), name)
	}
	mxv, _ := f.Float32s("mx")
	for i := range 64 {
		e := []int{120, 127}[i/32]
		assert.Equal(t, e2m1(codes[i])*float32(math.Ldexp(1, e-127)), mxv[i], "mx element %d", i)
	}
}

func math32bits(xs []float32) []uint32 {
	out := make([]uint32, len(xs))
	for i, x := range xs {
		out[i] = math.Float32bits(x)
	}
	return out
}

// allKV is one pair of each value type, arrays of each element type and
// nested arrays.
func allKV() []KV {
	return []KV{
		{KeyArchitecture, String("llama")},
		{"u8", Uint8(255)}, {"i8", Int8(-7)}, {"u16", Uint16(500)}, {"i16", Int16(-500)},
		{"u32", Uint32(1 << 31)}, {"i32", Int32(math.MinInt32)}, {"f32", Float32(float32(math.Inf(-1)))},
		{"bool", Bool(false)}, {"str", String("")}, {"u64", Uint64(math.MaxUint64)},
		{"i64", Int64(math.MinInt64)}, {"f64", Float64(math.Pi)},
		{"a.u8", Array([]uint8{1, 2})}, {"a.i8", Array([]int8{-1})}, {"a.u16", Array([]uint16{})},
		{"a.i16", Array([]int16{-3, 3})}, {"a.u32", Array([]uint32{7})}, {"a.i32", Array([]int32{-9})},
		{"a.f32", Array([]float32{0.5, -0})}, {"a.bool", Array([]bool{true, false, true})},
		{"a.str", Array([]string{"x", "", "ünï"})}, {"a.u64", Array([]uint64{1 << 60})},
		{"a.i64", Array([]int64{-1 << 60})}, {"a.f64", Array([]float64{1e300})},
		{"a.nil", Array[string](nil)},
		{"a.nested", ArrayOfArrays([]Value{Array([]int32{1}), ArrayOfArrays([]Value{Array([]string{"deep"})})})},
	}
}

func TestRoundTripKV(t *testing.T) {
	var w Writer
	for _, p := range allKV() {
		require.NoError(t, w.AddKV(p.Key, p.Value), p.Key)
	}
	f := readBack(t, &w)
	want := allKV()
	want[len(want)-2] = KV{"a.nil", Array([]string{})}
	assert.Equal(t, want, f.KV)
	assert.Empty(t, f.Tensors)
}

func TestWriterErrors(t *testing.T) {
	arch := func(w *Writer) { require.NoError(t, w.AddKV(KeyArchitecture, String("a"))) }
	tests := []struct {
		name string
		do   func(w *Writer) error
		want string
	}{
		{"empty key", func(w *Writer) error { return w.AddKV("", Uint8(1)) }, "key of 0 bytes"},
		{"long key", func(w *Writer) error { return w.AddKV(strings.Repeat("k", 1<<16), Uint8(1)) }, "key of 65536 bytes"},
		{"duplicate key", func(w *Writer) error { arch(w); return w.AddKV(KeyArchitecture, String("b")) }, "duplicate key"},
		{"zero value", func(w *Writer) error { return w.AddKV("k", Value{}) }, "invalid (zero) Value"},
		{"too deep", func(w *Writer) error {
			v := Array([]uint8{1})
			for range 4 {
				v = ArrayOfArrays([]Value{v})
			}
			return w.AddKV("k", v)
		}, "nested deeper than 4"},
		{"alignment type", func(w *Writer) error { return w.AddKV(KeyAlignment, Uint64(32)) }, "want uint32"},
		{"alignment value", func(w *Writer) error { return w.AddKV(KeyAlignment, Uint32(4)) }, "not a power of two multiple of 8"},
		{"quantization version type", func(w *Writer) error { return w.AddKV(KeyQuantizationVersion, Int32(2)) }, "want uint32"},
		{"empty name", func(w *Writer) error { return w.AddTensor("", TypeF32, []int{1}, make([]byte, 4)) }, "want 1 to 63 bytes"},
		{"name of 64 bytes", func(w *Writer) error {
			return w.AddTensor(strings.Repeat("n", 64), TypeF32, []int{1}, make([]byte, 4))
		}, "64 bytes: want 1 to 63 bytes"},
		{"duplicate tensor", func(w *Writer) error {
			require.NoError(t, w.AddTensor("t", TypeF32, []int{1}, make([]byte, 4)))
			return w.AddTensor("t", TypeF32, []int{1}, make([]byte, 4))
		}, `duplicate tensor "t"`},
		{"unknown type", func(w *Writer) error { return w.AddTensor("t", Type(4), []int{1}, make([]byte, 4)) }, "unknown type Type(4)"},
		{"5 dims", func(w *Writer) error { return w.AddTensor("t", TypeF32, []int{1, 1, 1, 1, 1}, make([]byte, 4)) }, "more than 4 dimensions"},
		{"negative dim", func(w *Writer) error { return w.AddTensor("t", TypeF32, []int{-1}, nil) }, "negative dimension"},
		{"too many elements", func(w *Writer) error {
			return w.AddTensor("t", TypeF32, []int{1 << 40, 1 << 40}, nil)
		}, "too many elements"},
		{"not a whole block", func(w *Writer) error { return w.AddTensor("t", TypeQ8_0, []int{32, 16}, make([]byte, 34*16)) }, "innermost dimension 16 is not a multiple of the Q8_0 block size 32"},
		{"scalar block type", func(w *Writer) error { return w.AddTensor("t", TypeQ4_0, nil, make([]byte, 18)) }, "innermost dimension 1"},
		{"data size", func(w *Writer) error { return w.AddTensor("t", TypeF16, []int{2, 2}, make([]byte, 7)) }, "7 bytes of data, shape [2 2] of F16 needs 8"},
		{"missing architecture", func(w *Writer) error { _, err := w.WriteTo(new(bytes.Buffer)); return err }, "missing required key general.architecture"},
		{"model type without architecture", func(w *Writer) error {
			require.NoError(t, w.AddKV(KeyType, String("model")))
			_, err := w.WriteTo(new(bytes.Buffer))
			return err
		}, "missing required key general.architecture"},
		{"type not a string, no architecture", func(w *Writer) error {
			require.NoError(t, w.AddKV(KeyType, Uint32(1)))
			_, err := w.WriteTo(new(bytes.Buffer))
			return err
		}, "missing required key general.architecture"},
		{"architecture not a string", func(w *Writer) error {
			require.NoError(t, w.AddKV(KeyArchitecture, Uint8(1)))
			_, err := w.WriteTo(new(bytes.Buffer))
			return err
		}, "is a uint8, want string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w Writer
			err := tt.do(&w)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "gguf: "), err.Error())
		})
	}
	assert.Panics(t, func() { ArrayOfArrays([]Value{Uint8(1)}) })
}

// A file whose general.type is not "model" (an importance matrix) needs no
// general.architecture, as ggml's own writer does not add one.
func TestWriterNotModel(t *testing.T) {
	var w Writer
	require.NoError(t, w.AddKV(KeyType, String("imatrix")))
	require.NoError(t, w.AddTensor("x", TypeF32, []int{1}, (&hb{}).f32(2).bytes()))
	f := readBack(t, &w)
	assert.Empty(t, f.Architecture())
	v, ok := f.Get(KeyType)
	require.True(t, ok)
	assert.Equal(t, `string("imatrix")`, v.String())
}

func TestWriterZeroDim(t *testing.T) {
	var w Writer
	require.NoError(t, w.AddKV(KeyArchitecture, String("a")))
	require.NoError(t, w.AddTensor("s", TypeF32, nil, (&hb{}).f32(3).bytes()))
	require.NoError(t, w.AddTensor("e", TypeF32, []int{0, 4}, nil))
	f := readBack(t, &w)
	s, _ := f.Tensor("s")
	assert.Equal(t, []int{1}, s.Dims, "0-d is stored as [1]")
	e, _ := f.Tensor("e")
	assert.Equal(t, []int{4, 0}, e.Dims)
	assert.Equal(t, int64(32), e.Offset)
	assert.Zero(t, e.Size)
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteToError(t *testing.T) {
	var w Writer
	require.NoError(t, w.AddKV(KeyArchitecture, String("a")))
	require.NoError(t, w.AddTensor("t", TypeF32, []int{1 << 19}, make([]byte, 1<<21)))
	n, err := w.WriteTo(&failWriter{n: 1000})
	require.ErrorContains(t, err, "disk full")
	assert.LessOrEqual(t, n, int64(1000))
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.gguf")

	// An invalid writer leaves nothing behind.
	var bad Writer
	require.Error(t, bad.WriteFile(path))
	assertOnly(t, dir)

	var w Writer
	require.NoError(t, w.AddKV(KeyArchitecture, String("a")))
	require.NoError(t, w.AddTensor("t", TypeF32, []int{2}, (&hb{}).f32(1).f32(2).bytes()))
	require.NoError(t, w.WriteFile(path))
	assertOnly(t, dir, "out.gguf")
	var buf bytes.Buffer
	_, err := w.WriteTo(&buf)
	require.NoError(t, err)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, buf.Bytes(), got)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// A failing write keeps the old file.
	require.Error(t, bad.WriteFile(path))
	got2, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, got, got2)
	assertOnly(t, dir, "out.gguf")

	// A missing directory is an error, with nothing created.
	require.Error(t, w.WriteFile(filepath.Join(dir, "no", "x.gguf")))
	assertOnly(t, dir, "out.gguf")

	// Relative paths work.
	t.Chdir(dir)
	require.NoError(t, w.WriteFile("rel.gguf"))
	assertOnly(t, dir, "out.gguf", "rel.gguf")
}

// assertOnly checks that dir holds exactly the named entries.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, names, got)
}

func TestTypeTable(t *testing.T) {
	// Ids, names and block geometry from ggml's ggml.h / ggml-common.h
	// (and docs/LAYOUTS.md §5).
	tests := []struct {
		typ         Type
		id          uint32
		name        string
		size, bytes int
	}{
		{TypeF32, 0, "F32", 1, 4}, {TypeF16, 1, "F16", 1, 2}, {TypeQ4_0, 2, "Q4_0", 32, 18},
		{TypeQ4_1, 3, "Q4_1", 32, 20}, {TypeQ5_0, 6, "Q5_0", 32, 22}, {TypeQ5_1, 7, "Q5_1", 32, 24},
		{TypeQ8_0, 8, "Q8_0", 32, 34}, {TypeQ8_1, 9, "Q8_1", 32, 36}, {TypeQ2_K, 10, "Q2_K", 256, 84},
		{TypeQ6_K, 14, "Q6_K", 256, 210}, {TypeIQ4_NL, 20, "IQ4_NL", 32, 18},
		{TypeI8, 24, "I8", 1, 1}, {TypeI16, 25, "I16", 1, 2}, {TypeI32, 26, "I32", 1, 4},
		{TypeI64, 27, "I64", 1, 8}, {TypeF64, 28, "F64", 1, 8}, {TypeBF16, 30, "BF16", 1, 2},
		{TypeTQ1_0, 34, "TQ1_0", 256, 54}, {TypeTQ2_0, 35, "TQ2_0", 256, 66},
		{TypeMXFP4, 39, "MXFP4", 32, 17}, {TypeNVFP4, 40, "NVFP4", 64, 36},
		{TypeQ1_0, 41, "Q1_0", 128, 18}, {TypeQ2_0, 42, "Q2_0", 64, 18},
		{Type(4), 4, "Type(4)", 0, 0}, {Type(31), 31, "Type(31)", 0, 0}, {Type(43), 43, "Type(43)", 0, 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.id, uint32(tt.typ))
		assert.Equal(t, tt.name, tt.typ.String())
		assert.Equal(t, tt.size, tt.typ.BlockSize(), tt.name)
		assert.Equal(t, tt.bytes, tt.typ.BlockBytes(), tt.name)
		assert.Equal(t, tt.size != 0, tt.typ.Known(), tt.name)
		assert.Equal(t, tt.size > 1, tt.typ.Quantized(), tt.name)
	}
	s, ok := TypeQ8_0.Size(64)
	assert.True(t, ok)
	assert.Equal(t, int64(68), s)
	_, ok = TypeQ8_0.Size(33)
	assert.False(t, ok)
	_, ok = TypeF32.Size(math.MaxInt64 / 2)
	assert.False(t, ok)
	_, ok = Type(4).Size(1)
	assert.False(t, ok)
}

func TestValueAccessors(t *testing.T) {
	u, ok := Uint16(9).Uint()
	assert.True(t, ok)
	assert.Equal(t, uint64(9), u)
	_, ok = Int16(9).Uint()
	assert.False(t, ok)
	i, ok := Int8(-9).Int()
	assert.True(t, ok)
	assert.Equal(t, int64(-9), i)
	fl, ok := Float32(0.5).Float()
	assert.True(t, ok)
	assert.Equal(t, 0.5, fl)
	s, ok := String("x").Str()
	assert.True(t, ok)
	assert.Equal(t, "x", s)
	assert.False(t, Value{}.Valid())
	assert.True(t, Bool(false).Valid())
	assert.Equal(t, `string("a")`, String("a").String())
	assert.Equal(t, "uint32(32)", Uint32(32).String())
	assert.Equal(t, `[2]string{"a" "b"}`, Array([]string{"a", "b"}).String())
	assert.Equal(t, "[10]int32{0 1 2 3 4 5 6 7 ...}", Array([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).String())
	assert.Equal(t, "[1]array{[1]uint8{7}}", ArrayOfArrays([]Value{Array([]uint8{7})}).String())
	assert.Equal(t, "<invalid>", Value{}.String())
	assert.Equal(t, "float64", ValueFloat64.String())
	assert.Equal(t, "ValueType(13)", ValueType(13).String())
	assert.Equal(t, []float32{1}, Array([]float32{1}).Any())
	assert.Equal(t, 3, Array([]bool{true, true, false}).Len())
	assert.Equal(t, 0, Uint8(1).Len())
}

// TestStream checks that a streamed file equals the one WriteFile makes, and
// that out-of-order, wrongly sized or missing tensors fail without a file.
func TestStream(t *testing.T) {
	dir := t.TempDir()
	q := make([]byte, 34)
	q[0] = 0x3c
	f32 := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}
	var a, b Writer
	for _, w := range []*Writer{&a, &b} {
		require.NoError(t, w.AddKV(KeyArchitecture, String("test")))
	}
	require.NoError(t, a.AddTensor("q", TypeQ8_0, []int{1, 32}, q))
	require.NoError(t, a.AddTensor("f", TypeF32, []int{2}, f32))
	require.NoError(t, a.WriteFile(filepath.Join(dir, "a.gguf")))
	require.NoError(t, b.DeclareTensor("q", TypeQ8_0, []int{1, 32}))
	require.NoError(t, b.DeclareTensor("f", TypeF32, []int{2}))
	_, err := b.WriteTo(io.Discard)
	require.ErrorContains(t, err, "declared for a Stream")
	s, err := b.Create(filepath.Join(dir, "b.gguf"))
	require.NoError(t, err)
	require.NoError(t, s.WriteTensor("q", q))
	require.NoError(t, s.WriteTensor("f", f32))
	require.NoError(t, s.Close())
	wa, err := os.ReadFile(filepath.Join(dir, "a.gguf"))
	require.NoError(t, err)
	wb, err := os.ReadFile(filepath.Join(dir, "b.gguf"))
	require.NoError(t, err)
	assert.Equal(t, wa, wb)

	// The same file from tensors written in pieces.
	s, err = b.Create(filepath.Join(dir, "c.gguf"))
	require.NoError(t, err)
	for _, piece := range [][]byte{q[:1], q[1:20], nil, q[20:]} {
		require.NoError(t, s.Write("q", piece))
	}
	require.NoError(t, s.Write("f", f32[:4]))
	require.NoError(t, s.Write("f", f32[4:]))
	require.NoError(t, s.Close())
	wc, err := os.ReadFile(filepath.Join(dir, "c.gguf"))
	require.NoError(t, err)
	assert.Equal(t, wa, wc)
	require.NoError(t, os.Remove(filepath.Join(dir, "c.gguf")))

	for name, steps := range map[string]func(s *Stream) error{
		"order":   func(s *Stream) error { return s.WriteTensor("f", f32) },
		"size":    func(s *Stream) error { return s.WriteTensor("q", q[:10]) },
		"missing": func(s *Stream) error { return s.WriteTensor("q", q) },
		"short":   func(s *Stream) error { _ = s.WriteTensor("q", q); return s.Write("f", f32[:4]) },
		"long":    func(s *Stream) error { _ = s.Write("q", q[:30]); return s.Write("q", q[:5]) },
		"mixed":   func(s *Stream) error { _ = s.Write("q", q[:30]); return s.WriteTensor("q", q) },
	} {
		path := filepath.Join(dir, name+".gguf")
		s, err := b.Create(path)
		require.NoError(t, err)
		_ = steps(s)
		require.Error(t, s.Close(), name)
		_, err = os.Stat(path)
		assert.True(t, os.IsNotExist(err), name)
	}
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 2, "no temporary files left")
}

// TestWriterLocked checks that a second writer of the same path fails while
// a Stream is open, and that Abort leaves the old file and nothing else.
func TestWriterLocked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.gguf")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o666))
	var w Writer
	require.NoError(t, w.AddKV(KeyArchitecture, String("a")))
	require.NoError(t, w.DeclareTensor("t", TypeF32, []int{2}))
	s, err := w.Create(path)
	require.NoError(t, err)
	_, err = w.Create(path)
	require.ErrorIs(t, err, atomicfile.ErrLocked)
	require.ErrorIs(t, w.WriteFile(path), atomicfile.ErrLocked)
	s.Abort()
	assertOnly(t, dir, "out.gguf")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(got))
}

// TestValueSummary checks the report form of values: strings bare, scalars
// as numbers or bools, arrays as [N]type with the first elements that fit in
// 60 characters.
func TestValueSummary(t *testing.T) {
	long := make([]string, 100)
	for i := range long {
		long[i] = strings.Repeat("x", 70)
	}
	cases := []struct {
		v    Value
		want string
	}{
		{String("llama"), "llama"},
		{Uint32(15), "15"},
		{Int64(-3), "-3"},
		{Float32(1e-5), "1e-05"},
		{Float64(0.1), "0.1"},
		{Bool(true), "true"},
		{Array([]int32{1, 3, 6}), "[3]int32{1 3 6}"},
		{Array([]string{}), "[0]string{}"},
		{Array([]string{"a", "b"}), `[2]string{"a" "b"}`},
		// "[20]uint8{" is 10 characters and each "0 " 2: 24 of them would
		// fit, the 20 there are all do.
		{Array(make([]uint8, 20)), "[20]uint8{0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0}"},
		{Array(long), "[100]string"},
		{Value{}, "<invalid>"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.v.Summary(), "%v", c.v)
	}
}

// TestWriterRefusesNonUTF8Name: GGUF strings are UTF-8; a tensor name that
// is not is refused rather than written.
func TestWriterRefusesNonUTF8Name(t *testing.T) {
	var w Writer
	err := w.AddTensor("w\xff", TypeF32, []int{1}, make([]byte, 4))
	require.Error(t, err)
	require.ErrorContains(t, err, "not valid UTF-8")
	require.ErrorContains(t, err, `"w\xff"`)
}
