package safetensors

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShardedRoundTrip(t *testing.T) {
	fill := func(n int, v byte) []byte { return bytes.Repeat([]byte{v}, n) }
	tensors := []Tensor{
		{Name: "embed", DType: F32, Shape: []int{10}, Data: fill(40, 1)},
		{Name: "layer.0.w", DType: BF16, Shape: []int{4, 5}, Data: fill(40, 2)},
		{Name: "layer.1.w", DType: F32, Shape: []int{25}, Data: fill(100, 3)}, // larger than a shard
		{Name: "layer.1.b", DType: F64, Shape: []int{1}, Data: fill(8, 4)},
		{Name: "norm", DType: U8, Shape: []int{8}, Data: fill(8, 5)},
	}
	dir := t.TempDir()
	require.NoError(t, WriteSharded(dir, 64, tensors, map[string]string{"format": "pt"}))

	assert.Equal(t, []string{
		"model-00001-of-00004.safetensors",
		"model-00002-of-00004.safetensors",
		"model-00003-of-00004.safetensors",
		"model-00004-of-00004.safetensors",
		IndexFileName,
	}, dirNames(t, dir))

	index, err := os.ReadFile(filepath.Join(dir, IndexFileName))
	require.NoError(t, err)
	assert.Equal(t, `{
  "metadata": {
    "total_size": 196
  },
  "weight_map": {
    "embed": "model-00001-of-00004.safetensors",
    "layer.0.w": "model-00002-of-00004.safetensors",
    "layer.1.b": "model-00004-of-00004.safetensors",
    "layer.1.w": "model-00003-of-00004.safetensors",
    "norm": "model-00004-of-00004.safetensors"
  }
}
`, string(index))

	// Each shard is an ordinary file with the shared metadata.
	f, err := Open(filepath.Join(dir, "model-00004-of-00004.safetensors"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"format": "pt"}, f.Metadata())
	assert.Len(t, f.Tensors(), 2)
	require.NoError(t, f.Close())

	s, err := OpenIndex(filepath.Join(dir, IndexFileName))
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, int64(196), s.TotalSize())
	assert.Equal(t, map[string]string{"format": "pt"}, s.Metadata())
	assert.Len(t, s.Shards(), 4)
	require.Len(t, s.Tensors(), len(tensors))
	for _, want := range tensors {
		info, ok := s.Tensor(want.Name)
		require.True(t, ok)
		assert.Equal(t, want.DType, info.DType)
		assert.Equal(t, want.Shape, info.Shape)
		b, err := s.Bytes(want.Name)
		require.NoError(t, err)
		assert.Equal(t, want.Data, b)
		shard, ok := s.Shard(want.Name)
		require.True(t, ok)
		assert.NotNil(t, s.File(shard))
	}
	v, err := s.Float32s("layer.1.b")
	require.NoError(t, err)
	assert.Len(t, v, 1)
	_, err = s.Bytes("nope")
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.Float32s("nope")
	assert.ErrorIs(t, err, ErrNotFound)
	_, ok := s.Tensor("nope")
	assert.False(t, ok)
}

func TestWriteShardedEdges(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteSharded(dir, 1<<20, nil, nil))
	assert.Equal(t, []string{"model-00001-of-00001.safetensors", IndexFileName}, dirNames(t, dir))
	s, err := OpenIndex(filepath.Join(dir, IndexFileName))
	require.NoError(t, err)
	assert.Empty(t, s.Tensors())
	require.NoError(t, s.Close())

	assert.Error(t, WriteSharded(t.TempDir(), 0, nil, nil))
	dir = t.TempDir()
	err = WriteSharded(dir, 10, []Tensor{{Name: "a", DType: U8, Data: []byte{1}}, {Name: "a", DType: U8, Data: []byte{1}}}, nil)
	assert.ErrorContains(t, err, `tensor "a": duplicate tensor name`)
	// A bad tensor in a later shard leaves no files behind.
	err = WriteSharded(dir, 1, []Tensor{
		{Name: "a", DType: U8, Shape: []int{1}, Data: []byte{1}},
		{Name: "b", DType: U8, Shape: []int{2}, Data: []byte{1}},
	}, nil)
	assert.ErrorContains(t, err, `tensor "b": 1 bytes of data for U8 [2], which takes 2`)
	assert.Empty(t, dirNames(t, dir))
}

