package convert

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// tooLargeAlloc bounds what Convert may allocate before refusing an input
// whose header claims tensors far larger than the file: 32 MiB, against the
// 4 TiB the headers below claim. The pipeline's scratch takes about 8 MiB
// before a weight is refused, and under the race detector 15-16.5 MiB.
const tooLargeAlloc = 32 << 20

// stFile is a safetensors file: the 8-byte little-endian header length,
// the JSON header, then data.
func stFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// ggufString appends a GGUF string: a uint64 length, then the bytes.
func ggufString(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint64(b, uint64(len(s))), s...)
}

// ggufTooLarge is a GGUF v3 file without metadata holding one tensor
// info (name, dims, type, offset 0) and pad bytes of data after the
// 32-byte aligned header.
func ggufTooLarge(name string, dims []uint64, typ gguf.Type, pad int) []byte {
	b := []byte("GGUF")
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint64(b, 1) // tensor_count
	b = binary.LittleEndian.AppendUint64(b, 0) // kv_count
	b = ggufString(b, name)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(dims)))
	for _, d := range dims {
		b = binary.LittleEndian.AppendUint64(b, d)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(typ))
	b = binary.LittleEndian.AppendUint64(b, 0) // offset in the data section
	for len(b)%32 != 0 {
		b = append(b, 0)
	}
	return append(b, make([]byte, pad)...)
}

// allocDuring returns what f allocated on the heap (TotalAlloc's growth).
func allocDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestConvertRefusesTensorsLargerThanFile gives Convert inputs whose
// headers declare tensors of terabytes (offsets within int64, far past the
// end of a file of a kilobyte or so) in every container it reads: a
// safetensors file (also with offsets near the int64 limit), a shard named
// by a sharded index, a GGUF file (float and block-quantized types, dims
// whose product overflows), and a tcast-layout checkpoint whose weight
// record claims 2^40 times the rows its stored parts hold. Each must be
// refused with a typed error naming the file and the tensor, having
// allocated under 16 MiB, and leave no output.
func TestConvertRefusesTensorsLargerThanFile(t *testing.T) {
	const n = 1 << 20 // [n, n] F32: 4 TiB
	huge := fmt.Sprintf(`{"model.layers.0.mlp.up_proj.weight":{"dtype":"F32","shape":[%d,%d],"data_offsets":[0,%d]}}`, n, n, int64(n)*n*4)
	// Offsets whose end is near the int64 limit.
	nearMax := fmt.Sprintf(`{"model.layers.0.mlp.up_proj.weight":{"dtype":"U8","shape":[%d],"data_offsets":[0,%d]}}`,
		int64(1)<<62, int64(1)<<62)

	type input struct {
		name   string
		files  map[string][]byte // relative path -> bytes
		in     string            // what Convert is given (relative)
		file   string            // the file the error must name (relative)
		tensor string            // the tensor it must name
		check  func(t *testing.T, err error)
	}
	stErr := func(t *testing.T, err error) {
		var fe *safetensors.FormatError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "model.layers.0.mlp.up_proj.weight", fe.Tensor)
	}
	ggErr := func(t *testing.T, err error) {
		var fe *gguf.FormatError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "blk.0.ffn_up.weight", fe.Tensor)
	}
	index := func(shard string) []byte {
		b, err := json.Marshal(map[string]any{
			"metadata":   map[string]any{"total_size": int64(n) * n * 4},
			"weight_map": map[string]string{"model.layers.0.mlp.up_proj.weight": shard},
		})
		if err != nil {
			panic(err)
		}
		return b
	}
	inputs := []input{
		{
			name:   "safetensors",
			files:  map[string][]byte{"model.safetensors": stFile(huge, make([]byte, 1024))},
			in:     "model.safetensors",
			file:   "model.safetensors",
			tensor: "model.layers.0.mlp.up_proj.weight",
			check:  stErr,
		},
		{
			name:   "safetensors near the int64 limit",
			files:  map[string][]byte{"model.safetensors": stFile(nearMax, make([]byte, 1024))},
			in:     "model.safetensors",
			file:   "model.safetensors",
			tensor: "model.layers.0.mlp.up_proj.weight",
			check:  stErr,
		},
		{
			name: "sharded index",
			files: map[string][]byte{
				"model.safetensors.index.json":     index("model-00001-of-00001.safetensors"),
				"model-00001-of-00001.safetensors": stFile(huge, make([]byte, 1024)),
			},
			in:     "model.safetensors.index.json",
			file:   "model-00001-of-00001.safetensors",
			tensor: "model.layers.0.mlp.up_proj.weight",
			check:  stErr,
		},
		{
			name:   "gguf f32",
			files:  map[string][]byte{"model.gguf": ggufTooLarge("blk.0.ffn_up.weight", []uint64{n, n}, gguf.TypeF32, 1024)},
			in:     "model.gguf",
			file:   "model.gguf",
			tensor: "blk.0.ffn_up.weight",
			check:  ggErr,
		},
		{
			name:   "gguf q4_0",
			files:  map[string][]byte{"model.gguf": ggufTooLarge("blk.0.ffn_up.weight", []uint64{n, n}, gguf.TypeQ4_0, 1024)},
			in:     "model.gguf",
			file:   "model.gguf",
			tensor: "blk.0.ffn_up.weight",
			check:  ggErr,
		},
		{
			name: "gguf dims whose product overflows",
			files: map[string][]byte{"model.gguf": ggufTooLarge("blk.0.ffn_up.weight",
				[]uint64{1 << 32, 1 << 32, 1 << 32}, gguf.TypeF32, 1024)},
			in:     "model.gguf",
			file:   "model.gguf",
			tensor: "blk.0.ffn_up.weight",
			check:  ggErr,
		},
	}
	lied := tcastShapeLie(t, n)
	inputs = append(inputs, input{
		name:   "tcast layout record claiming a huge shape",
		files:  map[string][]byte{"model.safetensors": lied.file},
		in:     "model.safetensors",
		file:   "model.safetensors",
		tensor: lied.weight,
		check: func(t *testing.T, err error) {
			var fe *layout.FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, lied.weight, fe.Weight)
		},
	})
	for _, c := range inputs {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, b := range c.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
				require.Less(t, len(b), 2<<20, "the input is small")
			}
			out := filepath.Join(t.TempDir(), "out")
			var err error
			alloc := allocDuring(func() {
				_, err = Convert(filepath.Join(dir, c.in), out, opts(t, "mxfp4", "tcast"))
			})
			require.Error(t, err)
			assert.Contains(t, err.Error(), filepath.Join(dir, c.file), "the error names the file")
			assert.Contains(t, err.Error(), c.tensor, "the error names the tensor")
			t.Logf("%v (%d bytes allocated)", err, alloc)
			c.check(t, err)
			assert.Less(t, alloc, uint64(tooLargeAlloc), "allocated %d bytes before refusing", alloc)
			_, statErr := os.Stat(out)
			assert.True(t, errors.Is(statErr, os.ErrNotExist), "nothing written: %v", statErr)
		})
	}
}

