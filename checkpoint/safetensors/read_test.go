package safetensors

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

// build assembles a file by hand: the u64 length of hdr, hdr verbatim, then
// data.
func build(hdr string, data ...[]byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	b = append(b, hdr...)
	for _, d := range data {
		b = append(b, d...)
	}
	return b
}

// le32 returns the little-endian bytes of float32 values.
func le32(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// le16 returns the little-endian bytes of 16-bit codes.
func le16(vs ...uint16) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// opener opens the file content b, saved as name, in one of the reading
// modes.
type opener struct {
	mode string
	open func(t *testing.T, name string, b []byte) (*File, error)
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// noMmap forces Open to use the ReadAt fallback until the test ends.
func noMmap(t *testing.T) {
	old := mmapHook
	mmapHook = func(*os.File, int64) ([]byte, error) { return nil, errors.New("mmap disabled by test") }
	t.Cleanup(func() { mmapHook = old })
}

var openers = []opener{
	{"OpenReader", func(t *testing.T, name string, b []byte) (*File, error) {
		return OpenReader(bytes.NewReader(b), int64(len(b)), name)
	}},
	{"Open", func(t *testing.T, name string, b []byte) (*File, error) {
		return Open(writeTemp(t, name, b))
	}},
	{"OpenFallback", func(t *testing.T, name string, b []byte) (*File, error) {
		noMmap(t)
		return Open(writeTemp(t, name, b))
	}},
}

func TestDType(t *testing.T) {
	// Upstream order (Rust Dtype enum) and bit sizes.
	tests := []struct {
		d    DType
		name string
		bits int
	}{
		{Bool, "BOOL", 8}, {F4, "F4", 4}, {F6E2M3, "F6_E2M3", 6}, {F6E3M2, "F6_E3M2", 6},
		{U8, "U8", 8}, {I8, "I8", 8}, {F8E5M2, "F8_E5M2", 8}, {F8E4M3, "F8_E4M3", 8},
		{F8E8M0, "F8_E8M0", 8}, {F8E4M3FNUZ, "F8_E4M3FNUZ", 8}, {F8E5M2FNUZ, "F8_E5M2FNUZ", 8},
		{I16, "I16", 16}, {U16, "U16", 16}, {F16, "F16", 16}, {BF16, "BF16", 16},
		{I32, "I32", 32}, {U32, "U32", 32}, {F32, "F32", 32}, {C64, "C64", 64},
		{F64, "F64", 64}, {I64, "I64", 64}, {U64, "U64", 64},
	}
	require.Len(t, DTypes(), len(tests))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.d, DTypes()[i], "upstream order")
			assert.True(t, tt.d.Valid())
			assert.Equal(t, tt.name, tt.d.String())
			assert.Equal(t, tt.bits, tt.d.BitSize())
			d, err := ParseDType(tt.name)
			require.NoError(t, err)
			assert.Equal(t, tt.d, d)
			if i > 0 {
				assert.Less(t, tests[i-1].d, tt.d)
			}
		})
	}
	for _, bad := range []string{"", "f32", "F8_E4M3FN", "FLOAT32", "C128", "F32 "} {
		_, err := ParseDType(bad)
		assert.Error(t, err, bad)
	}
	for _, d := range []DType{0, 23, 255} {
		assert.False(t, d.Valid())
		assert.Equal(t, 0, d.BitSize())
		assert.Contains(t, d.String(), "DType(")
	}
}

// validFile is a hand-built file with metadata, several dtypes, a 0-d
// tensor, an empty tensor, a sub-byte tensor and header entries out of
// offset order, with the header padded by trailing spaces.
func validFile() []byte {
	hdr := `{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},` +
		`"__metadata__":{"format":"pt","note":"hand \"built\""},` +
		`"s":{"dtype":"F64","shape":[],"data_offsets":[22,30]},` +
		`"e":{"dtype":"I32","shape":[0,3],"data_offsets":[22,22]},` +
		`"h":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]},` +
		`"q":{"dtype":"F4","shape":[2,2],"data_offsets":[30,32],"extra":{"ignored":[1,2]}}}   `
	f64 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(-1.25))
	return build(hdr,
		le32(1, 2, 3, 4),
		le16(0x3f80, 0x4049, 0xc000), // 1, 3.140625, -2
		f64,
		[]byte{0x21, 0x43})
}

