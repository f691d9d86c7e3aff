package safetensors

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// FuzzOpenIndex opens arbitrary bytes as model.safetensors.index.json in a
// directory holding two valid shards from testdata/ (a.safetensors: the
// valid_f32_2x2 seed file, tensor "w"; b.safetensors: valid_subbyte, tensors
// "c", "e", "f4", "f6", "n"); seeds: hand-written indexes and the hostile
// ones of the repository's testdata/bad/index. OpenIndex refuses it with an error naming the
// index (a *FormatError, or a missing or irregular shard), or every tensor
// of the checkpoint is in its shard, readable, and the shards' tensors are
// exactly the weight map's.
func FuzzOpenIndex(f *testing.F) {
	shardA, err := os.ReadFile(filepath.Join("testdata", "valid_f32_2x2.safetensors"))
	require.NoError(f, err)
	shardB, err := os.ReadFile(filepath.Join("testdata", "valid_subbyte.safetensors"))
	require.NoError(f, err)
	for _, s := range []string{
		`{"metadata":{"total_size":24},"weight_map":{"w":"a.safetensors","c":"b.safetensors","e":"b.safetensors","f4":"b.safetensors","f6":"b.safetensors","n":"b.safetensors"}}`,
		`{"weight_map":{"w":"a.safetensors"}}`,
		`{"metadata":{"total_size":"16","format":"pt"},"weight_map":{"w":"a.safetensors"}}`,
		`{"weight_map":{"w":"a.safetensors","w":"a.safetensors"}}`,
		`{"weight_map":{"w":"../a.safetensors"}}`,
		`{"weight_map":{"w":"/etc/passwd"}}`,
		`{"weight_map":{"w":"missing.safetensors"}}`,
		`{"weight_map":{"w":"."}}`,
		`{"weight_map":{"x":"a.safetensors"}}`,
		`{"metadata":{"total_size":-1},"weight_map":{}}`,
		`{"metadata":{"total_size":1e400},"weight_map":{"w":"a.safetensors"}}`,
		`{"weight_map":["a.safetensors"]}`,
		`{"weight_map":{"w":"a.safetensors"}} trailing`,
		`[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	// The hostile indexes of the repository's testdata/bad (internal/badinput).
	bad, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bad", "index", "*", IndexFileName))
	require.NoError(f, err)
	more, err := filepath.Glob(filepath.Join("..", "..", "testdata", "bad", "index", "truncated", "*", IndexFileName))
	require.NoError(f, err)
	for _, p := range append(bad, more...) {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	// One directory per fuzzing process (this setup runs in each worker),
	// whose index is rewritten by every call: calls in a process are
	// sequential.
	dir := f.TempDir()
	require.NoError(f, os.WriteFile(filepath.Join(dir, "a.safetensors"), shardA, 0o644))
	require.NoError(f, os.WriteFile(filepath.Join(dir, "b.safetensors"), shardB, 0o644))
	f.Fuzz(func(t *testing.T, index []byte) {
		path := filepath.Join(dir, IndexFileName)
		require.NoError(t, os.WriteFile(path, index, 0o644))
		s, err := OpenIndex(path)
		if err != nil {
			require.Contains(t, err.Error(), path)
			var fe *FormatError
			var pe *fs.PathError
			if !errors.As(err, &fe) && !errors.As(err, &pe) && !errors.Is(err, inputfile.ErrNotRegular) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		defer s.Close()
		require.GreaterOrEqual(t, s.TotalSize(), int64(-1), "-1: none given")
		for _, ti := range s.Tensors() {
			shard, ok := s.Shard(ti.Name)
			require.True(t, ok, ti.Name)
			require.Contains(t, []string{"a.safetensors", "b.safetensors"}, shard)
			b, err := s.Bytes(ti.Name)
			require.NoError(t, err, ti.Name)
			require.Len(t, b, int(ti.Size), ti.Name)
		}
		n := 0
		for _, sh := range s.Shards() {
			n += len(s.File(sh).Tensors())
		}
		require.Len(t, s.Tensors(), n, "every tensor of every shard is in the weight map")
	})
}