// shapeLie is a tcast-layout checkpoint whose record of weight claims a
// logical shape far larger than its stored parts.
type shapeLie struct {
	file   []byte
	weight string
}

// tcastShapeLie converts the iris fixture to MXFP4 in the tcast layout and
// rewrites the tcast.weight.* record of its first converted weight to claim
// n×n times as many rows (its parts' rows alike), leaving the stored tensors
// as they are.
func tcastShapeLie(t *testing.T, n int) shapeLie {
	t.Helper()
	conv := filepath.Join(t.TempDir(), "conv.safetensors")
	_, err := Convert(iris, conv, opts(t, "mxfp4", "tcast"))
	require.NoError(t, err)
	f, err := safetensors.Open(conv)
	require.NoError(t, err)
	defer f.Close()
	meta := f.Metadata()
	var weight string
	for k := range meta {
		if w, ok := strings.CutPrefix(k, layout.KeyWeightPrefix); ok && (weight == "" || w < weight) {
			weight = w
		}
	}
	require.NotEmpty(t, weight)
	var info layout.WeightInfo
	require.NoError(t, json.Unmarshal([]byte(meta[layout.KeyWeightPrefix+weight]), &info))
	require.NotEmpty(t, info.Shape)
	rows := info.Shape[0]
	for name, p := range info.Parts {
		if len(p.Shape) > 0 && p.Shape[0] == rows {
			p.Shape[0] = n * n
		}
		info.Parts[name] = p
	}
	info.Shape[0] = n * n
	rec, err := json.Marshal(info)
	require.NoError(t, err)
	meta[layout.KeyWeightPrefix+weight] = string(rec)
	var tensors []safetensors.Tensor
	for _, ti := range f.Tensors() {
		b, err := f.Bytes(ti.Name)
		require.NoError(t, err)
		tensors = append(tensors, safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: b})
	}
	var buf bytes.Buffer
	require.NoError(t, safetensors.Encode(&buf, tensors, meta))
	return shapeLie{file: buf.Bytes(), weight: weight}
}
