package npy

import (
	"archive/zip"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npz"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f32bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// TestNPZRoundTrip writes an archive, reads it back, and reads it with npyio's
// npz reader (float32 and int8 members) and, when TCAST_PYTHON names a python3
// with numpy, with numpy.load.
func TestNPZRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npz")
	arrays := []Named{
		{"weight", &Array{Header: Header{DType: Float32, Shape: []int{2, 2}}, Data: f32bytes(1, -2, 0.5, 3)}},
		{"half", &Array{Header: Header{DType: Float16, Shape: []int{2}}, Data: []byte{0x00, 0x3c, 0x00, 0xc0}}},
		{"codes", &Array{Header: Header{DType: Int8, Shape: []int{3}}, Data: []byte{1, 0xff, 7}}},
	}
	require.NoError(t, WriteNPZ(path, arrays))
	got, err := ReadNPZ(path)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, a := range arrays {
		assert.Equal(t, a.Name, got[i].Name)
		assert.Equal(t, a.Header.Shape, got[i].Header.Shape)
		assert.Equal(t, a.Header.DType, got[i].Header.DType)
		assert.Equal(t, a.Data, got[i].Data)
	}

	r, err := npz.Open(path)
	require.NoError(t, err)
	defer r.Close()
	var w []float32
	require.NoError(t, r.Read("weight.npy", &w))
	assert.Equal(t, []float32{1, -2, 0.5, 3}, w)
	var c []int8
	require.NoError(t, r.Read("codes.npy", &c))
	assert.Equal(t, []int8{1, -1, 7}, c)

	if py := os.Getenv("TCAST_PYTHON"); py != "" {
		out, err := exec.Command(py, "-c", `import numpy as np, sys
d = np.load(sys.argv[1])
print(d["weight"].tolist(), d["half"].tolist(), d["codes"].tolist())`, path).CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, "[[1.0, -2.0], [0.5, 3.0]] [1.0, -2.0] [1, -1, 7]", strings.TrimSpace(string(out)))
	}
}

func TestNPZBadInput(t *testing.T) {
	dir := t.TempDir()
	notZip := filepath.Join(dir, "x.npz")
	require.NoError(t, os.WriteFile(notZip, []byte("PK not really"), 0o644))
	_, err := ReadNPZ(notZip)
	require.ErrorContains(t, err, "x.npz")
	assert.ErrorIs(t, err, ErrNotFormat)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "npz", fe.Format)
	assert.Equal(t, "npz: "+notZip+": not a zip archive (an .npz is one)", err.Error(), "no offset")

	// A member that is not a valid .npy.
	bad := filepath.Join(dir, "bad.npz")
	require.NoError(t, WriteNPZ(bad, []Named{{"w", &Array{Header: Header{DType: Float32, Shape: []int{1}}, Data: f32bytes(1)}}}))
	b, err := os.ReadFile(bad)
	require.NoError(t, err)
	i := strings.Index(string(b), "NUMPY")
	b[i] = 'X'
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	_, err = ReadNPZ(bad)
	require.ErrorContains(t, err, `member "w.npy"`)
	assert.ErrorIs(t, err, ErrInvalid, "a member of no .npy makes the archive invalid")
	assert.NotErrorIs(t, err, ErrNotFormat)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, bad, fe.Path)

	// An archive cut short is truncated, not of another format.
	cut := filepath.Join(dir, "cut.npz")
	require.NoError(t, os.WriteFile(cut, b[:len(b)-10], 0o644))
	_, err = ReadNPZ(cut)
	assert.ErrorIs(t, err, ErrTruncated)
	assert.ErrorContains(t, err, "cut.npz")
	require.NoError(t, os.Remove(cut))

	// A member of a valid dtype this package does not read.
	obj := filepath.Join(dir, "obj.npz")
	require.NoError(t, os.WriteFile(obj, npzOf(t, zip.Store, []string{"o.npy"},
		[][]byte{rawFile(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", nil)}), 0o644))
	_, err = ReadNPZ(obj)
	assert.ErrorIs(t, err, ErrUnsupported)
	require.NoError(t, os.Remove(obj))

	require.ErrorContains(t, WriteNPZ(filepath.Join(dir, "dup.npz"), []Named{
		{"a", &Array{Header: Header{DType: Int8, Shape: []int{0}}}}, {"a", &Array{Header: Header{DType: Int8, Shape: []int{0}}}},
	}), "used twice")
	_, err = os.Stat(filepath.Join(dir, "dup.npz"))
	assert.True(t, os.IsNotExist(err))

	// A failing write leaves an existing file as it was and nothing beside it.
	old := filepath.Join(dir, "old.npz")
	require.NoError(t, os.WriteFile(old, []byte("old"), 0o666))
	require.ErrorContains(t, WriteNPZ(old, []Named{
		{"a", &Array{Header: Header{DType: Int8, Shape: []int{1}}, Data: []byte{1}}},
		{"f", &Array{Header: Header{DType: Int8, Shape: []int{1}, Fortran: true}, Data: []byte{1}}},
	}), "Fortran order")
	b, err = os.ReadFile(old)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"bad.npz", "old.npz", "x.npz"}, names)
}