func TestReadValid(t *testing.T) {
	b := validFile()
	n := int64(binary.LittleEndian.Uint64(b))
	ds := 8 + n
	for _, o := range openers {
		t.Run(o.mode, func(t *testing.T) {
			f, err := o.open(t, "valid.safetensors", b)
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, o.mode == "Open", f.Mapped())
			assert.Equal(t, int64(len(b)), f.Size())
			assert.Equal(t, ds, f.DataOffset())
			assert.Equal(t, map[string]string{"format": "pt", "note": `hand "built"`}, f.Metadata())

			want := []TensorInfo{
				{Name: "w", DType: F32, Shape: []int{2, 2}, Offset: ds, Size: 16},
				{Name: "h", DType: BF16, Shape: []int{3}, Offset: ds + 16, Size: 6},
				{Name: "e", DType: I32, Shape: []int{0, 3}, Offset: ds + 22, Size: 0},
				{Name: "s", DType: F64, Shape: []int{}, Offset: ds + 22, Size: 8},
				{Name: "q", DType: F4, Shape: []int{2, 2}, Offset: ds + 30, Size: 2},
			}
			assert.Equal(t, want, f.Tensors())
			for _, w := range want {
				got, ok := f.Tensor(w.Name)
				require.True(t, ok)
				assert.Equal(t, w, got)
				data, err := f.Bytes(w.Name)
				require.NoError(t, err)
				assert.Equal(t, b[w.Offset:w.Offset+w.Size], data)
				assert.Len(t, data, int(w.Size))
			}
			assert.Equal(t, int64(4), want[0].NumElements())
			assert.Equal(t, int64(0), want[2].NumElements())
			assert.Equal(t, int64(1), want[3].NumElements())

			v, err := f.Float32s("w")
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2, 3, 4}, v)
			v, err = f.Float32s("h")
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 3.140625, -2}, v)
			v, err = f.Float32s("s")
			require.NoError(t, err)
			assert.Equal(t, []float32{-1.25}, v)

			_, err = f.Float32s("e")
			assert.ErrorContains(t, err, "cannot convert I32")
			_, err = f.Float32s("q")
			assert.ErrorContains(t, err, "cannot convert F4")
			_, ok := f.Tensor("nope")
			assert.False(t, ok)
			_, err = f.Bytes("nope")
			assert.ErrorIs(t, err, ErrNotFound)
			_, err = f.Float32s("nope")
			assert.ErrorIs(t, err, ErrNotFound)

			// Results are copies.
			ts := f.Tensors()
			ts[0].Shape[0] = 99
			md := f.Metadata()
			md["format"] = "x"
			assert.Equal(t, want, f.Tensors())
			assert.Equal(t, "pt", f.Metadata()["format"])

			require.NoError(t, f.Close())
			_, err = f.Bytes("w")
			assert.ErrorIs(t, err, os.ErrClosed)
			assert.ErrorIs(t, f.Close(), os.ErrClosed)
		})
	}
}

