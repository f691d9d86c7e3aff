package safetensors

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// TestWriterLayout checks writer output byte for byte against files built by
// hand from the rules of the reference writer: tensors sorted by descending
// dtype order then name, offsets back to back, metadata first with sorted
// keys, serde_json escaping, JSON padded with spaces to a multiple of 8.
func TestWriterLayout(t *testing.T) {
	tests := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
		want     []byte
	}{
		{
			name: "sort and pad",
			tensors: []Tensor{
				{Name: "w", DType: U8, Shape: []int{3}, Data: []byte{7, 8, 9}},
				{Name: "b", DType: F32, Shape: []int{2}, Data: le32(1, 2)},
				{Name: "h", DType: BF16, Shape: []int{2, 1}, Data: le16(0x3f80, 0x4000)},
				{Name: "a", DType: F32, Shape: nil, Data: le32(0.5)},
			},
			metadata: map[string]string{"format": "pt", "b": "x"},
			// 258 bytes of JSON + 6 spaces = 264 = 0x108.
			want: slicesConcat(
				[]byte{0x08, 0x01, 0, 0, 0, 0, 0, 0},
				[]byte(`{"__metadata__":{"b":"x","format":"pt"},`+
					`"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},`+
					`"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},`+
					`"h":{"dtype":"BF16","shape":[2,1],"data_offsets":[12,16]},`+
					`"w":{"dtype":"U8","shape":[3],"data_offsets":[16,19]}}`+"      "),
				[]byte{0, 0, 0, 0x3f},                   // a = 0.5
				[]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}, // b = 1, 2
				[]byte{0x80, 0x3f, 0x00, 0x40},          // h
				[]byte{7, 8, 9}),                        // w
		},
		{
			name: "escaped name, no padding needed",
			tensors: []Tensor{
				{Name: "q\"\n<\x01", DType: I8, Shape: []int{1}, Data: []byte{0xff}},
			},
			// 64 bytes of JSON, already a multiple of 8.
			want: slicesConcat(
				[]byte{64, 0, 0, 0, 0, 0, 0, 0},
				[]byte(`{"q\"\n<\u0001":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}`),
				[]byte{0xff}),
		},
		{
			name: "every dtype in upstream order",
			tensors: []Tensor{
				{Name: "a", DType: Bool, Shape: []int{1}, Data: []byte{1}},
				{Name: "a4", DType: F4, Shape: []int{2}, Data: []byte{0x21}},
				{Name: "z", DType: U64, Shape: []int{}, Data: make([]byte, 8)},
				{Name: "c", DType: C64, Shape: []int{1}, Data: make([]byte, 8)},
				{Name: "e", DType: F8E8M0, Shape: []int{0}, Data: nil},
			},
			// BOOL sorts last: it is first in the upstream enum.
			// 277 bytes of JSON + 3 spaces = 280 = 0x118.
			want: slicesConcat(
				[]byte{0x18, 0x01, 0, 0, 0, 0, 0, 0},
				[]byte(`{"z":{"dtype":"U64","shape":[],"data_offsets":[0,8]},`+
					`"c":{"dtype":"C64","shape":[1],"data_offsets":[8,16]},`+
					`"e":{"dtype":"F8_E8M0","shape":[0],"data_offsets":[16,16]},`+
					`"a4":{"dtype":"F4","shape":[2],"data_offsets":[16,17]},`+
					`"a":{"dtype":"BOOL","shape":[1],"data_offsets":[17,18]}}`+"   "),
				make([]byte, 16), []byte{0x21, 1}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, Encode(&buf, tt.tensors, tt.metadata))
			assert.Equal(t, string(tt.want), buf.String())

			p := filepath.Join(t.TempDir(), "out.safetensors")
			require.NoError(t, WriteFile(p, tt.tensors, tt.metadata))
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, string(tt.want), string(got))

			// Every tensor starts 8-byte aligned in the file when the
			// ones before it have sizes that are multiples of 8.
			n := binary.LittleEndian.Uint64(got)
			assert.Zero(t, n%8)
		})
	}
}

