package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

// rawFile builds a .npy file with the given version and header text used
// verbatim (no padding added), followed by payload.
func rawFile(major byte, text string, payload []byte) []byte {
	b := []byte(magic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(text)))
	}
	b = append(b, text...)
	return append(b, payload...)
}

// payloadOffset returns the offset of the first payload byte of a file
// written by this package (or NumPy).
func payloadOffset(t *testing.T, file []byte) int {
	t.Helper()
	_, n, err := ReadHeader(bytes.NewReader(file))
	require.NoError(t, err)
	return int(n)
}

func TestDType(t *testing.T) {
	tests := []struct {
		dt    DType
		name  string
		size  int
		descr string
	}{
		{Bool, "bool", 1, "|b1"},
		{Uint8, "uint8", 1, "|u1"},
		{Uint16, "uint16", 2, "<u2"},
		{Uint32, "uint32", 4, "<u4"},
		{Uint64, "uint64", 8, "<u8"},
		{Int8, "int8", 1, "|i1"},
		{Int16, "int16", 2, "<i2"},
		{Int32, "int32", 4, "<i4"},
		{Int64, "int64", 8, "<i8"},
		{Float16, "float16", 2, "<f2"},
		{Float32, "float32", 4, "<f4"},
		{Float64, "float64", 8, "<f8"},
		{0, "DType(0)", 0, ""},
		{99, "DType(99)", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.name, tt.dt.String())
			assert.Equal(t, tt.size, tt.dt.Size())
			assert.Equal(t, tt.descr, tt.dt.Descr())
			assert.Equal(t, tt.size != 0, tt.dt.Valid())
			if tt.dt.Valid() {
				dt, big, err := ParseDescr(tt.descr)
				require.NoError(t, err)
				assert.Equal(t, tt.dt, dt)
				assert.False(t, big)
			}
		})
	}
}

func TestParseDescr(t *testing.T) {
	tests := []struct {
		descr   string
		dt      DType
		big     bool
		wantErr string
	}{
		{descr: "<f4", dt: Float32},
		{descr: ">f4", dt: Float32, big: true},
		{descr: "=f8", dt: Float64, big: nativeBigEndian},
		{descr: "|f8", dt: Float64, big: nativeBigEndian},
		{descr: "i2", dt: Int16, big: nativeBigEndian},
		{descr: ">u1", dt: Uint8}, // byte order is meaningless for one byte
		{descr: ">b1", dt: Bool},  // likewise
		{descr: ">f2", dt: Float16, big: true},
		{descr: "|O", wantErr: "object dtype"},
		{descr: "|V8", wantErr: "structured (void) dtype"},
		{descr: "<c8", wantErr: "complex dtype"},
		{descr: "<U3", wantErr: "string dtype"},
		{descr: "|S3", wantErr: "string dtype"},
		{descr: "<M8[ns]", wantErr: "datetime dtype"},
		{descr: "<f16", wantErr: "unsupported dtype descr"},
		{descr: "<f4,<i4", wantErr: "unsupported dtype descr"},
		{descr: "float32", wantErr: "unsupported dtype descr"},
		{descr: "", wantErr: "invalid dtype descr"},
		{descr: "<", wantErr: "invalid dtype descr"},
	}
	for _, tt := range tests {
		t.Run(tt.descr, func(t *testing.T) {
			dt, big, err := ParseDescr(tt.descr)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.True(t, strings.HasPrefix(err.Error(), "npy: "), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.dt, dt)
			assert.Equal(t, tt.big, big)
		})
	}
}

// roundTrip writes n pseudo-random elements of type T with WriteSlice and
// checks that Write produces the same bytes and Read returns them.
func roundTrip[T Element](t *testing.T, shape []int) {
	t.Helper()
	dt := dtypeOf[T]()
	n, _, err := shapeSize(shape, dt.Size())
	require.NoError(t, err)
	raw := randomPayload(dt, n)
	vals := make([]T, n)
	_, err = binary.Decode(raw, binary.LittleEndian, vals)
	require.NoError(t, err)

	var typed, untyped bytes.Buffer
	require.NoError(t, WriteSlice(&typed, shape, vals))
	require.NoError(t, Write(&untyped, dt, shape, raw))
	require.Equal(t, untyped.Bytes(), typed.Bytes(), "WriteSlice and Write disagree")
	checkRead(t, typed.Bytes(), dt, shape, raw)
}

func randomPayload(dt DType, n int) []byte {
	r := rand.New(rand.NewPCG(uint64(dt), uint64(n)))
	raw := make([]byte, n*dt.Size())
	for i := range raw {
		raw[i] = byte(r.Uint32())
		if dt == Bool {
			raw[i] &= 1
		}
	}
	return raw
}