func TestReadMinimal(t *testing.T) {
	tests := []struct {
		name string
		file []byte
		n    int
	}{
		{"empty object", build("{}"), 0},
		{"padded", build("{}      "), 0},
		{"whitespace padding", build("{} \t\r\n"), 0},
		{"null metadata", build(`{"__metadata__":null}`), 0},
		{"empty metadata", build(`{"__metadata__":{}}`), 0},
		{"only empty tensors", build(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"C64","shape":[2,0],"data_offsets":[0,0]}}`), 2},
		{"unicode name", build(`{"p\u00e9\\/\n":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}}`, []byte{1}), 1},
		{"F6 whole bytes", build(`{"x":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[0,3]}}`, []byte{1, 2, 3}), 1},
		{"large zero dims", build(`{"x":{"dtype":"U64","shape":[0,18446744073709551615],"data_offsets":[0,0]}}`), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := OpenReader(bytes.NewReader(tt.file), int64(len(tt.file)), "min.safetensors")
			if tt.n < 0 { // documented divergence: dimensions must fit in int
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, "x", fe.Tensor)
				return
			}
			require.NoError(t, err)
			assert.Len(t, f.Tensors(), tt.n)
		})
	}
	b := build(`{"p\u00e9\\/\n":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}}`, []byte{1})
	f, err := OpenReader(bytes.NewReader(b), int64(len(b)), "")
	require.NoError(t, err)
	_, ok := f.Tensor("pé\\/\n")
	assert.True(t, ok)
}

func TestFloat32s(t *testing.T) {
	tests := []struct {
		dtype string
		data  []byte
		want  []float32
	}{
		{"F32", le32(1.5, -0.25), []float32{1.5, -0.25}},
		{"F64", binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.1)), math.Float64bits(-3)), []float32{0.1, -3}},
		{"F16", le16(0x3c00, 0xc000, 0x7c00, 0x0001), []float32{1, -2, float32(math.Inf(1)), 0x1p-24}},
		{"BF16", le16(0x3f80, 0xbfc0, 0x7f80, 0x0001), []float32{1, -1.5, float32(math.Inf(1)), math.Float32frombits(0x00010000)}},
		// OCP E4M3 (fn): bias 7, max 448, 0x7f NaN, no Inf.
		{"F8_E4M3", []byte{0x38, 0x7e, 0xb8, 0x01}, []float32{1, 448, -1, 0x1p-9}},
		// E5M2: bias 15, 0x7c Inf.
		{"F8_E5M2", []byte{0x3c, 0x7c, 0x7b, 0x01}, []float32{1, float32(math.Inf(1)), 57344, 0x1p-16}},
		// FNUZ: bias 8 / 16, 0x80 is the only NaN (checked below).
		{"F8_E4M3FNUZ", []byte{0x40, 0x7f}, []float32{1, 240}},
		{"F8_E5M2FNUZ", []byte{0x40, 0x7f}, []float32{1, 57344}},
		// E8M0: 2^(code-127).
		{"F8_E8M0", []byte{0x7f, 0x80, 0x00}, []float32{1, 2, 0x1p-127}},
	}
	for _, tt := range tests {
		t.Run(tt.dtype, func(t *testing.T) {
			d, err := ParseDType(tt.dtype)
			require.NoError(t, err)
			n := len(tt.data) * 8 / d.BitSize()
			hdr := `{"x":{"dtype":"` + tt.dtype + `","shape":[` + strconv.Itoa(n) + `],"data_offsets":[0,` + strconv.Itoa(len(tt.data)) + `]}}`
			b := build(hdr, tt.data)
			f, err := OpenReader(bytes.NewReader(b), int64(len(b)), "f.safetensors")
			require.NoError(t, err)
			got, err := f.Float32s("x")
			require.NoError(t, err)
			require.Len(t, got, len(tt.want))
			for i := range got {
				assert.Equal(t, math.Float32bits(tt.want[i]), math.Float32bits(got[i]), "element %d: %g", i, got[i])
			}
		})
	}
	for _, dt := range []string{"F8_E4M3FNUZ", "F8_E5M2FNUZ"} {
		b := build(`{"x":{"dtype":"`+dt+`","shape":[1],"data_offsets":[0,1]}}`, []byte{0x80})
		f, err := OpenReader(bytes.NewReader(b), int64(len(b)), "nan")
		require.NoError(t, err)
		v, err := f.Float32s("x")
		require.NoError(t, err)
		assert.True(t, math.IsNaN(float64(v[0])), dt)
	}
}

// badCase is an invalid file and what its error must say.
type badCase struct {
	name   string
	file   []byte
	tensor string // expected FormatError.Tensor
	offset int64  // expected FormatError.Offset, or -2 to skip the check
	reason string // substring of the message
}

func badCases() []badCase {
	n := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	t1 := func(dtype, shape, offs string) string {
		return `{"t":{"dtype":"` + dtype + `","shape":` + shape + `,"data_offsets":` + offs + `}}`
	}
	pad := func(k int) []byte { return make([]byte, k) }
	return []badCase{
		{"empty file", nil, "", 0, "too short"},
		{"short prefix", []byte{2, 0, 0}, "", 0, "too short"},
		{"header length beyond file", append(n(100), "{}"...), "", 0, "header length 100 exceeds the 2 bytes"},
		{"header length above limit", append(n(100_000_001), "{}"...), "", 0, "exceeds the limit"},
		{"header length max u64", append(n(math.MaxUint64), "{}"...), "", 0, "exceeds the limit"},
		{"zero header length", n(0), "", 8, "does not start with '{'"},
		{"leading space", build(" {}"), "", 8, "does not start with '{'"},
		{"array header", build("[]"), "", 8, "does not start with '{'"},
		{"invalid UTF-8", build("{\"a\xff\":1}"), "", 11, "not valid UTF-8"},
		{"truncated JSON", build(`{"t":{"dtype":`), "t", 22, "malformed header JSON"},
		{"missing colon", build(`{"t" 1}`), "t", -2, "malformed header JSON"},
		{"trailing garbage", build(`{}x`), "", 10, "unexpected data after"},
		{"second object", build(`{}{}`), "", -2, "unexpected data after"},
		{"trailing NUL padding", build("{}\x00\x00"), "", 10, "unexpected data after"},
		{"tensor not object", build(`{"t":[1]}`), "t", 13, "not an object"},
		{"duplicate tensor", build(`{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"t":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, pad(2)), "t", -2, "duplicate key"},
		{"duplicate metadata", build(`{"__metadata__":{},"__metadata__":{}}`), "", -2, "duplicate __metadata__"},
		{"duplicate metadata key", build(`{"__metadata__":{"a":"1","a":"2"}}`), "", -2, `duplicate key "a" in __metadata__`},
		{"metadata value number", build(`{"__metadata__":{"a":1}}`), "", 29, `value for key "a" is a number, not a string`},
		{"metadata value object", build(`{"__metadata__":{"a":{}}}`), "", -2, "is an object, not a string"},
		{"metadata value null", build(`{"__metadata__":{"a":null}}`), "", -2, "is null, not a string"},
		{"metadata array", build(`{"__metadata__":["a"]}`), "", -2, "__metadata__ is an array"},
		{"metadata string", build(`{"__metadata__":"a"}`), "", -2, "__metadata__ is a string"},
		{"duplicate field", build(`{"t":{"dtype":"U8","dtype":"U8","shape":[],"data_offsets":[0,1]}}`, pad(1)), "t", -2, `duplicate field "dtype"`},
		{"missing dtype", build(`{"t":{"shape":[1],"data_offsets":[0,1]}}`, pad(1)), "t", -2, `missing field "dtype"`},
		{"missing shape", build(`{"t":{"dtype":"U8","data_offsets":[0,1]}}`, pad(1)), "t", -2, `missing field "shape"`},
		{"missing offsets", build(`{"t":{"dtype":"U8","shape":[1]}}`, pad(1)), "t", -2, `missing field "data_offsets"`},
		{"unknown dtype", build(t1("F128", "[1]", "[0,16]"), pad(16)), "t", -2, `unknown dtype "F128"`},
		{"lowercase dtype", build(t1("f32", "[1]", "[0,4]"), pad(4)), "t", -2, `unknown dtype "f32"`},
		{"dtype number", build(`{"t":{"dtype":7,"shape":[1],"data_offsets":[0,1]}}`, pad(1)), "t", -2, "dtype is a number"},
		{"negative dim", build(t1("U8", "[-1]", "[0,0]")), "t", -2, "shape element -1 is not an integer"},
		{"float dim", build(t1("U8", "[2.0]", "[0,2]"), pad(2)), "t", -2, "shape element 2.0"},
		{"exponent dim", build(t1("U8", "[2e0]", "[0,2]"), pad(2)), "t", -2, "shape element 2e0"},
		{"huge dim", build(t1("U8", "[18446744073709551616]", "[0,0]")), "t", -2, "not an integer in [0, 2^64)"},
		{"shape string", build(t1("U8", `"2"`, "[0,2]"), pad(2)), "t", -2, "shape is a string"},
		{"shape nested", build(t1("U8", `[[2]]`, "[0,2]"), pad(2)), "t", -2, "shape element is an array"},
		{"offsets three", build(t1("U8", "[1]", "[0,1,1]"), pad(1)), "t", -2, "data_offsets has more than 2 elements, want 2"},
		{"offsets one", build(t1("U8", "[1]", "[1]"), pad(1)), "t", -2, "data_offsets has 1 elements, want 2"},
		{"offsets null", build(t1("U8", "[1]", "null"), pad(1)), "t", -2, "data_offsets is null"},
		{"offset beyond file", build(t1("U8", "[4]", "[0,4]"), pad(2)), "t", -2, "extend past the end of the file"},
		{"offset beyond u64 range", build(t1("U8", "[1]", "[18446744073709551615,0]")), "t", -2, "end before they begin"},
		{"reversed offsets alone", build(t1("U8", "[0]", "[4,0]"), pad(4)), "t", -2, "data_offsets [4, 0] end before they begin"},
		{"reversed after a tensor", build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"t":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}`, pad(8)), "t", -2, "data_offsets [8, 4] end before they begin"},
		{"begin beyond file", build(t1("U8", "[4]", "[100,104]"), pad(4)), "t", -2, "extend past the end of the file (the data buffer is 4 bytes)"},
		{"end before begin", build(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"t":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}}`, pad(1)), "t", -2, "end before they begin"},
		{"hole at start", build(t1("U8", "[2]", "[2,4]"), pad(4)), "t", -2, "hole of 2 bytes"},
		{"hole between", build(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"t":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}}`, pad(5)), "t", -2, "hole of 1 bytes after offset 2"},
		{"overlap", build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"t":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, pad(12)), "t", -2, `overlap tensor "a"`},
		{"same range", build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, pad(4)), "t", -2, `overlap tensor "a"`},
		{"byte count too small", build(t1("F32", "[2]", "[0,4]"), pad(4)), "t", -2, "needs 8 bytes, but data_offsets [0, 4] hold 4"},
		{"byte count too large", build(t1("F16", "[2,2]", "[0,9]"), pad(9)), "t", -2, "needs 8 bytes"},
		{"misaligned F4", build(t1("F4", "[3]", "[0,2]"), pad(2)), "t", -2, "not a whole number of bytes"},
		{"misaligned F6", build(t1("F6_E3M2", "[1]", "[0,1]"), pad(1)), "t", -2, "not a whole number of bytes"},
		{"shape overflow", build(t1("U8", "[4294967296,4294967296]", "[0,0]")), "t", -2, "overflows the element count"},
		{"shape overflow before zero", build(t1("U8", "[4294967296,4294967296,0]", "[0,0]")), "t", -2, "overflows the element count"},
		{"bits overflow", build(t1("F32", "[4611686018427387904]", "[0,0]")), "t", -2, "overflows the size in bits"},
		{"trailing data", build(t1("U8", "[2]", "[0,2]"), pad(3)), "", -2, "cover 2 bytes of the data buffer, but the file holds 3"},
		{"truncated data", build(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"t":{"dtype":"F32","shape":[2],"data_offsets":[2,10]}}`, pad(6)), "t", -2, "extend past the end of the file"},
		{"bytes but no tensors", build(`{}`, pad(1)), "", 10, "cover 0 bytes"},
	}
}

