package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// The cross-check against testdata/read_safetensors.py, an independent reader
// written with Python's json and struct and NumPy only.

const numpyReader = "../../testdata/read_safetensors.py"

// numpyPython returns a Python interpreter that imports numpy, or skips the
// test: $TCAST_PYTHON if set, then the first python3 on PATH, then
// /usr/bin/python3 (where Debian's python3-numpy installs; .ci/run installs
// that package and sets TCAST_PYTHON=/usr/bin/python3).
func numpyPython(t *testing.T) string {
	t.Helper()
	names := []string{"python3", "/usr/bin/python3"}
	if env := os.Getenv("TCAST_PYTHON"); env != "" {
		names = append([]string{env}, names...)
	}
	for _, name := range names {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import numpy").Run() == nil {
			return path
		}
	}
	t.Skip("optional tool missing: python3 with numpy (tried $TCAST_PYTHON, python3 on PATH, /usr/bin/python3); " +
		".ci/run installs it with `apt-get install python3-numpy` and sets TCAST_PYTHON=/usr/bin/python3")
	return ""
}

// numpyEntry is one tensor as read_safetensors.py prints it.
type numpyEntry struct {
	DType string   `json:"dtype"`
	Shape []int    `json:"shape"`
	Sum   *float64 `json:"sum"`
	First []any    `json:"first"` // json.Number, or bool for BOOL
}

func readWithNumpy(t *testing.T, python, path string) map[string]numpyEntry {
	t.Helper()
	cmd := exec.Command(python, numpyReader, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "read_safetensors.py: %s", stderr.String())
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var got map[string]numpyEntry
	require.NoError(t, dec.Decode(&got))
	return got
}