func checkRead(t *testing.T, file []byte, dt DType, shape []int, raw []byte) {
	t.Helper()
	assert.Equal(t, 0, payloadOffset(t, file)%arrayAlign, "payload not 64-byte aligned")
	assert.Equal(t, byte(1), file[6], "major version")
	a, err := Read(bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, Header{DType: dt, Shape: append([]int{}, shape...)}, a.Header)
	assert.Equal(t, raw, a.Data)
	assert.Equal(t, len(raw)/dt.Size(), a.Len())
}

func TestRoundTrip(t *testing.T) {
	shapes := [][]int{{}, {0}, {5}, {2, 3}, {2, 3, 4}, {3, 0, 2}}
	for _, shape := range shapes {
		name := formatShape(shape)
		t.Run("bool"+name, func(t *testing.T) { roundTrip[bool](t, shape) })
		t.Run("uint8"+name, func(t *testing.T) { roundTrip[uint8](t, shape) })
		t.Run("uint16"+name, func(t *testing.T) { roundTrip[uint16](t, shape) })
		t.Run("uint32"+name, func(t *testing.T) { roundTrip[uint32](t, shape) })
		t.Run("uint64"+name, func(t *testing.T) { roundTrip[uint64](t, shape) })
		t.Run("int8"+name, func(t *testing.T) { roundTrip[int8](t, shape) })
		t.Run("int16"+name, func(t *testing.T) { roundTrip[int16](t, shape) })
		t.Run("int32"+name, func(t *testing.T) { roundTrip[int32](t, shape) })
		t.Run("int64"+name, func(t *testing.T) { roundTrip[int64](t, shape) })
		t.Run("float32"+name, func(t *testing.T) { roundTrip[float32](t, shape) })
		t.Run("float64"+name, func(t *testing.T) { roundTrip[float64](t, shape) })
		t.Run("float16"+name, func(t *testing.T) {
			n, _, err := shapeSize(shape, 2)
			require.NoError(t, err)
			raw := randomPayload(Float16, n)
			bits := make([]uint16, n)
			for i := range bits {
				bits[i] = binary.LittleEndian.Uint16(raw[2*i:])
			}
			var typed, untyped bytes.Buffer
			require.NoError(t, WriteFloat16(&typed, shape, bits))
			require.NoError(t, Write(&untyped, Float16, shape, raw))
			require.Equal(t, untyped.Bytes(), typed.Bytes())
			checkRead(t, typed.Bytes(), Float16, shape, raw)
		})
	}
}

func TestWriteHeaderExact(t *testing.T) {
	tests := []struct {
		name  string
		dt    DType
		shape []int
		// header is the exact bytes NumPy writes, derived by hand from
		// numpy/lib/format.py: dict text, 21-len(str(shape[0])) growth
		// spaces, padding to a 64-byte boundary, newline.
		header string
	}{
		{
			name:  "f4 (2, 3)",
			dt:    Float32,
			shape: []int{2, 3},
			// 10-byte prefix + 59-byte dict + 20 growth + 38 pad + '\n' = 128.
			header: "\x93NUMPY\x01\x00\x76\x00" +
				"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
				strings.Repeat(" ", 20+38) + "\n",
		},
		{
			name:  "f8 ()",
			dt:    Float64,
			shape: []int{},
			// 10 + 55 + 0 growth + 62 pad + 1 = 128.
			header: "\x93NUMPY\x01\x00\x76\x00" +
				"{'descr': '<f8', 'fortran_order': False, 'shape': (), }" +
				strings.Repeat(" ", 62) + "\n",
		},
		{
			name:  "u1 (12345,)",
			dt:    Uint8,
			shape: []int{12345},
			// 10 + 61 + 16 growth + 40 pad + 1 = 128.
			header: "\x93NUMPY\x01\x00\x76\x00" +
				"{'descr': '|u1', 'fortran_order': False, 'shape': (12345,), }" +
				strings.Repeat(" ", 16+40) + "\n",
		},
		{
			// The growth spaces push the header past the 128-byte mark:
			// 10 + 98-byte dict + 20 growth + 63 pad + 1 = 192.
			name:  "u1 fifteen ones",
			dt:    Uint8,
			shape: ones(15),
			header: "\x93NUMPY\x01\x00\xb6\x00" +
				"{'descr': '|u1', 'fortran_order': False, 'shape': (" +
				strings.Repeat("1, ", 14) + "1), }" +
				strings.Repeat(" ", 20+63) + "\n",
		},
		{
			// Already aligned before padding: NumPy still pads a full 64.
			// 10 + 161-byte dict + 20 growth + 64 pad + 1 = 256.
			name:  "u1 thirty-six ones",
			dt:    Uint8,
			shape: ones(36),
			header: "\x93NUMPY\x01\x00\xf6\x00" +
				"{'descr': '|u1', 'fortran_order': False, 'shape': (" +
				strings.Repeat("1, ", 35) + "1), }" +
				strings.Repeat(" ", 20+64) + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, nbytes, err := shapeSize(tt.shape, tt.dt.Size())
			require.NoError(t, err)
			data := make([]byte, nbytes)
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, tt.dt, tt.shape, data))
			require.Zero(t, len(tt.header)%arrayAlign, "bad test case")
			assert.Equal(t, tt.header, buf.String()[:len(tt.header)])
			assert.Equal(t, len(tt.header)+nbytes, buf.Len())
			assert.Equal(t, n*tt.dt.Size(), nbytes)
		})
	}
}