func slicesConcat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// randomTensors returns tensors of every dtype with random shapes and
// contents.
func randomTensors(r *rand.Rand, n int) []Tensor {
	var ts []Tensor
	for i := range n {
		d := DTypes()[r.IntN(len(DTypes()))]
		var shape []int
		for range r.IntN(4) {
			shape = append(shape, r.IntN(5))
		}
		nelem := 1
		for _, s := range shape {
			nelem *= s
		}
		if nelem*d.BitSize()%8 != 0 {
			shape = append(shape, 4)
			nelem *= 4
		}
		data := make([]byte, nelem*d.BitSize()/8)
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		ts = append(ts, Tensor{Name: fmt.Sprintf("layer.%d.%s", i, d), DType: d, Shape: shape, Data: data})
	}
	return ts
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 20 {
		ts := randomTensors(r, 1+r.IntN(30))
		md := map[string]string{"iter": fmt.Sprint(iter), "format": "pt"}
		if iter%3 == 0 {
			md = nil
		}
		p := filepath.Join(t.TempDir(), "rt.safetensors")
		require.NoError(t, WriteFile(p, ts, md))
		for _, mapped := range []bool{true, false} {
			old := mmapHook
			if !mapped {
				mmapHook = func(*os.File, int64) ([]byte, error) { return nil, os.ErrInvalid }
			}
			f, err := Open(p)
			mmapHook = old
			require.NoError(t, err)
			assert.Equal(t, mapped, f.Mapped())
			assert.Equal(t, md, f.Metadata())
			require.Len(t, f.Tensors(), len(ts))
			for _, want := range ts {
				info, ok := f.Tensor(want.Name)
				require.True(t, ok, want.Name)
				assert.Equal(t, want.DType, info.DType)
				if len(want.Shape) == 0 {
					assert.Empty(t, info.Shape)
				} else {
					assert.Equal(t, want.Shape, info.Shape)
				}
				got, err := f.Bytes(want.Name)
				require.NoError(t, err)
				assert.Equal(t, len(want.Data), len(got))
				assert.True(t, bytes.Equal(want.Data, got), want.Name)
			}
			// Layout invariants: contiguous, and non-empty tensors sorted
			// by descending dtype, then name. (Empty tensors share the
			// offset of the next tensor, so the reader may list them
			// elsewhere.)
			var prev *TensorInfo
			infos := f.Tensors()
			for i, b := range infos {
				if i > 0 {
					assert.Equal(t, infos[i-1].Offset+infos[i-1].Size, b.Offset)
				}
				if b.Size == 0 {
					continue
				}
				if prev != nil {
					a := *prev
					assert.True(t, a.DType > b.DType || a.DType == b.DType && a.Name < b.Name, "%s before %s", a.Name, b.Name)
				}
				prev = &infos[i]
			}
			require.NoError(t, f.Close())
		}
	}
}

