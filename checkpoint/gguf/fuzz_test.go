package gguf

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the seed files in testdata/")

// seedFiles returns the files kept in testdata/: hand-built ones, one made
// by the Writer with every value type and every type Float32s supports,
// and invalid ones (named bad_*). They seed FuzzRead and are read by
// TestTestdata.
func seedFiles(t testing.TB) map[string][]byte {
	var w Writer
	for _, p := range allKV() {
		require.NoError(t, w.AddKV(p.Key, p.Value))
	}
	types := slices.Sorted(maps.Keys(dequantizers))
	for i, typ := range types {
		bs := typ.BlockSize()
		size, _ := typ.Size(int64(2 * bs))
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(j*131 + i*17) // deterministic filler
		}
		if typ == TypeMXFP4 { // keep the scales finite
			data[0], data[17] = 127, 120
		}
		require.NoError(t, w.AddTensor("t."+typ.String(), typ, []int{2, bs}, data))
	}
	var all bytes.Buffer
	_, err := w.WriteTo(&all)
	require.NoError(t, err)

	files := map[string][]byte{
		"hand.gguf":      handFile(),
		"aligned64.gguf": handAligned(),
		"all_types.gguf": all.Bytes(),
	}
	for _, c := range badCases() {
		switch c.name {
		case "version 2", "overlapping tensors", "n_dims 5", "offset misaligned", "unknown type",
			"array length beyond file", "arrays nested too deep":
			files["bad_"+strings.ReplaceAll(c.name, " ", "_")+".gguf"] = c.in
		}
	}
	return files
}

func TestTestdata(t *testing.T) {
	want := seedFiles(t)
	if *update {
		for name, b := range want {
			require.NoError(t, os.WriteFile(filepath.Join("testdata", name), b, 0o644))
		}
	}
	paths, err := filepath.Glob(filepath.Join("testdata", "*.gguf"))
	require.NoError(t, err)
	require.Len(t, paths, len(want), "run go test -update to regenerate testdata")
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, bytes.Equal(want[filepath.Base(path)], got), "content differs: run go test -update to regenerate")

			f, err := Open(path)
			if strings.HasPrefix(filepath.Base(path), "bad_") {
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, path, fe.Path)
				return
			}
			require.NoError(t, err)
			defer f.Close()
			for _, ti := range f.Tensors {
				vals, err := f.Float32s(ti.Name)
				require.NoError(t, err, ti.Name)
				assert.Len(t, vals, int(ti.NumElements()))
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b)
	}
	for _, c := range badCases() {
		f.Add(c.in)
	}

	f.Fuzz(func(t *testing.T, in []byte) {
		g, err := Read(bytes.NewReader(in), int64(len(in)), "fuzz.gguf")
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, "fuzz.gguf", fe.Path)
			return
		}
		for _, ti := range g.Tensors {
			b, err := g.TensorBytes(ti.Name)
			require.NoError(t, err)
			require.Len(t, b, int(ti.Size))
			vals, err := g.Float32s(ti.Name)
			if err != nil {
				require.ErrorIs(t, err, errors.ErrUnsupported)
				continue
			}
			require.Len(t, vals, int(ti.NumElements()))
		}

		// Round trip through the Writer when it accepts the content.
		var w Writer
		for _, p := range g.KV {
			if w.AddKV(p.Key, p.Value) != nil {
				return
			}
		}
		for _, ti := range g.Tensors {
			b, _ := g.TensorBytes(ti.Name)
			if w.AddTensor(ti.Name, ti.Type, ti.Shape(), b) != nil {
				return
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			require.NotEqual(t, ValueString, mustGet(g, KeyArchitecture).Type(), err.Error())
			return
		}
		h, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "again.gguf")
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(h.KV), len(g.KV))
		// %#v prints every value exactly (floats in their shortest
		// round-trip form) and NaN as NaN, which reflect.DeepEqual would
		// call unequal to itself.
		require.Equal(t, fmt.Sprintf("%#v", g.KV), fmt.Sprintf("%#v", h.KV[:len(g.KV)]))
		require.Len(t, h.Tensors, len(g.Tensors))
		for i, ti := range g.Tensors {
			hi := h.Tensors[i]
			require.Equal(t, ti.Name, hi.Name)
			require.Equal(t, ti.Type, hi.Type)
			if len(ti.Dims) == 0 {
				require.Equal(t, []int{1}, hi.Dims)
			} else {
				require.Equal(t, ti.Dims, hi.Dims)
			}
			a, _ := g.TensorBytes(ti.Name)
			b, err := h.TensorBytes(ti.Name)
			require.NoError(t, err)
			require.Equal(t, a, b)
		}
	})
}

// mustGet returns the value of key, or the zero Value.
func mustGet(f *File, key string) Value {
	v, _ := f.Get(key)
	return v
}