func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

func TestWriteAlignment(t *testing.T) {
	// Whatever the header length, the payload starts on a 64-byte
	// boundary and the header ends with a newline.
	for ndim := 0; ndim < 40; ndim++ {
		for _, d := range []int{0, 1, 7, 1000, math.MaxInt32} {
			shape := make([]int, ndim)
			for i := range shape {
				shape[i] = 1
			}
			if ndim > 0 {
				shape[0] = d
			}
			hdr, _, _, err := encodeHeader(Uint8, shape)
			require.NoError(t, err)
			assert.Zero(t, len(hdr)%arrayAlign, "shape %v", shape)
			assert.Equal(t, byte('\n'), hdr[len(hdr)-1])
			h, n, err := ReadHeader(bytes.NewReader(hdr))
			require.NoError(t, err)
			assert.Equal(t, int64(len(hdr)), n)
			assert.Equal(t, shape, h.Shape)
		}
	}
}

func TestWriteVersion2(t *testing.T) {
	// 30000 unit dimensions need a header longer than 65535 bytes.
	shape := ones(30000)
	var buf bytes.Buffer
	require.NoError(t, WriteSlice(&buf, shape, []int16{-7}))
	file := buf.Bytes()
	assert.Equal(t, []byte{2, 0}, file[6:8])
	hlen := binary.LittleEndian.Uint32(file[8:12])
	assert.Greater(t, hlen, uint32(math.MaxUint16))
	assert.Equal(t, 12+int(hlen)+2, len(file))
	assert.Zero(t, (12+hlen)%arrayAlign)

	a, err := Read(bytes.NewReader(file))
	require.NoError(t, err)
	assert.Equal(t, shape, a.Shape)
	assert.Equal(t, []byte{0xf9, 0xff}, a.Data)
}

func TestGolden(t *testing.T) {
	f16 := func(bits ...uint16) []float32 {
		out := make([]float32, len(bits))
		for i, b := range bits {
			out[i] = float16.Frombits(b).Float32()
		}
		return out
	}
	tests := []struct {
		file   string
		header Header
		data   []byte    // expected little-endian payload
		floats []float32 // expected Float32s, if a float dtype
		exact  bool      // our Write reproduces the file byte for byte
	}{
		{
			file:   "f4_2x3.npy",
			header: Header{DType: Float32, Shape: []int{2, 3}},
			data:   le(float32(0), float32(1), float32(2), float32(3), float32(4), float32(5)),
			floats: []float32{0, 1, 2, 3, 4, 5},
			exact:  true,
		},
		{
			file:   "u2_be_5.npy",
			header: Header{DType: Uint16, BigEndian: true, Shape: []int{5}},
			data:   le(uint16(1), uint16(2), uint16(256), uint16(65535), uint16(0)),
		},
		{
			file:   "f4_be_2.npy",
			header: Header{DType: Float32, BigEndian: true, Shape: []int{2}},
			data:   le(float32(1.5), float32(-0.25)),
			floats: []float32{1.5, -0.25},
		},
		{
			file:   "f2_4.npy",
			header: Header{DType: Float16, Shape: []int{4}},
			data:   le(uint16(0x3C00), uint16(0xC000), uint16(0x3800), uint16(0x0001)),
			floats: f16(0x3C00, 0xC000, 0x3800, 0x0001),
			exact:  true,
		},
		{
			file:   "b1_scalar.npy",
			header: Header{DType: Bool, Shape: []int{}},
			data:   []byte{1},
			exact:  true,
		},
		{
			file:   "i8_fortran_2x3.npy",
			header: Header{DType: Int64, Fortran: true, Shape: []int{2, 3}},
			data:   le(int64(0), int64(3), int64(1), int64(4), int64(2), int64(5)),
		},
		{
			file:   "f8_v2_empty.npy",
			header: Header{DType: Float64, Shape: []int{0, 3}},
			data:   []byte{},
			floats: []float32{},
		},
		{
			file:   "i2_v3.npy",
			header: Header{DType: Int16, Shape: []int{2}},
			data:   le(int16(-1), int16(300)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			file, err := os.ReadFile(path)
			require.NoError(t, err)

			a, err := ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.header, a.Header)
			assert.Equal(t, tt.data, a.Data)

			b, err := Read(bytes.NewReader(file))
			require.NoError(t, err)
			assert.Equal(t, a, b, "Read and ReadFile disagree")

			if tt.floats != nil {
				got, err := a.Float32s()
				require.NoError(t, err)
				assert.Equal(t, tt.floats, got)
			}
			if tt.exact {
				var buf bytes.Buffer
				require.NoError(t, Write(&buf, a.DType, a.Shape, a.Data))
				assert.Equal(t, file, buf.Bytes())
			}
		})
	}
}

