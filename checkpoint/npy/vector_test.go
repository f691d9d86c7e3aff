package npy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVectors(t *testing.T) {
	dir := t.TempDir()
	// float16 1, 2, -0.5 by hand: 0x3c00, 0x4000, 0xb800.
	h := &Array{Header: Header{DType: Float16, Shape: []int{3}}, Data: []byte{0x00, 0x3c, 0x00, 0x40, 0x00, 0xb8}}
	path := filepath.Join(dir, "n.npy")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, Write(f, h.DType, h.Shape, h.Data))
	require.NoError(t, f.Close())
	v, err := ReadVectorFile(path, 3)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, -0.5}, v)
	v, err = ReadVectorFile(path, -1)
	require.NoError(t, err)
	assert.Len(t, v, 3)

	_, err = ReadVectorFile(path, 4)
	require.ErrorIs(t, err, ErrNotVector)
	assert.Contains(t, err.Error(), "n.npy: 3 elements, want 4")

	for _, a := range []*Array{
		{Header: Header{DType: Float32, Shape: []int{2, 2}}, Data: make([]byte, 16)},
		{Header: Header{DType: Int32, Shape: []int{2}}, Data: make([]byte, 8)},
	} {
		_, err := a.Vector(-1)
		assert.ErrorIs(t, err, ErrNotVector, "%v %v", a.DType, a.Shape)
	}

	npz := filepath.Join(dir, "n.npz")
	require.NoError(t, WriteNPZ(npz, []Named{{Name: "a.weight", Array: h}}))
	m, err := ReadVectorsNPZ(npz)
	require.NoError(t, err)
	assert.Equal(t, map[string][]float32{"a.weight": {1, 2, -0.5}}, m)
	require.NoError(t, WriteNPZ(npz, []Named{{Name: "a.weight", Array: h}, {Name: "b", Array: &Array{Header: Header{DType: Float32, Shape: []int{1, 1}}, Data: make([]byte, 4)}}}))
	_, err = ReadVectorsNPZ(npz)
	require.True(t, errors.Is(err, ErrNotVector))
	assert.Contains(t, err.Error(), "n.npz: b: array of shape [1 1]")
}