// TestFloat32RoundTrip writes float data through the F32 path and reads it
// back through Float32s.
func TestFloat32RoundTrip(t *testing.T) {
	vals := []float32{0, -0, 1, -1.5, float32(math.Inf(-1)), 3.4e38, 1e-45}
	p := filepath.Join(t.TempDir(), "f.safetensors")
	require.NoError(t, WriteFile(p, []Tensor{{Name: "v", DType: F32, Shape: []int{len(vals)}, Data: le32(vals...)}}, nil))
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	got, err := f.Float32s("v")
	require.NoError(t, err)
	for i := range vals {
		assert.Equal(t, math.Float32bits(vals[i]), math.Float32bits(got[i]))
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriterStreaming(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ts := randomTensors(r, 40)
	var want bytes.Buffer
	require.NoError(t, Encode(&want, ts, map[string]string{"k": "v"}))

	dir := t.TempDir()
	p := filepath.Join(dir, "s.safetensors")
	specs := make([]TensorSpec, len(ts))
	for i, x := range ts {
		specs[i] = x.Spec()
	}
	w, err := Create(p, specs, map[string]string{"k": "v"})
	require.NoError(t, err)

	// While writing, only the temporary file and the lock exist, in the same
	// directory.
	names := dirNames(t, dir)
	require.Len(t, names, 2)
	for _, n := range names {
		assert.True(t, atomicfile.IsTemporary(n), n)
		assert.True(t, strings.HasSuffix(n, "s.safetensors") || strings.HasSuffix(n, "s.safetensors.tcast-lock"), n)
	}

	layout := w.Tensors()
	require.Len(t, layout, len(ts))
	assert.Equal(t, int64(binary.LittleEndian.Uint64(want.Bytes())+8), layout[0].Offset)

	// Write tensors concurrently, in reverse order, in chunks of 3 bytes
	// through both Write and TensorWriter.
	var wg sync.WaitGroup
	for i := len(ts) - 1; i >= 0; i-- {
		x := ts[i]
		wg.Go(func() {
			var tw interface{ Write([]byte) (int, error) }
			if i%2 == 0 {
				var err error
				tw, err = w.TensorWriter(x.Name)
				assert.NoError(t, err)
			}
			for d := x.Data; len(d) > 0; {
				k := min(3, len(d))
				if tw != nil {
					n, err := tw.Write(d[:k])
					assert.NoError(t, err)
					assert.Equal(t, k, n)
				} else {
					assert.NoError(t, w.Write(x.Name, d[:k]))
				}
				d = d[k:]
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "second Close after success")
	assert.NoError(t, w.Abort(), "Abort after Close does nothing")

	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want.Bytes(), got))
	assert.Equal(t, []string{"s.safetensors"}, dirNames(t, dir))
	assert.Error(t, w.Write(ts[0].Name, nil), "Write after Close")
}

func TestWriterFailures(t *testing.T) {
	specs := []TensorSpec{
		{Name: "a", DType: F32, Shape: []int{2}},
		{Name: "b", DType: U8, Shape: []int{3}},
	}
	tests := []struct {
		name   string
		run    func(w *Writer) error // returns the error Close should report
		reason string
	}{
		{"too many bytes", func(w *Writer) error {
			require.NoError(t, w.Write("b", []byte{1, 2}))
			err := w.Write("b", []byte{3, 4})
			require.ErrorContains(t, err, `tensor "b": 2 bytes written after 2 exceed its size of 3 bytes`)
			// The Writer is failed: further writes report the first error.
			assert.Equal(t, err, w.Write("a", le32(1, 2)))
			return w.Close()
		}, "exceed its size"},
		{"too few bytes", func(w *Writer) error {
			require.NoError(t, w.Write("a", le32(1, 2)))
			require.NoError(t, w.Write("b", []byte{1, 2}))
			return w.Close()
		}, `tensor "b" received 2 of its 3 bytes`},
		{"nothing written", func(w *Writer) error { return w.Close() }, `tensor "a" received 0 of its 8 bytes`},
		{"unknown tensor", func(w *Writer) error {
			err := w.Write("c", []byte{1})
			require.ErrorIs(t, err, ErrNotFound)
			assert.Equal(t, err, w.Write("a", le32(1, 2)))
			return w.Close()
		}, `tensor "c" was not declared`},
		{"unknown tensor writer", func(w *Writer) error {
			_, err := w.TensorWriter("c")
			require.ErrorIs(t, err, ErrNotFound)
			return w.Close()
		}, `tensor "c" was not declared`},
		{"abort", func(w *Writer) error {
			require.NoError(t, w.Write("a", le32(1, 2)))
			require.NoError(t, w.Write("b", []byte{1, 2, 3}))
			require.NoError(t, w.Abort())
			require.NoError(t, w.Abort())
			return w.Close()
		}, "Close after Abort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x.safetensors")
			// An existing file under the final name survives a failed write.
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
			w, err := Create(p, specs, nil)
			require.NoError(t, err)
			err = tt.run(w)
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.reason)
			assert.ErrorContains(t, err, p)
			assert.Equal(t, []string{"x.safetensors"}, dirNames(t, dir), "temporary file removed")
			old, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, "old", string(old))
		})
	}
}