// le encodes values little-endian.
func le(vals ...any) []byte {
	var b []byte
	for _, v := range vals {
		var err error
		b, err = binary.Append(b, binary.LittleEndian, v)
		if err != nil {
			panic(err)
		}
	}
	return b
}

func TestBigEndian(t *testing.T) {
	tests := []struct {
		descr   string
		dt      DType
		payload []byte // big-endian on disk
		want    []byte // little-endian after Read
	}{
		{">f4", Float32, []byte{0x3f, 0x80, 0, 0, 0xc0, 0x20, 0, 0}, le(float32(1), float32(-2.5))},
		{">u2", Uint16, []byte{0x01, 0x02, 0xff, 0x00}, le(uint16(0x0102), uint16(0xff00))},
		{">i8", Int64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 1}, le(int64(-2), int64(1))},
		{">f8", Float64, []byte{0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18, 0, 0, 0, 0, 0, 0, 0, 0}, le(math.Pi, 0.0)},
		{">f2", Float16, []byte{0x3c, 0x00, 0xc0, 0x00}, le(uint16(0x3c00), uint16(0xc000))},
		{">u1", Uint8, []byte{1, 2}, []byte{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.descr, func(t *testing.T) {
			n := len(tt.payload) / tt.dt.Size()
			file := rawFile(1, "{'descr': '"+tt.descr+"', 'fortran_order': False, 'shape': ("+
				string(rune('0'+n))+",), }\n", tt.payload)
			a, err := Read(bytes.NewReader(file))
			require.NoError(t, err)
			assert.Equal(t, tt.dt, a.DType)
			assert.Equal(t, tt.dt.Size() > 1, a.BigEndian)
			assert.Equal(t, tt.want, a.Data)
		})
	}

	a, err := ReadFile(filepath.Join("testdata", "f4_be_2.npy"))
	require.NoError(t, err)
	got, err := a.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5, -0.25}, got)
}