func TestOpenIndexInvalid(t *testing.T) {
	shardA := build(`{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"y":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}`, []byte{1, 2, 3})
	shardB := build(`{"z":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"x":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, []byte{4, 5})
	tests := []struct {
		name   string
		index  string
		path   string // file the error must be about (FormatError.Path)
		tensor string
		reason string
		kind   error // the sentinel errors.Is matches; nil: ErrInvalid
	}{
		{"valid", `{"metadata":{"total_size":3.0},"weight_map":{"x":"a.safetensors","y":"a.safetensors"}}`, "", "", "", nil},
		{"missing shard", `{"weight_map":{"x":"a.safetensors","y":"a.safetensors","w":"c.safetensors"}}`, "", "", `shard "c.safetensors"`, ErrMissingFile},
		{"corrupt shard", `{"weight_map":{"x":"a.safetensors","y":"a.safetensors","q":"bad.safetensors"}}`, "bad.safetensors", "", "does not start with '{'", ErrNotFormat},
		{"absent from shard", `{"weight_map":{"x":"a.safetensors","y":"a.safetensors","w":"a.safetensors"}}`, "a.safetensors", "w", "absent from the shard", nil},
		{"not in weight map", `{"weight_map":{"x":"a.safetensors"}}`, "a.safetensors", "y", "not in the weight map", nil},
		{"duplicate across shards", `{"weight_map":{"x":"a.safetensors","y":"a.safetensors","z":"b.safetensors"}}`, "b.safetensors", "x", `also in shard "a.safetensors"`, nil},
		{"assigned elsewhere", `{"weight_map":{"x":"a.safetensors","y":"b.safetensors","z":"b.safetensors"}}`, "a.safetensors", "y", `assigns it to "b.safetensors"`, nil},
		{"duplicate key", `{"weight_map":{"x":"a.safetensors","x":"a.safetensors"}}`, IndexFileName, "", `duplicate key "x" in weight_map`, nil},
		{"duplicate top key", `{"weight_map":{},"weight_map":{}}`, IndexFileName, "", `duplicate key "weight_map" in index`, nil},
		{"outside dir", `{"weight_map":{"x":"../a.safetensors"}}`, IndexFileName, "", "outside the index directory", nil},
		{"absolute", `{"weight_map":{"x":"/etc/passwd"}}`, IndexFileName, "", "outside the index directory", nil},
		{"value number", `{"weight_map":{"x":1}}`, IndexFileName, "", "is a number, not a file name", nil},
		{"total_size string", `{"metadata":{"total_size":"3"},"weight_map":{}}`, IndexFileName, "", "total_size is a string", nil},
		{"total_size negative", `{"metadata":{"total_size":-3},"weight_map":{}}`, IndexFileName, "", "not a non-negative integer", nil},
		{"no weight map", `{"metadata":{}}`, IndexFileName, "", "no weight_map", ErrNotFormat},
		{"malformed", `{"weight_map":{"x":}}`, IndexFileName, "", "malformed index JSON", nil},
		{"trailing", `{"weight_map":{}} x`, IndexFileName, "", "unexpected data after", nil},
		{"array", `[]`, IndexFileName, "", "index is an array", ErrNotFormat},
		{"no JSON", `model.safetensors`, IndexFileName, "", "malformed index JSON", ErrNotFormat},
		{"cut short", `{"weight_map":{"x":"a.safe`, IndexFileName, "", "malformed index JSON", ErrTruncated},
		{"cut after a key", `{"weight_map":{"x"`, IndexFileName, "", "malformed index JSON", ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a.safetensors"), shardA, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "b.safetensors"), shardB, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.safetensors"), build(`[]`), 0o644))
			ip := filepath.Join(dir, IndexFileName)
			require.NoError(t, os.WriteFile(ip, []byte(tt.index), 0o644))
			s, err := OpenIndex(ip)
			if tt.reason == "" {
				require.NoError(t, err)
				assert.Equal(t, int64(3), s.TotalSize())
				assert.Equal(t, []string{"a.safetensors"}, s.Shards())
				require.NoError(t, s.Close())
				return
			}
			require.Error(t, err)
			assert.Nil(t, s)
			assert.ErrorContains(t, err, tt.reason)
			kind := tt.kind
			if kind == nil {
				kind = ErrInvalid
			}
			assert.ErrorIs(t, err, kind)
			if tt.path == "" {
				assert.ErrorContains(t, err, ip)
				assert.ErrorIs(t, err, os.ErrNotExist)
				return
			}
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, filepath.Join(dir, tt.path), fe.Path)
			assert.Equal(t, tt.tensor, fe.Tensor)
			assert.ErrorContains(t, err, fe.Path)
		})
	}
	_, err := OpenIndex(filepath.Join(t.TempDir(), IndexFileName))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestShardedAbortAfterClose: Abort after a successful Close keeps the output.