func TestWriterInvalidSpecs(t *testing.T) {
	big := math.MaxInt / 2
	tests := []struct {
		name   string
		specs  []TensorSpec
		md     map[string]string
		reason string
	}{
		{"duplicate", []TensorSpec{{Name: "a", DType: U8}, {Name: "a", DType: I8}}, nil, `tensor "a": duplicate tensor name`},
		{"reserved", []TensorSpec{{Name: "__metadata__", DType: U8}}, nil, "reserved"},
		{"bad UTF-8 name", []TensorSpec{{Name: "a\xff", DType: U8}}, nil, "not valid UTF-8"},
		{"bad UTF-8 metadata", nil, map[string]string{"k": "\xff"}, "not valid UTF-8"},
		{"invalid dtype", []TensorSpec{{Name: "a", DType: 0}}, nil, "invalid dtype DType(0)"},
		{"negative dim", []TensorSpec{{Name: "a", DType: U8, Shape: []int{2, -1}}}, nil, "negative dimension in shape [2 -1]"},
		{"odd F4", []TensorSpec{{Name: "a", DType: F4, Shape: []int{3}}}, nil, "not a whole number of bytes"},
		{"overflow", []TensorSpec{{Name: "a", DType: F64, Shape: []int{big, big}}}, nil, "overflows"},
		{"total overflow", slices.Repeat([]TensorSpec{{DType: U8, Shape: []int{1 << 60}}}, 8), nil, "overflows int64"},
	}
	for i := range tests[len(tests)-1].specs {
		tests[len(tests)-1].specs[i].Name = fmt.Sprint(i)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Create(filepath.Join(dir, "x.safetensors"), tt.specs, tt.md)
			require.ErrorContains(t, err, tt.reason)
			assert.Empty(t, dirNames(t, dir))
		})
	}

	// Data size mismatches in the one-shot helpers.
	dir := t.TempDir()
	p := filepath.Join(dir, "x.safetensors")
	err := WriteFile(p, []Tensor{{Name: "a", DType: F32, Shape: []int{2}, Data: []byte{1, 2, 3}}}, nil)
	assert.ErrorContains(t, err, `tensor "a" received 3 of its 8 bytes`)
	err = WriteFile(p, []Tensor{{Name: "a", DType: F32, Shape: []int{1}, Data: make([]byte, 5)}}, nil)
	assert.ErrorContains(t, err, "exceed its size of 4 bytes")
	assert.Empty(t, dirNames(t, dir))
	var buf bytes.Buffer
	err = Encode(&buf, []Tensor{{Name: "a", DType: F32, Shape: []int{2}, Data: []byte{1}}}, nil)
	assert.ErrorContains(t, err, `tensor "a": data has 1 bytes, shape [2] of F32 needs 8`)
	assert.Zero(t, buf.Len())

	_, err = Create(filepath.Join(dir, "missing", "x.safetensors"), nil, nil)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriteEmpty(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, nil, nil))
	assert.Equal(t, "\x08\x00\x00\x00\x00\x00\x00\x00{}      ", buf.String())
	f, err := OpenReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "empty")
	require.NoError(t, err)
	assert.Empty(t, f.Tensors())
	assert.Nil(t, f.Metadata())
}

// TestPatchMetadata checks that a same-width value is patched into the header
// and a wider one fails the Writer.
func TestPatchMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.safetensors")
	w, err := Create(path, []TensorSpec{{Name: "x", DType: U8, Shape: []int{2}}}, map[string]string{"k": "0x00000000"})
	require.NoError(t, err)
	require.NoError(t, w.Write("x", []byte{1, 2}))
	require.NoError(t, w.PatchMetadata(map[string]string{"k": "0x3f800000"}))
	require.NoError(t, w.Close())
	f, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "0x3f800000"}, f.Metadata())
	f.Close()

	w, err = Create(path+"2", []TensorSpec{{Name: "x", DType: U8, Shape: []int{2}}}, map[string]string{"k": "ab"})
	require.NoError(t, err)
	require.ErrorContains(t, w.PatchMetadata(map[string]string{"k": "a much longer value than the eight bytes of padding"}), "changes the header")
	require.Error(t, w.Close())
	_, err = os.Stat(path + "2")
	assert.True(t, os.IsNotExist(err))
	w, err = Create(path+"3", nil, map[string]string{"k": "ab"})
	require.NoError(t, err)
	require.ErrorContains(t, w.PatchMetadata(map[string]string{"other": "cd"}), "not declared")
	w.Abort()
}

// TestWriterLocked checks that a second Writer of the same path fails while
// the first is open, and succeeds once it is closed.
func TestWriterLocked(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.safetensors")
	specs := []TensorSpec{{Name: "a", DType: U8, Shape: []int{1}}}
	w, err := Create(p, specs, nil)
	require.NoError(t, err)
	_, err = Create(p, specs, nil)
	require.ErrorIs(t, err, atomicfile.ErrLocked)
	assert.ErrorContains(t, err, p)
	require.NoError(t, w.Write("a", []byte{7}))
	require.NoError(t, w.Close())
	w, err = Create(p, specs, nil)
	require.NoError(t, err)
	require.NoError(t, w.Abort())
	assert.Equal(t, []string{"x.safetensors"}, dirNames(t, dir))
}

// piece is a part of one tensor's data, at byte off of the tensor.
type piece struct {
	name string
	off  int64
	data []byte
}