func TestHeaderDict(t *testing.T) {
	tests := []struct {
		name    string
		version byte
		text    string
		want    Header
		wantErr string
	}{
		{
			name: "numpy canonical", version: 1,
			text: "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n",
			want: Header{DType: Float32, Shape: []int{2, 3}},
		},
		{
			name: "keys in any order, double quotes, no trailing comma", version: 1,
			text: `{"shape": (4,), "descr": "<i4", "fortran_order": True}`,
			want: Header{DType: Int32, Fortran: true, Shape: []int{4}},
		},
		{
			name: "whitespace and newlines everywhere", version: 1,
			text: "\n  {\n\t'descr' :\n '<u8' ,\r\n 'fortran_order':False,'shape':( 1 ,2 , 3 , ) , }\n\n   ",
			want: Header{DType: Uint64, Shape: []int{1, 2, 3}},
		},
		{
			name: "empty shape", version: 1,
			text: "{'descr': '|b1', 'fortran_order': False, 'shape': (), }",
			want: Header{DType: Bool, Shape: []int{}},
		},
		{
			name: "empty shape with spaces", version: 1,
			text: "{'descr': '|b1', 'fortran_order': False, 'shape': (  ), }",
			want: Header{DType: Bool, Shape: []int{}},
		},
		{
			name: "python 2 long literals in 1.0", version: 1,
			text: "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }",
			want: Header{DType: Float64, Shape: []int{2, 3}},
		},
		{
			name: "python 2 long literals rejected in 3.0", version: 3,
			text:    "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }",
			wantErr: "invalid integer dimension",
		},
		{
			name: "format 2.0", version: 2,
			text: "{'descr': '>i2', 'fortran_order': True, 'shape': (3, 1), }\n",
			want: Header{DType: Int16, BigEndian: true, Fortran: true, Shape: []int{3, 1}},
		},
		{
			name: "format 3.0 utf-8 padding", version: 3,
			text:    "{'descr': '<f2', 'fortran_order': False, 'shape': (7,), }\u00a0\n",
			wantErr: "unexpected",
		},
		{
			name: "format 3.0", version: 3,
			text: "{'descr': '<f2', 'fortran_order': False, 'shape': (7,), }\n",
			want: Header{DType: Float16, Shape: []int{7}},
		},
		{
			name: "zero with huge dims is still too big", version: 1,
			text:    "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4), }",
			wantErr: "too large",
		},
		{name: "not a dict", version: 1, text: "[1, 2]", wantErr: "expected '{'"},
		{name: "empty header", version: 1, text: "", wantErr: "expected '{'"},
		{name: "empty dict", version: 1, text: "{}", wantErr: `missing key "descr"`},
		{name: "unclosed dict", version: 1, text: "{'descr': '<f4'", wantErr: "expected ',' or '}'"},
		{name: "missing comma", version: 1, text: "{'descr': '<f4' 'fortran_order': False, 'shape': ()}", wantErr: "expected ',' or '}'"},
		{name: "missing colon", version: 1, text: "{'descr' '<f4'}", wantErr: "expected ':'"},
		{name: "bare key", version: 1, text: "{descr: '<f4'}", wantErr: "expected dict key string"},
		{name: "double comma", version: 1, text: "{'descr': '<f4',, }", wantErr: "expected dict key string"},
		{name: "unterminated string", version: 1, text: "{'descr: '<f4'}", wantErr: `unknown key "descr: "`},
		{name: "unterminated string at end", version: 1, text: "{'descr': '<f4", wantErr: "unterminated descr string"},
		{name: "escape", version: 1, text: `{'descr': '<f\4'}`, wantErr: "escape sequences"},
		{name: "trailing garbage", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", wantErr: `unexpected "x" after header dict`},
		{name: "missing shape", version: 1, text: "{'descr': '<f4', 'fortran_order': False}", wantErr: `missing key "shape"`},
		{name: "missing fortran_order", version: 1, text: "{'descr': '<f4', 'shape': ()}", wantErr: `missing key "fortran_order"`},
		{name: "unknown key", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", wantErr: `unknown key "x"`},
		{name: "duplicate key", version: 1, text: "{'descr': '<f4', 'descr': '<f4'}", wantErr: `duplicate key "descr"`},
		{name: "structured descr", version: 1, text: "{'descr': [('x', '<f4'), ('y', '<i4')], 'fortran_order': False, 'shape': (2,), }", wantErr: "structured dtypes are not supported"},
		{name: "void descr", version: 1, text: "{'descr': '|V8', 'fortran_order': False, 'shape': (2,), }", wantErr: "structured (void) dtype"},
		{name: "object descr", version: 1, text: "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", wantErr: "object dtype"},
		{name: "unknown descr", version: 1, text: "{'descr': '<x4', 'fortran_order': False, 'shape': (2,), }", wantErr: "unsupported dtype descr"},
		{name: "fortran_order int", version: 1, text: "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", wantErr: "fortran_order must be True or False"},
		{name: "fortran_order lowercase", version: 1, text: "{'descr': '<f4', 'fortran_order': false, 'shape': (2,), }", wantErr: "fortran_order must be True or False"},
		{name: "fortran_order prefix", version: 1, text: "{'descr': '<f4', 'fortran_order': Truex, 'shape': (2,), }", wantErr: "fortran_order must be True or False"},
		{name: "shape list", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", wantErr: "shape must be a tuple, found a list"},
		{name: "shape int", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': 5, }", wantErr: "shape must be a tuple"},
		{name: "shape without comma", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': (5), }", wantErr: "shape (5) is an integer, not a tuple"},
		{name: "shape lone comma", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': (,), }", wantErr: "expected an integer dimension"},
		{name: "shape unclosed", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", wantErr: "expected ',' or ')' in shape"},
		{name: "negative dim", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", wantErr: "negative dimension -1"},
		{name: "float dim", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", wantErr: "invalid integer dimension"},
		{name: "hex dim", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': (0x10,), }", wantErr: "invalid integer dimension"},
		{name: "dim overflows int", version: 1, text: "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", wantErr: "dimension 99999999999999999999 overflows int"},
		{name: "element count overflows", version: 1, text: "{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", wantErr: "too large"},
		{name: "byte size overflows", version: 1, text: "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", wantErr: "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := rawFile(tt.version, tt.text, nil)
			h, n, err := ReadHeader(bytes.NewReader(file))
			if tt.wantErr != "" {
				require.Error(t, err)
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
				assert.Contains(t, fe.Reason, tt.wantErr)
				assert.GreaterOrEqual(t, fe.Offset, int64(10))
				assert.LessOrEqual(t, fe.Offset, int64(len(file)))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, h)
			assert.Equal(t, int64(len(file)), n)
		})
	}
}

func TestReadHeaderLeavesPayload(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("testdata", "f4_2x3.npy"))
	require.NoError(t, err)
	r := bytes.NewReader(file)
	h, n, err := ReadHeader(r)
	require.NoError(t, err)
	assert.Equal(t, int64(128), n)
	assert.Equal(t, Header{DType: Float32, Shape: []int{2, 3}}, h)
	assert.Equal(t, 24, r.Len())
}

func TestFortranFlag(t *testing.T) {
	a, err := ReadFile(filepath.Join("testdata", "i8_fortran_2x3.npy"))
	require.NoError(t, err)
	assert.True(t, a.Fortran)
	assert.Equal(t, []int{2, 3}, a.Shape)
	// The column-major payload is returned untransposed.
	assert.Equal(t, le(int64(0), int64(3), int64(1), int64(4), int64(2), int64(5)), a.Data)
}

func TestBadInput(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "f4_2x3.npy"))
	require.NoError(t, err)
	header := good[:128]
	tests := []struct {
		name      string
		input     []byte
		reason    string
		offset    int64 // checked for Read; -1 to skip
		truncated bool  // errors.Is(err, io.ErrUnexpectedEOF) and ErrTruncated
		kind      error // the sentinel errors.Is matches if not truncated; nil: ErrInvalid
	}{
		{name: "empty file", input: nil, reason: "empty input", offset: 0, truncated: true},
		{name: "bad magic", input: []byte("\x93NUMPX\x01\x00\x00\x00"), reason: "bad magic", offset: 0, kind: ErrNotFormat},
		{name: "not npy", input: []byte("PK\x03\x04 this is a zip"), reason: "bad magic", offset: 0, kind: ErrNotFormat},
		{name: "short magic", input: []byte("\x93NU"), reason: "truncated magic", offset: 3, truncated: true},
		{name: "no version", input: []byte("\x93NUMPY\x01"), reason: "truncated format version", offset: 7, truncated: true},
		{name: "unsupported major", input: []byte("\x93NUMPY\x04\x00\x00\x00"), reason: "unsupported format version 4.0", offset: 6, kind: ErrUnsupported},
		{name: "unsupported minor", input: []byte("\x93NUMPY\x01\x01\x00\x00"), reason: "unsupported format version 1.1", offset: 6, kind: ErrUnsupported},
		{name: "version zero", input: []byte("\x93NUMPY\x00\x00\x00\x00"), reason: "unsupported format version 0.0", offset: 6, kind: ErrUnsupported},
		{name: "short header length", input: []byte("\x93NUMPY\x02\x00\x10\x00"), reason: "truncated header length", offset: 10, truncated: true},
		{name: "header length beyond file", input: append(append([]byte{}, good[:8]...), 0xff, 0x00, '{'), reason: "truncated header: length field claims 255 bytes, input has 1", offset: 11, truncated: true},
		{name: "header length over limit", input: []byte("\x93NUMPY\x02\x00\xff\xff\xff\xff{"), reason: "header length 4294967295 exceeds the limit", offset: 8, kind: ErrTooLarge},
		{name: "malformed dict", input: rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3) ", nil), reason: "expected ',' or '}'", offset: -1},
		{name: "missing key", input: rawFile(1, "{'descr': '<f4', 'shape': (2, 3)}", nil), reason: `missing key "fortran_order"`, offset: 10 + 33},
		{name: "structured descr", input: rawFile(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}", nil), reason: "structured dtypes are not supported", offset: 10 + 10, kind: ErrUnsupported},
		{name: "negative dim", input: rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", nil), reason: "negative dimension -3", offset: 10 + 54},
		{name: "shape overflow", input: rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3037000500, 3037000500)}", nil), reason: "too large", offset: -1},
		{name: "invalid utf-8 in 3.0", input: rawFile(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\xff", nil), reason: "not valid UTF-8", offset: 12},
		{name: "payload shorter than claimed", input: good[:len(good)-3], reason: "truncated payload: header needs 24 bytes, input has 21", offset: 149, truncated: true},
		{name: "no payload", input: header, reason: "truncated payload: header needs 24 bytes, input has 0", offset: 128, truncated: true},
		{name: "trailing bytes", input: append(append([]byte{}, good...), 0, 0), reason: "unexpected trailing bytes after payload", offset: 152},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Read(bytes.NewReader(tt.input))
			require.Error(t, err)
			assert.Nil(t, a)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Contains(t, fe.Reason, tt.reason)
			assert.Empty(t, fe.Path)
			if tt.offset >= 0 {
				assert.Equal(t, tt.offset, fe.Offset, err.Error())
			}
			assert.Equal(t, tt.truncated, errors.Is(err, io.ErrUnexpectedEOF), err.Error())
			kind := tt.kind
			switch {
			case tt.truncated:
				kind = ErrTruncated
			case kind == nil:
				kind = ErrInvalid
			}
			assert.ErrorIs(t, err, kind)
			assert.Equal(t, "npy", fe.Format)
			assert.True(t, strings.HasPrefix(err.Error(), "npy: offset "), err.Error())

			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".npy")
			require.NoError(t, os.WriteFile(path, tt.input, 0o644))
			a, err = ReadFile(path)
			require.Error(t, err)
			assert.Nil(t, a)
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, path, fe.Path)
			assert.Contains(t, err.Error(), "npy: "+path+": offset ")
			assert.Contains(t, fe.Reason, tt.reason)
			assert.Equal(t, tt.truncated, errors.Is(err, io.ErrUnexpectedEOF), err.Error())
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.npy")
	_, err := ReadFile(path)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), path)
}

// failingReader returns its data and then a non-EOF error.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadIOError(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "f4_2x3.npy"))
	require.NoError(t, err)
	boom := errors.New("boom")
	for _, cut := range []int{0, 4, 9, 60, 130, len(good)} {
		_, err := Read(&failingReader{data: good[:cut], err: boom})
		require.Error(t, err)
		assert.ErrorIs(t, err, boom, "cut at %d", cut)
		var fe *FormatError
		assert.ErrorAs(t, err, &fe)
	}
}

// allocated returns the bytes allocated while running f.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestLyingHeaderDoesNotAllocate(t *testing.T) {
	// The header claims 8 TiB of float64 but only 16 bytes follow.
	file := rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }\n", make([]byte, 16))

	var err error
	n := allocated(func() { _, err = Read(bytes.NewReader(file)) })
	require.Error(t, err)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), "truncated payload: header needs 8796093022208 bytes, input has 16")
	assert.Less(t, n, uint64(4<<20), "Read allocated %d bytes", n)

	path := filepath.Join(t.TempDir(), "liar.npy")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	n = allocated(func() { _, err = ReadFile(path) })
	require.Error(t, err)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), path)
	assert.Less(t, n, uint64(1<<20), "ReadFile allocated %d bytes", n)
}