// badKinds is the sentinel errors.Is matches for the bad cases not
// ErrInvalid.
var badKinds = map[string]error{
	"empty file": ErrTruncated, "short prefix": ErrTruncated, "header length beyond file": ErrTruncated,
	"truncated JSON": ErrTruncated, "offset beyond file": ErrTruncated, "begin beyond file": ErrTruncated,
	"truncated data":            ErrTruncated,
	"header length above limit": ErrNotFormat, "header length max u64": ErrNotFormat,
	"zero header length": ErrNotFormat, "leading space": ErrNotFormat, "array header": ErrNotFormat,
}

func TestReadInvalid(t *testing.T) {
	names := map[string]bool{}
	for _, c := range badCases() {
		names[c.name] = true
	}
	for name := range badKinds {
		require.True(t, names[name], "badKinds names no case %q", name)
	}
	for _, o := range openers {
		t.Run(o.mode, func(t *testing.T) {
			for _, tt := range badCases() {
				t.Run(tt.name, func(t *testing.T) {
					const name = "bad.safetensors"
					f, err := o.open(t, name, tt.file)
					require.Error(t, err)
					assert.Nil(t, f)
					var fe *FormatError
					require.ErrorAs(t, err, &fe, "%v", err)
					assert.Contains(t, err.Error(), tt.reason)
					assert.Equal(t, tt.tensor, fe.Tensor)
					assert.Contains(t, fe.Path, name)
					assert.Contains(t, err.Error(), name)
					if tt.tensor != "" {
						assert.Contains(t, err.Error(), `tensor "`+tt.tensor+`"`)
					}
					if tt.offset != -2 {
						assert.Equal(t, tt.offset, fe.Offset)
					}
					assert.GreaterOrEqual(t, fe.Offset, int64(0))
					assert.LessOrEqual(t, fe.Offset, max(int64(len(tt.file)), 8))
					assert.Contains(t, err.Error(), "offset ")
					kind, ok := badKinds[tt.name]
					if !ok {
						kind = ErrInvalid
					}
					assert.ErrorIs(t, err, kind)
					assert.Equal(t, "safetensors", fe.Format)
				})
			}
		})
	}
}

