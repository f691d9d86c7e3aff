package imatrix

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// TestNotImatrix checks that input which is no importance matrix at all
// says so (a *NotImatrixError, with the format error underneath), while a
// damaged importance matrix keeps its detailed *FormatError alone.
func TestNotImatrix(t *testing.T) {
	sum2 := f32t("w.in_sum2", []uint64{2}, 1, 2)
	counts := f32t("w.counts", []uint64{1}, 1)
	weight := f32t("blk.0.attn_q.weight", []uint64{2}, 1, 2)
	one := le(nil).i32(1)
	cases := []struct {
		name string
		in   []byte
		arch string // the model's architecture, for a model file
		not  bool   // a *NotImatrixError
	}{
		{"text", []byte("hello world, this is text\n"), "", true},
		{"short", []byte{1, 2}, "", true},
		{"empty", nil, "", true},
		{"model", ggufFile([]ggufKV{kvStr("general.architecture", "llama"), kvU32("general.file_type", 1)}, []ggufTensor{weight}), "llama", true},
		{"model with general.type", ggufFile([]ggufKV{kvStr("general.type", "model"), kvStr("general.architecture", "qwen2")}, []ggufTensor{weight}), "qwen2", true},
		{"adapter", ggufFile([]ggufKV{kvStr("general.type", "adapter")}, []ggufTensor{weight}), "", true},
		{"GGUF of other tensors", ggufFile(nil, []ggufTensor{weight}), "", true},
		{"dat of a zero entry count", le(nil).i32(0).i32(0).i32(0).i32(0).i32(0), "", true},
		{"dat whose first name length is 0", one.i32(0).i32(1).i32(1).f32(1).i32(0), "", true},
		// Damaged importance matrices.
		{"imatrix without datasets", ggufFile([]ggufKV{kvStr("general.type", "imatrix"), kvU32("imatrix.chunk_count", 1),
			kvU32("imatrix.chunk_size", 1)}, []ggufTensor{sum2, counts}), "", false},
		{"imatrix keys without general.type", ggufFile([]ggufKV{kvStrs("imatrix.datasets", "a")}, []ggufTensor{sum2, counts}), "", false},
		{"importance tensors without keys", ggufFile(nil, []ggufTensor{sum2, counts}), "", false},
		{"dat cut short", one.i32(1).raw("w").i32(1).i32(3).f32s(1, 2), "", false},
		{"dat of a bad second name", le(nil).i32(2).datEntry("w", 1, 1).i32(0).i32(1).i32(1).f32(1).i32(0).i32(0), "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.in)
			require.Error(t, err)
			var fe *FormatError
			assert.ErrorAs(t, err, &fe, "the format error is underneath")
			var ne *NotImatrixError
			require.Equal(t, c.not, errors.As(err, &ne), "%v", err)
			assert.Equal(t, c.not, errors.Is(err, ErrNotFormat), "%v", err)
			if !c.not {
				return
			}
			assert.Equal(t, c.arch, ne.Architecture)
			if c.arch != "" {
				assert.Equal(t, "im is a model file (general.architecture "+c.arch+"), not an importance matrix; compute one from it with llama-imatrix, or as docs/GGUF.md §2.6 describes", err.Error())
			} else {
				assert.Regexp(t, `^im is (not|a GGUF file of general\.type "adapter", not) an importance matrix \(llama-imatrix's GGUF or \.dat, or the \.npz of docs/GGUF\.md §2\.6\)$`, err.Error())
			}
		})
	}
}

// TestNotImatrixNPZ checks an .npz archive of other arrays.
func TestNotImatrixNPZ(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weights.npz")
	a := &npy.Array{Header: npy.Header{DType: npy.Float32, Shape: []int{1}}, Data: []byte{0, 0, 0x80, 0x3f}}
	require.NoError(t, npy.WriteNPZ(path, []npy.Named{{Name: "w", Array: a}}))
	_, err := Read(path)
	var ne *NotImatrixError
	require.ErrorAs(t, err, &ne)
	assert.ErrorIs(t, err, ErrNotFormat)
	assert.Equal(t, path+" is not an importance matrix (llama-imatrix's GGUF or .dat, or the .npz of docs/GGUF.md §2.6)", err.Error())

	// An archive with importance arrays but no metadata is a damaged one.
	require.NoError(t, npy.WriteNPZ(path, []npy.Named{{Name: "w.in_sum2", Array: a}}))
	_, err = Read(path)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.False(t, errors.As(err, &ne))
}