func TestReadLargeStream(t *testing.T) {
	// Larger than the initial read chunk, through a reader that returns
	// short reads, to exercise buffer growth.
	vals := make([]float64, 3*readChunk/8+5)
	for i := range vals {
		vals[i] = float64(i) * 0.5
	}
	var buf bytes.Buffer
	require.NoError(t, WriteSlice(&buf, []int{len(vals)}, vals))
	a, err := Read(io.MultiReader(bytes.NewReader(buf.Bytes()[:1000]), bytes.NewReader(buf.Bytes()[1000:])))
	require.NoError(t, err)
	assert.Equal(t, le(vals), a.Data)
	assert.Equal(t, len(vals), a.Len())
}

// countingWriter counts Write calls.
type countingWriter struct {
	bytes.Buffer
	calls int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.calls++
	return w.Buffer.Write(p)
}

func TestWriteChunked(t *testing.T) {
	vals := make([]uint32, 3*writeChunk/4+1) // just over three chunks
	for i := range vals {
		vals[i] = uint32(i)
	}
	var w countingWriter
	require.NoError(t, WriteSlice(&w, []int{len(vals)}, vals))
	assert.LessOrEqual(t, w.calls, 5)
	a, err := Read(&w.Buffer)
	require.NoError(t, err)
	assert.Equal(t, le(vals), a.Data)

	var small countingWriter
	require.NoError(t, WriteSlice(&small, []int{2, 2}, []int8{1, 2, 3, 4}))
	assert.Equal(t, 1, small.calls)

	raw := make([]byte, writeChunk+1)
	var big countingWriter
	require.NoError(t, Write(&big, Uint8, []int{len(raw)}, raw))
	assert.Equal(t, 2, big.calls)
}