func TestShardedAbortAfterClose(t *testing.T) {
	dir := t.TempDir()
	w, err := CreateSharded(dir, []TensorSpec{{Name: "a", DType: U8, Shape: []int{2}}, {Name: "b", DType: U8, Shape: []int{2}}}, nil, 2)
	require.NoError(t, err)
	require.NoError(t, w.Write("a", []byte{1, 2}))
	require.NoError(t, w.Write("b", []byte{3, 4}))
	require.NoError(t, w.Close())
	w.Abort()
	s, err := OpenIndex(filepath.Join(dir, IndexFileName))
	require.NoError(t, err)
	defer s.Close()
	b, err := s.Bytes("b")
	require.NoError(t, err)
	assert.Equal(t, []byte{3, 4}, b)
}

// TestShardedWriteAt checks that tensors written in shuffled pieces with
// WriteAt make the same shards as WriteSharded.
func TestShardedWriteAt(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	ts := randomTensors(r, 12)
	want, got := t.TempDir(), t.TempDir()
	require.NoError(t, WriteSharded(want, 40, ts, map[string]string{"k": "v"}))
	specs := make([]TensorSpec, len(ts))
	for i, x := range ts {
		specs[i] = x.Spec()
	}
	w, err := CreateSharded(got, specs, map[string]string{"k": "v"}, 40)
	require.NoError(t, err)
	for _, pc := range shuffledPieces(r, ts) {
		require.NoError(t, w.WriteAt(pc.name, pc.data, pc.off))
	}
	require.ErrorIs(t, w.WriteAt("nope", nil, 0), ErrNotFound)
	require.NoError(t, w.Close())
	names := dirNames(t, want)
	require.Equal(t, names, dirNames(t, got))
	for _, n := range names {
		a, err := os.ReadFile(filepath.Join(want, n))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(got, n))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), n)
	}
}

