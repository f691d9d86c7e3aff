package imatrix

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// arr makes one .npz member from a fixed-size slice.
func arr(name string, dt npy.DType, shape []int, data any) npy.Named {
	b, err := binary.Append(nil, binary.LittleEndian, data)
	if err != nil {
		panic(err)
	}
	return npy.Named{Name: name, Array: &npy.Array{Header: npy.Header{DType: dt, Shape: shape}, Data: b}}
}

// goldenNPZ holds goldenStats as a calibration script saves them.
func goldenNPZ() []npy.Named {
	return []npy.Named{
		arr(npzDatasets, npy.Uint8, []int{24}, []byte("calib-a.txt\ncalib-b.txt\n")),
		arr(npzChunkCount, npy.Int64, []int{}, []int64{3}),
		arr(npzChunkSize, npy.Int32, []int{1}, []int32{512}),
		arr("output.weight.in_sum2", npy.Float32, []int{4}, []float32{15360, 30720, 46080, 61440}),
		arr("output.weight.counts", npy.Float64, []int{1}, []float64{1536}),
		arr("output.weight.in_sum", npy.Float32, []int{4}, []float32{-2, -1, 0, 1}),
		arr("blk.0.attn_k.weight.in_sum2", npy.Float64, []int{1, 8},
			[]float64{256, 512, 1024, 2048, 4096, 8192, 0, 1536}),
		arr("blk.0.attn_k.weight.counts", npy.Int64, []int{1}, []int64{1024}),
		arr("blk.0.attn_k.weight.in_sum", npy.Float32, []int{1, 8}, []float32{-2, -1, 0, 1, 2, -2, -1, 0}),
		arr("blk.0.ffn_down_exps.weight.in_sum2", npy.Float32, []int{3, 4},
			[]float32{1536, 3072, 4608, 6144, 0, 0, 0, 0, 256, 128, 64, 0}),
		arr("blk.0.ffn_down_exps.weight.counts", npy.Uint32, []int{3, 1}, []uint32{1536, 0, 512}),
		arr("blk.0.ffn_down_exps.weight.in_sum", npy.Float32, []int{3, 4},
			[]float32{-2, -1, 0, 1, 2, -2, -1, 0, 1, 2, -2, -1}),
	}
}

// Statistics read from an .npz archive write the GGUF golden (ggml's own
// bytes).
func TestReadNPZGolden(t *testing.T) {
	p := filepath.Join(t.TempDir(), "im.npz")
	require.NoError(t, npy.WriteNPZ(p, goldenNPZ()))
	s, err := ReadNPZ(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"calib-a.txt", "calib-b.txt"}, s.Datasets)
	assert.Equal(t, int64(3), s.ChunkCount)
	assert.Equal(t, int64(512), s.ChunkSize)
	var buf bytes.Buffer
	_, err = Write(&buf, s, FormatGGUF)
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/golden.imatrix.gguf")
	require.NoError(t, err)
	assert.Equal(t, want, buf.Bytes())
}

// Read takes an .npz archive of statistics as the GGUF imatrix made of it:
// the same entries as reading the golden GGUF file.
func TestReadTakesNPZ(t *testing.T) {
	p := filepath.Join(t.TempDir(), "im.npz")
	require.NoError(t, npy.WriteNPZ(p, goldenNPZ()))
	got, err := Read(p)
	require.NoError(t, err)
	want, err := Read("testdata/golden.imatrix.gguf")
	require.NoError(t, err)
	assert.Equal(t, p, got.Path)
	assert.Equal(t, want.Entries, got.Entries)
	assert.Equal(t, want.Datasets, got.Datasets)

	require.NoError(t, npy.WriteNPZ(p, goldenNPZ()[:2])) // no chunk size
	_, err = Read(p)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), "im.npz")
}

func TestReadNPZErrors(t *testing.T) {
	drop := func(name string) func([]npy.Named) []npy.Named {
		return func(as []npy.Named) []npy.Named {
			var out []npy.Named
			for _, a := range as {
				if a.Name != name {
					out = append(out, a)
				}
			}
			return out
		}
	}
	set := func(a npy.Named) func([]npy.Named) []npy.Named {
		return func(as []npy.Named) []npy.Named {
			for i := range as {
				if as[i].Name == a.Name {
					as[i] = a
					return as
				}
			}
			return append(as, a)
		}
	}
	tests := []struct {
		name  string
		mod   func([]npy.Named) []npy.Named
		entry string
		want  string
	}{
		{"no datasets", drop(npzDatasets), "", "array imatrix.datasets is missing"},
		{"no chunk size", drop(npzChunkSize), "", "array imatrix.chunk_size is missing"},
		{"datasets dtype", set(arr(npzDatasets, npy.Int8, []int{2}, []int8{'a', '\n'})), "", "want uint8 [n]"},
		{"datasets unterminated", set(arr(npzDatasets, npy.Uint8, []int{1}, []byte("a"))), "", "does not end with a newline"},
		{"chunk count of two", set(arr(npzChunkCount, npy.Int64, []int{2}, []int64{1, 2})), "", "want one integer (2 values"},
		{"chunk size float", set(arr(npzChunkSize, npy.Float32, []int{}, []float32{1.5})), "", "not a whole number"},
		{"chunk size bool", set(arr(npzChunkSize, npy.Bool, []int{}, []bool{true})), "", "bool values, want integers"},
		{"stray array", set(arr("output.weight.sums", npy.Float32, []int{1}, []float32{1})), "", `array "output.weight.sums" is neither`},
		{"no sum2", drop("output.weight.in_sum2"), "output.weight", "array output.weight.in_sum2 is missing"},
		{"no counts", drop("output.weight.counts"), "output.weight", "array output.weight.counts is missing"},
		{"counts shape", set(arr("output.weight.counts", npy.Int64, []int{1, 2}, []int64{1, 2})), "output.weight", "want [matrices]"},
		{"counts NaN", set(arr("output.weight.counts", npy.Float32, []int{1}, []float32{float32NaN()})), "output.weight", "not a whole number"},
		{"sum2 shape", set(arr("output.weight.in_sum2", npy.Float32, []int{2, 2}, []float32{1, 2, 3, 4})), "output.weight", "shape [2 2], want [1, cols]"},
		{"sum2 ints", set(arr("output.weight.in_sum2", npy.Int32, []int{4}, []int32{1, 2, 3, 4})), "output.weight", "cannot convert int32"},
		{"sum shape", set(arr("output.weight.in_sum", npy.Float32, []int{2, 2}, []float32{1, 2, 3, 4})), "output.weight", "output.weight.in_sum: shape"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "im.npz")
			require.NoError(t, npy.WriteNPZ(p, tt.mod(goldenNPZ())))
			_, err := ReadNPZ(p)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.entry, fe.Tensor)
			assert.Equal(t, p, fe.Path)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	_, err := ReadNPZ(filepath.Join(t.TempDir(), "missing.npz"))
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func float32NaN() float32 {
	var z float32
	return z / z
}