// shuffledPieces cuts every tensor into pieces of random sizes and returns
// them all in a random order.
func shuffledPieces(r *rand.Rand, ts []Tensor) []piece {
	var ps []piece
	for _, x := range ts {
		for off := 0; off < len(x.Data); {
			n := min(1+r.IntN(7), len(x.Data)-off)
			ps = append(ps, piece{x.Name, int64(off), x.Data[off : off+n]})
			off += n
		}
	}
	r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	return ps
}

// TestWriterWriteAt writes every tensor in pieces of random sizes, in a
// random order over tensors and pieces, from several goroutines, some
// tensors' first bytes through Write, and checks that the file equals the
// one Encode makes in one sequential pass.
func TestWriterWriteAt(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	ts := randomTensors(r, 40)
	var want bytes.Buffer
	require.NoError(t, Encode(&want, ts, map[string]string{"k": "v"}))
	specs := make([]TensorSpec, len(ts))
	for i, x := range ts {
		specs[i] = x.Spec()
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "s.safetensors")
	w, err := Create(p, specs, map[string]string{"k": "v"})
	require.NoError(t, err)

	// The first bytes of every third tensor go through Write, the rest of
	// it through WriteAt.
	var rest []Tensor
	for i, x := range ts {
		if i%3 == 0 && len(x.Data) > 2 {
			require.NoError(t, w.Write(x.Name, x.Data[:2]))
			ps := shuffledPieces(r, []Tensor{{Name: x.Name, Data: x.Data[2:]}})
			for _, pc := range ps {
				require.NoError(t, w.WriteAt(pc.name, pc.data, pc.off+2))
			}
			continue
		}
		rest = append(rest, x)
	}
	ps := shuffledPieces(r, rest)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(ps); i += 4 {
				assert.NoError(t, w.WriteAt(ps[i].name, ps[i].data, ps[i].off))
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want.Bytes(), got))
	assert.Equal(t, []string{"s.safetensors"}, dirNames(t, dir))
	assert.Error(t, w.WriteAt(ts[0].Name, nil, 0), "WriteAt after Close")
}

// TestWriterWriteAtFailures checks that overlapping, misplaced and missing
// pieces fail the Writer and leave no output, and the old file in place.
func TestWriterWriteAtFailures(t *testing.T) {
	specs := []TensorSpec{
		{Name: "a", DType: F32, Shape: []int{2}},
		{Name: "b", DType: U8, Shape: []int{3}},
	}
	tests := []struct {
		name   string
		run    func(w *Writer) error // returns the error Close should report
		reason string
	}{
		{"overlap", func(w *Writer) error {
			require.NoError(t, w.WriteAt("a", []byte{1, 2, 3, 4}, 2))
			err := w.WriteAt("a", []byte{1, 2, 3}, 0)
			require.ErrorContains(t, err, `tensor "a": bytes 0 to 3 overlap bytes written before, from byte 2`)
			assert.Equal(t, err, w.WriteAt("b", []byte{1}, 0), "the Writer is failed")
			return w.Close()
		}, "overlap"},
		{"overlap with Write", func(w *Writer) error {
			require.NoError(t, w.WriteAt("b", []byte{9}, 1))
			require.ErrorContains(t, w.Write("b", []byte{1, 2}), "overlap")
			return w.Close()
		}, "overlap"},
		{"past the end", func(w *Writer) error {
			require.ErrorContains(t, w.WriteAt("b", []byte{1, 2}, 2), `tensor "b": 2 bytes written at 2 exceed its size of 3 bytes`)
			return w.Close()
		}, "exceed its size"},
		{"negative offset", func(w *Writer) error {
			require.ErrorContains(t, w.WriteAt("b", []byte{1}, -1), "negative offset -1")
			return w.Close()
		}, "negative offset"},
		{"unknown tensor", func(w *Writer) error {
			require.ErrorIs(t, w.WriteAt("c", []byte{1}, 0), ErrNotFound)
			return w.Close()
		}, `tensor "c" was not declared`},
		{"hole", func(w *Writer) error {
			require.NoError(t, w.WriteAt("a", le32(1, 2), 0))
			require.NoError(t, w.WriteAt("b", []byte{1}, 0))
			require.NoError(t, w.WriteAt("b", []byte{3}, 2))
			return w.Close()
		}, `tensor "b" received 2 of its 3 bytes (byte 1 is missing)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x.safetensors")
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
			w, err := Create(p, specs, nil)
			require.NoError(t, err)
			err = tt.run(w)
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.reason)
			assert.Equal(t, []string{"x.safetensors"}, dirNames(t, dir), "temporary file removed")
			old, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, "old", string(old))
		})
	}
}
