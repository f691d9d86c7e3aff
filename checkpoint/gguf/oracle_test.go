package gguf

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsListing is the output of testdata/gguf_list.mjs.
type jsListing struct {
	Version     int    `json:"version"`
	TensorCount string `json:"tensor_count"`
	KVCount     string `json:"kv_count"`
	Alignment   int    `json:"alignment"`
	DataOffset  string `json:"data_offset"`
	KV          []struct {
		Key      string     `json:"key"`
		Type     ValueType  `json:"type"`
		ElemType *ValueType `json:"elem_type"`
		Value    any        `json:"value"`
	} `json:"kv"`
	Tensors []struct {
		Name   string `json:"name"`
		Type   Type   `json:"type"`
		Dims   []int  `json:"dims"`
		Offset string `json:"offset"`
	} `json:"tensors"`
}

// listWithJS runs testdata/gguf_list.mjs, which reads path with the npm
// package @huggingface/gguf (an independent GGUF reader). It skips the
// test unless TCAST_GGUF_JS names the node_modules directory the package
// was installed into (npm install --prefix DIR @huggingface/gguf@0.4.6)
// and node is on PATH.
func listWithJS(t *testing.T, path string) jsListing {
	t.Helper()
	mods := os.Getenv("TCAST_GGUF_JS")
	if mods == "" {
		t.Skip("optional tool missing: TCAST_GGUF_JS is not set (the npm package @huggingface/gguf); " +
			".ci/run installs it with `npm install --prefix DIR @huggingface/gguf@0.4.6` and sets TCAST_GGUF_JS=DIR/node_modules")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("optional tool missing: node is not on PATH (it runs the @huggingface/gguf oracle); " +
			".ci/run expects node and npm on the CI image and installs the package with npm")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "gguf_list.mjs"), path)
	cmd.Env = append(os.Environ(), "TCAST_GGUF_JS="+mods)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "gguf_list.mjs: %s", stderr.String())
	var l jsListing
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&l))
	return l
}

// compareWithJS checks that @huggingface/gguf reads path as we do.
func compareWithJS(t *testing.T, path string) {
	t.Helper()
	l := listWithJS(t, path)
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()

	assert.Equal(t, int(f.Version), l.Version)
	assert.Equal(t, strconv.Itoa(len(f.Tensors)), l.TensorCount)
	assert.Equal(t, strconv.Itoa(len(f.KV)), l.KVCount)
	assert.Equal(t, f.Alignment, l.Alignment)
	assert.Equal(t, strconv.FormatInt(f.DataOffset, 10), l.DataOffset)

	require.Len(t, l.KV, len(f.KV))
	for i, p := range f.KV {
		js := l.KV[i]
		assert.Equal(t, p.Key, js.Key)
		assert.Equal(t, p.Value.Type(), js.Type, p.Key)
		if p.Value.Type() == ValueArray {
			require.NotNil(t, js.ElemType, p.Key)
			assert.Equal(t, p.Value.Elem(), *js.ElemType, p.Key)
		}
		matchJS(t, p.Key, p.Value.Any(), js.Value)
	}

	require.Len(t, l.Tensors, len(f.Tensors))
	for i, ti := range f.Tensors {
		js := l.Tensors[i]
		assert.Equal(t, ti.Name, js.Name)
		assert.Equal(t, ti.Type, js.Type, ti.Name)
		assert.Equal(t, ti.Dims, js.Dims, ti.Name)
		assert.Equal(t, strconv.FormatInt(ti.Offset, 10), js.Offset, ti.Name)
	}
}

// matchJS compares a Go metadata value with its JSON form from
// gguf_list.mjs (numbers as json.Number, 64-bit integers and non-finite
// floats as strings).
func matchJS(t *testing.T, key string, v any, js any) {
	t.Helper()
	num := func() string {
		switch x := js.(type) {
		case json.Number:
			return x.String()
		case string:
			return x
		}
		t.Errorf("%s: JS value %v (%T) is not a number", key, js, js)
		return ""
	}
	float := func(x float64) {
		s := num()
		switch {
		case math.IsNaN(x):
			assert.Equal(t, "NaN", s, key)
		case math.IsInf(x, 1):
			assert.Equal(t, "Infinity", s, key)
		case math.IsInf(x, -1):
			assert.Equal(t, "-Infinity", s, key)
		default:
			got, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err, key)
			assert.Equal(t, x, got, key)
		}
	}
	switch x := v.(type) {
	case uint8, uint16, uint32, uint64:
		assert.Equal(t, strconv.FormatUint(reflectUint(x), 10), num(), key)
	case int8, int16, int32, int64:
		assert.Equal(t, strconv.FormatInt(reflectInt(x), 10), num(), key)
	case float32:
		float(float64(x))
	case float64:
		float(x)
	case bool, string:
		assert.Equal(t, x, js, key)
	case []Value:
		arr, ok := js.([]any)
		require.True(t, ok, key)
		require.Len(t, arr, len(x), key)
		for i := range x {
			matchJS(t, key, x[i].Any(), arr[i])
		}
	default: // a slice of scalars
		arr, ok := js.([]any)
		require.True(t, ok, "%s: %T", key, js)
		val := Value{v: v}
		require.Len(t, arr, val.Len(), key)
		for i := range arr {
			matchJS(t, key, elemAny(v, i), arr[i])
		}
	}
}

