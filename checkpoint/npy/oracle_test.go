package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	npyio "github.com/sbinet/npyio/npy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
	"gonum.org/v1/gonum/mat"
)

// finitePayload returns n pseudo-random elements of dt, little-endian, with
// float exponents limited so that no value is NaN or infinite (NaN would
// defeat value comparisons).
func finitePayload(dt DType, n int) []byte {
	raw := randomPayload(dt, n)
	switch dt {
	case Float32:
		for i := 3; i < len(raw); i += 4 {
			raw[i] &^= 0x40
		}
	case Float64:
		for i := 7; i < len(raw); i += 8 {
			raw[i] &^= 0x40
		}
	}
	return raw
}

// toNpyio writes an array with WriteSlice and reads it back with npyio.
func toNpyio[T Element](t *testing.T, shape []int) {
	t.Helper()
	dt := dtypeOf[T]()
	n, _, err := shapeSize(shape, dt.Size())
	require.NoError(t, err)
	want := make([]T, n)
	_, err = binary.Decode(finitePayload(dt, n), binary.LittleEndian, want)
	require.NoError(t, err)

	var buf bytes.Buffer
	require.NoError(t, WriteSlice(&buf, shape, want))
	r, err := npyio.NewReader(&buf)
	require.NoError(t, err)
	assert.Equal(t, dt.Descr(), r.Header.Descr.Type)
	assert.False(t, r.Header.Descr.Fortran)
	if len(shape) == 0 {
		assert.Empty(t, r.Header.Descr.Shape)
	} else {
		assert.Equal(t, shape, r.Header.Descr.Shape)
	}
	var got []T
	require.NoError(t, r.Read(&got))
	assert.Equal(t, want, got)
}

func TestOracleWriteReadByNpyio(t *testing.T) {
	for _, shape := range [][]int{{}, {0}, {5}, {2, 3}, {2, 3, 4}} {
		name := formatShape(shape)
		t.Run("f4"+name, func(t *testing.T) { toNpyio[float32](t, shape) })
		t.Run("f8"+name, func(t *testing.T) { toNpyio[float64](t, shape) })
		t.Run("u1"+name, func(t *testing.T) { toNpyio[uint8](t, shape) })
		t.Run("u2"+name, func(t *testing.T) { toNpyio[uint16](t, shape) })
		t.Run("u4"+name, func(t *testing.T) { toNpyio[uint32](t, shape) })
		t.Run("u8"+name, func(t *testing.T) { toNpyio[uint64](t, shape) })
		t.Run("i1"+name, func(t *testing.T) { toNpyio[int8](t, shape) })
		t.Run("i2"+name, func(t *testing.T) { toNpyio[int16](t, shape) })
		t.Run("i4"+name, func(t *testing.T) { toNpyio[int32](t, shape) })
		t.Run("i8"+name, func(t *testing.T) { toNpyio[int64](t, shape) })
		t.Run("b1"+name, func(t *testing.T) { toNpyio[bool](t, shape) })
	}
}

func TestOracleNpyioWriteReadByUs(t *testing.T) {
	tests := []struct {
		name  string
		val   any
		dt    DType
		shape []int
		data  []byte
	}{
		{"f4", []float32{1, -2.5, 3e38, float32(math.Inf(1))}, Float32, []int{4}, le([]float32{1, -2.5, 3e38, float32(math.Inf(1))})},
		{"f8", []float64{math.Pi, -0.0, 1e-310}, Float64, []int{3}, le([]float64{math.Pi, -0.0, 1e-310})},
		{"u1", []uint8{0, 1, 255}, Uint8, []int{3}, []byte{0, 1, 255}},
		{"u2", []uint16{1, 65535}, Uint16, []int{2}, le([]uint16{1, 65535})},
		{"u4", []uint32{7, math.MaxUint32}, Uint32, []int{2}, le([]uint32{7, math.MaxUint32})},
		{"u8", []uint64{math.MaxUint64}, Uint64, []int{1}, le([]uint64{math.MaxUint64})},
		{"i1", []int8{-128, 127}, Int8, []int{2}, []byte{0x80, 0x7f}},
		{"i2", []int16{-2, 300}, Int16, []int{2}, le([]int16{-2, 300})},
		{"i4", []int32{math.MinInt32, 5}, Int32, []int{2}, le([]int32{math.MinInt32, 5})},
		{"i8", []int64{math.MinInt64, 0, 9}, Int64, []int{3}, le([]int64{math.MinInt64, 0, 9})},
		{"b1", []bool{true, false, true}, Bool, []int{3}, []byte{1, 0, 1}},
		{"empty", []float32{}, Float32, []int{0}, []byte{}},
		{"scalar f4", float32(1.25), Float32, []int{}, le(float32(1.25))},
		{"scalar i8", int64(-3), Int64, []int{}, le(int64(-3))},
		{"2-d f8", mat.NewDense(2, 3, []float64{0, 1, 2, 3, 4, 5}), Float64, []int{2, 3}, le([]float64{0, 1, 2, 3, 4, 5})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, npyio.Write(&buf, tt.val))
			a, err := Read(&buf)
			require.NoError(t, err)
			assert.Equal(t, Header{DType: tt.dt, Shape: tt.shape}, a.Header)
			assert.Equal(t, tt.data, a.Data)
		})
	}
}

// TestFloat16AllBitPatterns checks every float16 value, written by hand,
// against x448/float16 (npyio cannot handle "<f2").
func TestFloat16AllBitPatterns(t *testing.T) {
	const n = 1 << 16
	payload := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(payload[2*i:], uint16(i))
	}
	for _, tc := range []struct {
		descr   string
		payload []byte
	}{
		{"<f2", payload},
		{">f2", swapped(payload)},
	} {
		t.Run(tc.descr, func(t *testing.T) {
			file := rawFile(1, "{'descr': '"+tc.descr+"', 'fortran_order': False, 'shape': (256, 256), }\n", tc.payload)
			a, err := Read(bytes.NewReader(file))
			require.NoError(t, err)
			assert.Equal(t, payload, a.Data)
			got, err := a.Float32s()
			require.NoError(t, err)
			require.Len(t, got, n)
			for i, g := range got {
				want := float16.Frombits(uint16(i)).Float32()
				if math.Float32bits(g) != math.Float32bits(want) {
					t.Fatalf("bits %#04x: got %v (%#08x), want %v (%#08x)",
						i, g, math.Float32bits(g), want, math.Float32bits(want))
				}
			}
		})
	}

	// WriteFloat16 produces the same payload as the hand-built file.
	bits := make([]uint16, n)
	for i := range bits {
		bits[i] = uint16(i)
	}
	var buf bytes.Buffer
	require.NoError(t, WriteFloat16(&buf, []int{n}, bits))
	assert.Equal(t, payload, buf.Bytes()[payloadOffset(t, buf.Bytes()):])
}

func swapped(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i+1 < len(b); i += 2 {
		out[i], out[i+1] = b[i+1], b[i]
	}
	return out
}