// TestOpenIndexSymlink: a shard that is (or lies under) a symbolic link to a
// file outside the index's directory is refused, as "../" names are; links
// that stay inside it are followed.
func TestOpenIndexSymlink(t *testing.T) {
	shardA := build(`{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, []byte{1})
	for _, tt := range []struct {
		name   string
		shard  string                       // the shard as the index names it
		link   func(root, ck string) string // makes the links; returns the index path to open
		reason string                       // "" when the index opens
	}{
		{"link to a file outside", "a.safetensors", func(root, ck string) string {
			must(t, os.Symlink(filepath.Join("..", "outside", "a.safetensors"), filepath.Join(ck, "a.safetensors")))
			return filepath.Join(ck, IndexFileName)
		}, "outside the index directory"},
		{"absolute link outside", "a.safetensors", func(root, ck string) string {
			must(t, os.Symlink(filepath.Join(root, "outside", "a.safetensors"), filepath.Join(ck, "a.safetensors")))
			return filepath.Join(ck, IndexFileName)
		}, "outside the index directory"},
		{"linked directory outside", "sub/a.safetensors", func(root, ck string) string {
			must(t, os.Symlink(filepath.Join(root, "outside"), filepath.Join(ck, "sub")))
			return filepath.Join(ck, IndexFileName)
		}, "outside the index directory"},
		{"link inside", "b.safetensors", func(root, ck string) string {
			must(t, os.WriteFile(filepath.Join(ck, "real.safetensors"), shardA, 0o644))
			must(t, os.Symlink("real.safetensors", filepath.Join(ck, "b.safetensors")))
			return filepath.Join(ck, IndexFileName)
		}, ""},
		{"Hugging Face cache: index and shards linked into one blobs directory", "a.safetensors", func(root, ck string) string {
			hfCache(t, root, ck)
			must(t, os.WriteFile(filepath.Join(root, "blobs", "2222"), shardA, 0o644))
			must(t, os.Symlink(filepath.Join("..", "blobs", "2222"), filepath.Join(ck, "a.safetensors")))
			return filepath.Join(ck, IndexFileName)
		}, ""},
		{"Hugging Face cache, shard linked out of the blobs directory", "a.safetensors", func(root, ck string) string {
			hfCache(t, root, ck)
			must(t, os.Symlink(filepath.Join("..", "outside", "a.safetensors"), filepath.Join(ck, "a.safetensors")))
			return filepath.Join(ck, IndexFileName)
		}, "outside the index directory"},
		{"index directory reached through a link", "b.safetensors", func(root, ck string) string {
			must(t, os.WriteFile(filepath.Join(ck, "real.safetensors"), shardA, 0o644))
			must(t, os.Symlink("real.safetensors", filepath.Join(ck, "b.safetensors")))
			must(t, os.Symlink(ck, filepath.Join(root, "alias")))
			return filepath.Join(root, "alias", IndexFileName)
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			ck := filepath.Join(root, "ck")
			must(t, os.MkdirAll(filepath.Join(root, "outside"), 0o755))
			must(t, os.Mkdir(ck, 0o755))
			must(t, os.WriteFile(filepath.Join(root, "outside", "a.safetensors"), shardA, 0o644))
			must(t, os.WriteFile(filepath.Join(ck, IndexFileName), []byte(`{"weight_map":{"x":"`+tt.shard+`"}}`), 0o644))
			ip := tt.link(root, ck)
			s, err := OpenIndex(ip)
			if tt.reason == "" {
				require.NoError(t, err)
				require.NoError(t, s.Close())
				return
			}
			require.Error(t, err)
			assert.Nil(t, s)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.ErrorContains(t, err, tt.reason)
			assert.ErrorContains(t, err, filepath.FromSlash(tt.shard))
			assert.ErrorContains(t, err, ip)
			assert.ErrorIs(t, err, ErrLinkOutside)
		})
	}
}

// hfCache moves the index of ck to root/blobs/1111 and links it back, as
// the Hugging Face hub cache stores a snapshot's files (snapshots/REV/NAME
// is a link to ../../blobs/HASH).
func hfCache(t *testing.T, root, ck string) {
	t.Helper()
	must(t, os.Mkdir(filepath.Join(root, "blobs"), 0o755))
	must(t, os.Rename(filepath.Join(ck, IndexFileName), filepath.Join(root, "blobs", "1111")))
	must(t, os.Symlink(filepath.Join("..", "blobs", "1111"), filepath.Join(ck, IndexFileName)))
}

func must(t *testing.T, err error) {
	t.Helper()
	require.NoError(t, err)
}
