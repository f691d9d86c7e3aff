package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/mask"
)

// boolNpy2x5 is the file numpy.save writes for
// numpy.array([[1,0,1,1,0],[0,0,0,1,1]], dtype=bool): format 1.0, the
// header dict padded with spaces to a 64-byte payload offset.
func boolNpy2x5() []byte {
	hdr := "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 5), }"
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), 0)
	out = append(out, hdr...)
	return append(out, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1)
}

// TestMaskRoundTrip runs []bool → Mask → .npy bytes → Mask → []bool, checks
// the file against NumPy's bytes for the same array, and reads a uint8 0/1
// array too.
func TestMaskRoundTrip(t *testing.T) {
	keep := []bool{true, false, true, true, false, false, false, false, true, true}
	m, err := mask.FromBools([]int{2, 5}, keep)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteMask(&buf, Bool, m))
	assert.Equal(t, boolNpy2x5(), buf.Bytes())
	back, err := ReadMask(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.True(t, m.Equal(back))
	assert.Equal(t, keep, back.Bools())
	assert.Equal(t, []byte{0x0d, 0x03}, back.Bytes())

	buf.Reset()
	require.NoError(t, WriteMask(&buf, Uint8, m))
	a, err := Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, Uint8, a.DType)
	assert.Equal(t, []byte{1, 0, 1, 1, 0, 0, 0, 0, 1, 1}, a.Data)
	back, err = ReadMask(&buf)
	require.NoError(t, err)
	assert.True(t, m.Equal(back))

	// Every shape kind: rank 0, empty, odd lengths.
	for _, shape := range [][]int{{}, {0}, {3, 0}, {1}, {7}, {9}, {3, 3, 3}, {65}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		keep := make([]bool, n)
		for i := range keep {
			keep[i] = i%3 != 1
		}
		m, err := mask.FromBools(shape, keep)
		require.NoError(t, err)
		buf.Reset()
		require.NoError(t, WriteMask(&buf, Bool, m))
		back, err := ReadMask(&buf)
		require.NoError(t, err, "%v", shape)
		assert.True(t, m.Equal(back), "%v", shape)
	}
}

func TestMaskNonzeroIsTrue(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, Uint8, []int{4}, []byte{0, 2, 255, 1}))
	m, err := ReadMask(&buf)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true, true}, m.Bools())
}

func TestMaskErrors(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteSlice(&buf, []int{2}, []float32{1, 0}))
	_, err := ReadMask(&buf)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, ErrNotMask)
	assert.Contains(t, err.Error(), "float32 array")

	f := rawFile(1, "{'descr': '|b1', 'fortran_order': True, 'shape': (2, 2), }", []byte{1, 0, 0, 1})
	path := filepath.Join(t.TempDir(), "m.npy")
	require.NoError(t, os.WriteFile(path, f, 0o644))
	_, err = ReadMaskFile(path)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, path, fe.Path)
	assert.ErrorIs(t, err, ErrNotMask)
	// Fortran order of rank 1 is C order.
	f = rawFile(1, "{'descr': '|b1', 'fortran_order': True, 'shape': (3,), }", []byte{1, 0, 1})
	m, err := ReadMask(bytes.NewReader(f))
	require.NoError(t, err)
	assert.Equal(t, "[1 0 1]", m.String())

	_, err = ReadMask(bytes.NewReader([]byte("not npy")))
	assert.ErrorAs(t, err, &fe)
	_, err = ReadMaskFile(filepath.Join(t.TempDir(), "missing.npy"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorIs(t, WriteMask(&buf, Float32, m), ErrNotMask)
}

// FuzzReadMask decodes arbitrary bytes as a mask file: an error is a
// *FormatError, and a mask read writes back to a file that reads as the same
// mask.
func FuzzReadMask(f *testing.F) {
	f.Add(boolNpy2x5())
	var buf bytes.Buffer
	_ = Write(&buf, Uint8, []int{3}, []byte{0, 1, 7})
	f.Add(buf.Bytes())
	f.Add(rawFile(1, "{'descr': '|b1', 'fortran_order': True, 'shape': (2, 2), }", []byte{1, 0, 0, 1}))
	f.Add(rawFile(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }", []byte{1}))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadMask(bytes.NewReader(in))
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		var out bytes.Buffer
		require.NoError(t, WriteMask(&out, Bool, m))
		back, err := ReadMask(&out)
		require.NoError(t, err)
		require.True(t, m.Equal(back))
		require.Equal(t, m.Count(), back.Count())
	})
}
