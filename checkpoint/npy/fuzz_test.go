package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func FuzzRead(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.npy"))
	require.NoError(f, err)
	require.NotEmpty(f, files)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
	}

	seed := func(write func(*bytes.Buffer) error) {
		var buf bytes.Buffer
		require.NoError(f, write(&buf))
		f.Add(buf.Bytes())
	}
	seed(func(b *bytes.Buffer) error { return WriteSlice(b, []int{2, 2}, []float32{1, 2, 3, 4}) })
	seed(func(b *bytes.Buffer) error { return WriteSlice(b, []int{}, []int64{-1}) })
	seed(func(b *bytes.Buffer) error { return WriteSlice(b, []int{3, 0}, []uint16{}) })
	seed(func(b *bytes.Buffer) error { return WriteSlice(b, []int{3}, []bool{true, false, true}) })
	seed(func(b *bytes.Buffer) error { return WriteFloat16(b, []int{1, 2}, []uint16{0x3c00, 0x7e00}) })
	f.Add(rawFile(2, "{'descr': '>f8', 'fortran_order': True, 'shape': (1, 1), }\n", []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}))
	f.Add(rawFile(3, `{"shape": (2L,), "descr": "=i2", "fortran_order": False}`, []byte{1, 2, 3, 4}))
	f.Add(rawFile(1, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (1,), }", []byte{0, 0, 0, 0}))
	f.Add(rawFile(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (4611686018427387904,), }", nil))
	f.Add([]byte("\x93NUMPY\x01\x00\xff\xff"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := Read(bytes.NewReader(in))
		// The ReadFile code path (input size known up front) must agree.
		b, errSized := decode(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			require.Error(t, errSized, "Read failed (%v) but sized decode succeeded", err)
			require.ErrorAs(t, errSized, &fe)
			return
		}
		require.NoError(t, errSized)
		require.Equal(t, a, b)

		require.Equal(t, a.Len()*a.DType.Size(), len(a.Data))
		if _, err := a.Float32s(); err != nil {
			require.NotContains(t, []DType{Float16, Float32, Float64}, a.DType, err.Error())
		}

		// Round trip: the payload is already little-endian, and Write
		// stores it in C order, so the header comes back normalised.
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, a.DType, a.Shape, a.Data))
		c, err := Read(&buf)
		require.NoError(t, err)
		want := a.Header
		want.BigEndian, want.Fortran = false, false
		require.Equal(t, want, c.Header)
		require.Equal(t, a.Data, c.Data)
	})
}