func reflectUint(v any) uint64 {
	u, _ := Value{v: v}.Uint()
	return u
}

func reflectInt(v any) int64 {
	i, _ := Value{v: v}.Int()
	return i
}

// elemAny returns element i of a scalar slice.
func elemAny(s any, i int) any {
	switch x := s.(type) {
	case []uint8:
		return x[i]
	case []int8:
		return x[i]
	case []string:
		return x[i]
	}
	return indexAny(s, i)
}

func TestOracleJSReadsWriterOutput(t *testing.T) {
	dir := t.TempDir()
	for _, align := range []uint32{0, 64} {
		var w Writer
		if align != 0 {
			require.NoError(t, w.AddKV(KeyAlignment, Uint32(align)))
		}
		for _, p := range allKV() {
			require.NoError(t, w.AddKV(p.Key, p.Value))
		}
		shapes := [][]int{{3}, {2, 1}, {2, 3, 1}, {1, 2, 1, 2}}
		i := 0
		for _, typ := range []Type{TypeF32, TypeF16, TypeBF16, TypeF64, TypeI8, TypeI16, TypeI32, TypeI64,
			TypeQ8_0, TypeQ4_0, TypeQ4_1, TypeQ5_0, TypeQ5_1, TypeQ8_1, TypeQ4_K, TypeQ6_K, TypeIQ4_XS,
			TypeTQ2_0, TypeMXFP4, TypeNVFP4, TypeQ1_0} {
			shape := append([]int(nil), shapes[i%len(shapes)]...)
			shape[len(shape)-1] *= typ.BlockSize()
			n := int64(1)
			for _, d := range shape {
				n *= int64(d)
			}
			size, _ := typ.Size(n)
			require.NoError(t, w.AddTensor("blk."+strconv.Itoa(i)+"."+typ.String(), typ, shape, make([]byte, size)))
			i++
		}
		path := filepath.Join(dir, "w"+strconv.Itoa(int(align))+".gguf")
		require.NoError(t, w.WriteFile(path))
		t.Run("align"+strconv.Itoa(int(align)), func(t *testing.T) { compareWithJS(t, path) })
	}
}

func TestOracleJSReadsTestdata(t *testing.T) {
	for _, name := range []string{"hand.gguf", "aligned64.gguf", "all_types.gguf"} {
		t.Run(name, func(t *testing.T) { compareWithJS(t, filepath.Join("testdata", name)) })
	}
}

// TestOracleJSReadsQuantized writes a tensor of every type with a quantizer
// here, quantized from real-looking values, and has @huggingface/gguf list
// the file: the same types, dimensions and offsets, so the sizes we lay out
// are the sizes it computes.
func TestOracleJSReadsQuantized(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var w Writer
	require.NoError(t, w.AddKV(KeyArchitecture, String("tcast")))
	for i, typ := range slices.Sorted(maps.Keys(quantizable())) {
		shape := []int{3 + i%2, 2 * 256}
		n := shape[0] * shape[1]
		x := make([]float32, n)
		for j := range x {
			x[j] = float32(rng.NormFloat64() * 0.02)
		}
		size, _ := typ.Size(int64(n))
		b := make([]byte, size)
		require.NoError(t, Quantize(typ, b, x, nil))
		require.NoError(t, w.AddTensor("blk."+strconv.Itoa(i)+".w_"+strings.ToLower(typ.String()), typ, shape, b))
	}
	path := filepath.Join(t.TempDir(), "quantized.gguf")
	require.NoError(t, w.WriteFile(path))
	compareWithJS(t, path)
}