func TestFormatErrorMessage(t *testing.T) {
	e := &FormatError{Format: formatName, Path: "m.safetensors", Tensor: "w", Offset: 120, Reason: "bad", Err: errors.New("cause")}
	assert.Equal(t, `safetensors: m.safetensors: tensor "w": offset 120: bad: cause`, e.Error())
	e = &FormatError{Format: formatName, Offset: -1, Reason: "bad"}
	assert.Equal(t, `safetensors: bad`, e.Error())
	long := strings.Repeat("é", 300)
	e = &FormatError{Format: formatName, Tensor: long, Offset: 0, Reason: "r"}
	assert.Less(t, len(e.Error()), 300)
}

// failingReaderAt serves a prefix of data and fails beyond it.
type failingReaderAt struct {
	data  []byte
	limit int64
}

func (r failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.limit {
		return 0, errors.New("disk on fire")
	}
	return copy(p, r.data[off:]), nil
}

func TestReadAtErrors(t *testing.T) {
	b := validFile()
	f, err := OpenReader(failingReaderAt{b, int64(len(b)) - 2}, int64(len(b)), "r.safetensors")
	require.NoError(t, err)
	_, err = f.Bytes("w")
	require.NoError(t, err)
	_, err = f.Bytes("q")
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "q", fe.Tensor)
	assert.ErrorContains(t, err, "disk on fire")

	_, err = OpenReader(failingReaderAt{b, 4}, int64(len(b)), "r.safetensors")
	require.ErrorAs(t, err, &fe)
	assert.ErrorContains(t, err, "reading header length")

	// A reader shorter than the size it claims.
	_, err = OpenReader(bytes.NewReader(b[:20]), int64(len(b)), "short.safetensors")
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "none.safetensors"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, "none.safetensors")
}

// TestRelease checks that Release leaves the data readable.
func TestRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.safetensors")
	data := make([]byte, 3*4096+100)
	for i := range data {
		data[i] = byte(i * 7)
	}
	require.NoError(t, WriteFile(path, []Tensor{{Name: "x", DType: U8, Shape: []int{len(data)}, Data: data}}, nil))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	f.Release("x")
	f.Release("nope")
	b, err := f.Bytes("x")
	require.NoError(t, err)
	assert.Equal(t, data, b)
	// Ranges, clipped to the tensor, leave the bytes readable.
	for _, r := range [][2]int64{{0, 5000}, {100, 9000}, {-10, 1 << 40}, {int64(len(data)), 10}, {50, -3}} {
		f.ReleaseRange("x", r[0], r[1])
		assert.Equal(t, data, b, "after ReleaseRange(%d, %d)", r[0], r[1])
	}
	f.ReleaseRange("nope", 0, 10)
}