// errWriter fails after accepting limit bytes.
type errWriter struct{ limit int }

var errWrite = errors.New("disk full")

func (w *errWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, errWrite
	}
	w.limit -= len(p)
	return len(p), nil
}

// shortWriter reports a short write without an error.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

func TestWriteErrors(t *testing.T) {
	tooMany := make([]int, maxDims+1)
	tests := []struct {
		name    string
		write   func(w io.Writer) error
		wantErr string
		is      error
	}{
		{"invalid dtype", func(w io.Writer) error { return Write(w, 0, []int{1}, []byte{0}) }, "invalid dtype DType(0)", nil},
		{"negative dim", func(w io.Writer) error { return Write(w, Uint8, []int{2, -1}, nil) }, "negative dimension -1 at axis 1", nil},
		{"overflow", func(w io.Writer) error { return Write(w, Float64, []int{1 << 40, 1 << 40}, nil) }, "too large", nil},
		{"too many dims", func(w io.Writer) error { return Write(w, Uint8, tooMany, nil) }, "exceed the limit", nil},
		{"short data", func(w io.Writer) error { return Write(w, Float32, []int{2, 3}, make([]byte, 23)) }, "data has 23 bytes, shape (2, 3) of float32 needs 24", nil},
		{"long data", func(w io.Writer) error { return Write(w, Float32, []int{}, make([]byte, 8)) }, "data has 8 bytes, shape () of float32 needs 4", nil},
		{"slice length", func(w io.Writer) error { return WriteSlice(w, []int{5}, []float32{1}) }, "got 1 elements, shape (5,) needs 5", nil},
		{"float16 length", func(w io.Writer) error { return WriteFloat16(w, []int{2, 2}, []uint16{1, 2, 3}) }, "got 3 elements, shape (2, 2) needs 4", nil},
		{"slice negative", func(w io.Writer) error { return WriteSlice(w, []int{-5}, []int64{}) }, "negative dimension", nil},
		{"writer fails in header", func(w io.Writer) error {
			return Write(&errWriter{limit: 10}, Uint8, []int{3}, []byte{1, 2, 3})
		}, "disk full", errWrite},
		{"writer fails in payload", func(w io.Writer) error {
			return WriteSlice(&errWriter{limit: 200}, []int{writeChunk}, make([]float32, writeChunk))
		}, "disk full", errWrite},
		{"short write", func(w io.Writer) error { return Write(shortWriter{}, Uint8, []int{3}, []byte{1, 2, 3}) }, "short write", io.ErrShortWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := tt.write(&buf)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.True(t, strings.HasPrefix(err.Error(), "npy: "), err.Error())
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Zero(t, buf.Len(), "nothing may be written on a validation error")
		})
	}
}

