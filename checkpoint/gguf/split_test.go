package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitNames(t *testing.T) {
	// llama.cpp's llama_split_path: "%s-%05d-of-%05d.gguf", split_no + 1.
	assert.Equal(t, "dir/m-00001-of-00003.gguf", SplitPath("dir/m", 0, 3))
	assert.Equal(t, "m-00012-of-00012.gguf", SplitPath("m", 11, 12))
	for path, want := range map[string][3]any{
		"dir/m-00002-of-00004.gguf": {"dir/m", 1, 4},
		"a-b-00001-of-00001.gguf":   {"a-b", 0, 1},
	} {
		p, no, count, ok := SplitOf(path)
		require.True(t, ok, path)
		assert.Equal(t, want, [3]any{p, no, count}, path)
	}
	for _, bad := range []string{"m.gguf", "m-00000-of-00002.gguf", "m-00003-of-00002.gguf", "m-1-of-2.gguf",
		"m-00001-of-00002.safetensors"} {
		_, _, _, ok := SplitOf(bad)
		assert.False(t, ok, bad)
	}
}

func TestOpenModel(t *testing.T) {
	dir := t.TempDir()
	write := func(no int, tensors ...string) {
		var w Writer
		if no == 0 {
			require.NoError(t, w.AddKV(KeyArchitecture, String("llama")))
			require.NoError(t, w.AddKV("llama.block_count", Uint32(2)))
		}
		require.NoError(t, w.AddKV(KeySplitNo, Uint16(uint16(no))))
		require.NoError(t, w.AddKV(KeySplitCount, Uint16(3)))
		require.NoError(t, w.AddKV(KeySplitTensors, Int32(4)))
		for i, n := range tensors {
			require.NoError(t, w.AddTensor(n, TypeF32, []int{2}, []byte{byte(no), byte(i), 0, 0, 0, 0, 0, 0}))
		}
		require.NoError(t, w.WriteFile(SplitPath(filepath.Join(dir, "m"), no, 3)))
	}
	write(0, "a", "b")
	write(1, "c")
	write(2, "d")
	for no := range 3 {
		f, err := OpenModel(SplitPath(filepath.Join(dir, "m"), no, 3))
		require.NoError(t, err, "any split opens the model")
		assert.True(t, f.IsSplit())
		assert.Len(t, f.Splits(), 3)
		assert.Equal(t, "llama", f.Architecture())
		_, has := f.Get(KeySplitCount)
		assert.False(t, has, "the split keys are the splits'")
		var names []string
		for _, ti := range f.Tensors {
			names = append(names, ti.Name)
		}
		assert.Equal(t, []string{"a", "b", "c", "d"}, names)
		b, err := f.TensorBytes("d")
		require.NoError(t, err)
		assert.Equal(t, []byte{2, 0, 0, 0, 0, 0, 0, 0}, b, "read from its split")
		assert.Equal(t, 1, f.TensorSplit("c"))
		r, err := f.TensorRange("c", 1, 3)
		require.NoError(t, err)
		assert.Equal(t, []byte{0, 0, 0}, r)
		r, err = f.TensorRange("b", 0, 2)
		require.NoError(t, err)
		assert.Equal(t, []byte{0, 1}, r)
		_, err = f.TensorRange("b", 4, 5)
		assert.Error(t, err, "past the tensor's 8 bytes")
		// The views come from each tensor's own split's mapping.
		for _, ti := range f.Tensors {
			want, err := f.TensorBytes(ti.Name)
			require.NoError(t, err)
			got, err := f.TensorData(ti.Name)
			require.NoError(t, err)
			assert.Equal(t, want, got, ti.Name)
			f.ReleaseRange(ti.Name, 0, ti.Size)
		}
		require.NoError(t, f.Close())
		_, err = f.TensorData("c")
		require.ErrorIs(t, err, os.ErrClosed, "after Close")
	}
	// One file opens as Open opens it.
	var w Writer
	require.NoError(t, w.AddKV(KeyArchitecture, String("llama")))
	one := filepath.Join(dir, "one.gguf")
	require.NoError(t, w.WriteFile(one))
	f, err := OpenModel(one)
	require.NoError(t, err)
	assert.False(t, f.IsSplit())
	assert.Equal(t, []string{one}, f.Splits())
	f.Close()
	_, err = os.Stat(one)
	require.NoError(t, err)
}

// FuzzOpenModel: whatever the second split of a model holds, OpenModel
// and reading every tensor either work or give a *FormatError, and never
// panic.
func FuzzOpenModel(f *testing.F) {
	split := func(no int, tensors ...string) []byte {
		var w Writer
		if no == 0 {
			_ = w.AddKV(KeyArchitecture, String("llama"))
		}
		_ = w.AddKV(KeySplitNo, Uint16(uint16(no)))
		_ = w.AddKV(KeySplitCount, Uint16(2))
		_ = w.AddKV(KeySplitTensors, Int32(2))
		for _, n := range tensors {
			_ = w.AddTensor(n, TypeF32, []int{2}, make([]byte, 8))
		}
		var b bytes.Buffer
		_, _ = w.WriteTo(&b)
		return b.Bytes()
	}
	first := split(0, "a")
	f.Add(split(1, "b"))
	f.Add(split(1, "a"))
	f.Add(split(0, "b"))
	f.Add([]byte("GGUF"))
	f.Fuzz(func(t *testing.T, second []byte) {
		dir := t.TempDir()
		p1, p2 := SplitPath(filepath.Join(dir, "m"), 0, 2), SplitPath(filepath.Join(dir, "m"), 1, 2)
		require.NoError(t, os.WriteFile(p1, first, 0o644))
		require.NoError(t, os.WriteFile(p2, second, 0o644))
		m, err := OpenModel(p1)
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		defer m.Close()
		for _, ti := range m.Tensors {
			if _, err := m.TensorBytes(ti.Name); err != nil {
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
			}
		}
	})
}

func TestSplitBySize(t *testing.T) {
	// By hand, as gguf-split --split-max-size 100 would cut: sizes padded
	// to 32 are 32, 64, 32, 160, 32; 32+64 fits, +32 passes 100; 160 alone.
	assert.Equal(t, []int{0, 0, 1, 2, 3}, SplitBySize([]int64{10, 50, 32, 150, 1}, 100))
	assert.Equal(t, []int{0, 0, 0}, SplitBySize([]int64{1, 1, 1}, 1<<30))
	assert.Empty(t, SplitBySize(nil, 100))
}