// goValues returns a tensor's values as float64 via our reader: Float32s for
// floats, the little-endian integers otherwise.
func goValues(t *testing.T, f *safetensors.File, ti safetensors.TensorInfo) []float64 {
	t.Helper()
	if ti.DType.Float() && ti.DType != safetensors.F64 {
		v, err := f.Float32s(ti.Name)
		require.NoError(t, err)
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	b, err := f.Bytes(ti.Name)
	require.NoError(t, err)
	w := ti.DType.BitSize() / 8
	out := make([]float64, len(b)/w)
	le := binary.LittleEndian
	for i := range out {
		p := b[i*w:]
		switch ti.DType {
		case safetensors.U8, safetensors.Bool:
			out[i] = float64(p[0])
		case safetensors.I8:
			out[i] = float64(int8(p[0]))
		case safetensors.U16:
			out[i] = float64(le.Uint16(p))
		case safetensors.I16:
			out[i] = float64(int16(le.Uint16(p)))
		case safetensors.U32:
			out[i] = float64(le.Uint32(p))
		case safetensors.I32:
			out[i] = float64(int32(le.Uint32(p)))
		case safetensors.U64:
			out[i] = float64(le.Uint64(p))
		case safetensors.I64:
			out[i] = float64(int64(le.Uint64(p)))
		case safetensors.F64:
			out[i] = math.Float64frombits(le.Uint64(p))
		default:
			t.Fatalf("%s: no reference decoding of %v", ti.Name, ti.DType)
		}
	}
	return out
}

// compareWithNumpy checks every tensor of path: same dtype and shape, sums
// within 1e-6 relative (or 1e-9 of the sum of magnitudes, for sums near
// zero), first values exactly equal.
func compareWithNumpy(t *testing.T, python, path string) {
	t.Helper()
	py := readWithNumpy(t, python, path)
	f, err := safetensors.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tensors := f.Tensors()
	require.Len(t, py, len(tensors))
	for _, ti := range tensors {
		e, ok := py[ti.Name]
		require.True(t, ok, "numpy reader lacks %s", ti.Name)
		assert.Equal(t, ti.DType.String(), e.DType, ti.Name)
		assert.Equal(t, ti.Shape, e.Shape, ti.Name)
		v := goValues(t, f, ti)
		var sum, mag float64
		for _, x := range v {
			sum += x
			mag += math.Abs(x)
		}
		require.NotNil(t, e.Sum, ti.Name)
		if d := math.Abs(*e.Sum - sum); d > 1e-6*math.Max(math.Abs(sum), math.Abs(*e.Sum)) {
			assert.LessOrEqual(t, d, 1e-9*mag, "%s: sum %v (numpy) vs %v (Go)", ti.Name, *e.Sum, sum)
		}
		require.Len(t, e.First, min(4, len(v)), ti.Name)
		for i, x := range e.First {
			if b, ok := x.(bool); ok && ti.DType == safetensors.Bool {
				assert.Equal(t, v[i] != 0, b, "%s[%d]", ti.Name, i)
				continue
			}
			n, ok := x.(json.Number)
			require.True(t, ok, "%s[%d] = %v", ti.Name, i, x)
			got, err := strconv.ParseFloat(n.String(), 64)
			require.NoError(t, err, "%s[%d] = %s", ti.Name, i, n)
			assert.Equal(t, v[i], got, "%s[%d]: numpy %s, Go %v", ti.Name, i, n, v[i])
		}
	}
}

func TestSynthAgainstNumpy(t *testing.T) {
	python := numpyPython(t)
	for _, dt := range []string{"f32", "f16", "bf16"} {
		t.Run(dt, func(t *testing.T) {
			out, _ := synthTo(t, t.TempDir(), "-layers", "1", "-hidden", "64", "-vocab", "128", "-dtype", dt, "-seed", "11")
			compareWithNumpy(t, python, out)
		})
	}
}

func TestIntegerDTypesAgainstNumpy(t *testing.T) {
	python := numpyPython(t)
	mk := func(name string, d safetensors.DType, shape []int, seed byte) safetensors.Tensor {
		n := 1
		for _, x := range shape {
			n *= x
		}
		b := make([]byte, n*d.BitSize()/8)
		for i := range b {
			b[i] = byte(i)*37 + seed // both signs for the signed types
		}
		if d == safetensors.Bool {
			for i := range b {
				b[i] &= 1
			}
		}
		return safetensors.Tensor{Name: name, DType: d, Shape: shape, Data: b}
	}
	f64 := make([]byte, 8*5)
	for i, v := range []float64{1.5, -2.25, 1e300, math.SmallestNonzeroFloat64, 0} {
		binary.LittleEndian.PutUint64(f64[8*i:], math.Float64bits(v))
	}
	path := filepath.Join(t.TempDir(), "ints.safetensors")
	require.NoError(t, safetensors.WriteFile(path, []safetensors.Tensor{
		mk("u8", safetensors.U8, []int{3, 5}, 1),
		mk("i8", safetensors.I8, []int{7}, 2),
		mk("u16", safetensors.U16, []int{2, 2, 3}, 3),
		mk("i16", safetensors.I16, []int{9}, 4),
		mk("u32", safetensors.U32, []int{6}, 5),
		mk("i32", safetensors.I32, []int{2, 3}, 6),
		mk("u64", safetensors.U64, []int{3}, 7),
		mk("i64", safetensors.I64, []int{4}, 8),
		mk("b", safetensors.Bool, []int{5}, 9),
		mk("scalar", safetensors.I32, []int{}, 10),
		{Name: "f64", DType: safetensors.F64, Shape: []int{5}, Data: f64},
	}, map[string]string{"format": "pt"}))
	compareWithNumpy(t, python, path)
}

func TestFixtureAgainstNumpy(t *testing.T) {
	python := numpyPython(t)
	compareWithNumpy(t, python, "../../testdata/iris.bf16.safetensors")
}

// TestCastOutputsAgainstNumpy reads the .npy files of a tcast cast (codes,
// scales, packed bytes, dequantized values) and a float16 decompress with
// numpy.load and compares them with our npy reader.
func TestCastOutputsAgainstNumpy(t *testing.T) {
	python := numpyPython(t)
	dir := filepath.Join(t.TempDir(), "cast")
	code, _, stderr := tcast("cast", "-dtype", "nvfp4", "-o", dir, "../../testdata/conv2d_2.f32.npy")
	require.Equal(t, 0, code, stderr)
	half := filepath.Join(t.TempDir(), "half.npy")
	code, _, stderr = tcast("decompress", "-to", "f16", "-o", half, dir)
	require.Equal(t, 0, code, stderr)
	files := []string{half}
	for _, f := range []string{"codes.npy", "scale.npy", "tensor_scale.npy", "packed.npy", "dequant.npy"} {
		files = append(files, filepath.Join(dir, f))
	}
	for _, path := range files {
		got := readWithNumpy(t, python, path)["array"]
		a, err := npy.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, a.Header.Shape, got.Shape, path)
		var vals []float64
		if a.Header.DType == npy.Uint8 {
			for _, b := range a.Data {
				vals = append(vals, float64(b))
			}
		} else {
			f, err := a.Float32s()
			require.NoError(t, err, path)
			for _, v := range f {
				vals = append(vals, float64(v))
			}
		}
		sum := 0.0
		for _, v := range vals {
			sum += v
		}
		require.NotNil(t, got.Sum, path)
		assert.InDelta(t, sum, *got.Sum, 1e-6*max(1, math.Abs(sum)), path)
		for i, fv := range got.First {
			n, err := fv.(json.Number).Float64()
			require.NoError(t, err)
			assert.Equal(t, vals[i], n, "%s element %d", path, i)
		}
	}
}

// TestLayoutsAgainstNumpy converts a small synth checkpoint in every
// safetensors layout and has numpy read every tensor of the result (I32 packed
// words, I64 shapes, U8 codes, F8_E4M3 scales decoded by their definition).
func TestLayoutsAgainstNumpy(t *testing.T) {
	python := numpyPython(t)
	src, _ := synthTo(t, t.TempDir(), "-layers", "1", "-hidden", "128", "-vocab", "128", "-seed", "3")
	for _, c := range [][2]string{{"tcast", "mxfp4"}, {"tcast", "uint4_g32"}, {"compressed-tensors", "int4_g32"},
		{"compressed-tensors", "nvfp4"}, {"compressed-tensors", "fp8e4_block128"}, {"modelopt", "nvfp4"}, {"gpt-oss", "mxfp4"}} {
		t.Run(c[0]+"/"+c[1], func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m")
			code, _, stderr := tcast("convert", src, "-layout", c[0], "-dtype", c[1], "-o", out)
			require.Equal(t, 0, code, stderr)
			compareWithNumpy(t, python, filepath.Join(out, "model.safetensors"))
		})
	}
}