func TestFloat32s(t *testing.T) {
	// float64 values exactly halfway between float32 neighbours round to
	// even.
	halfUp := 1 + math.Ldexp(1, -24)  // between 1 and 1+2^-23: rounds to 1
	halfUp3 := 1 + math.Ldexp(3, -24) // between 1+2^-23 and 1+2^-22: rounds to 1+2^-22
	f16bits := []uint16{0x0000, 0x8000, 0x3c00, 0x7bff, 0x0001, 0x03ff, 0x7c00, 0xfc00, 0x3555}
	f16want := make([]float32, len(f16bits))
	for i, b := range f16bits {
		f16want[i] = float16.Frombits(b).Float32()
	}
	tests := []struct {
		name    string
		arr     *Array
		want    []float32
		wantErr string
	}{
		{name: "float16", arr: &Array{Header{DType: Float16, Shape: []int{3, 3}}, le(f16bits)}, want: f16want},
		{name: "float32", arr: &Array{Header{DType: Float32, Shape: []int{3}}, le([]float32{1.5, float32(math.Inf(-1)), math.SmallestNonzeroFloat32})}, want: []float32{1.5, float32(math.Inf(-1)), math.SmallestNonzeroFloat32}},
		{name: "float64", arr: &Array{Header{DType: Float64, Shape: []int{4}}, le([]float64{halfUp, halfUp3, 1e300, 0.1})}, want: []float32{1, 1 + 0x1p-22, float32(math.Inf(1)), 0.1}},
		{name: "scalar", arr: &Array{Header{DType: Float32, Shape: []int{}}, le(float32(7))}, want: []float32{7}},
		{name: "empty", arr: &Array{Header{DType: Float64, Shape: []int{0}}, nil}, want: []float32{}},
		{name: "int32", arr: &Array{Header{DType: Int32, Shape: []int{1}}, le(int32(1))}, wantErr: "cannot convert int32 array to float32"},
		{name: "bool", arr: &Array{Header{DType: Bool, Shape: []int{1}}, []byte{1}}, wantErr: "cannot convert bool array"},
		{name: "invalid dtype", arr: &Array{Header{Shape: []int{1}}, []byte{1}}, wantErr: "cannot convert DType(0) array"},
		{name: "data too short", arr: &Array{Header{DType: Float32, Shape: []int{2}}, []byte{1, 2, 3}}, wantErr: "data has 3 bytes, shape (2,) of float32 needs 8"},
		{name: "bad shape", arr: &Array{Header{DType: Float32, Shape: []int{-2}}, nil}, wantErr: "negative dimension"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.arr.Float32s()
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	// NaN payloads survive float16 and float32 decoding.
	a := &Array{Header{DType: Float16, Shape: []int{1}}, le(uint16(0x7e00))}
	got, err := a.Float32s()
	require.NoError(t, err)
	assert.True(t, math.IsNaN(float64(got[0])))
}

func TestLen(t *testing.T) {
	tests := []struct {
		shape []int
		want  int
	}{
		{[]int{}, 1},
		{nil, 1},
		{[]int{0}, 0},
		{[]int{5}, 5},
		{[]int{2, 3, 4}, 24},
		{[]int{2, 0, 4}, 0},
		{[]int{-1}, 0},
		{[]int{math.MaxInt, 2}, 0},
	}
	for _, tt := range tests {
		a := &Array{Header: Header{DType: Uint8, Shape: tt.shape}}
		assert.Equal(t, tt.want, a.Len(), "shape %v", tt.shape)
	}
}

func TestFormatError(t *testing.T) {
	e := &FormatError{Format: formatNPY, Path: "file.npy", Offset: 10, Reason: "bad magic"}
	assert.Equal(t, "npy: file.npy: offset 10: bad magic", e.Error())
	assert.Nil(t, e.Unwrap())

	e = &FormatError{Format: formatNPY, Offset: 128, Reason: "truncated payload", Err: io.ErrUnexpectedEOF}
	assert.Equal(t, "npy: offset 128: truncated payload: unexpected EOF", e.Error())
	assert.ErrorIs(t, e, io.ErrUnexpectedEOF)
}
