package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	ournpy "github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// tcast runs the command line in-process and returns its status and output.
func tcast(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeNpy[T ournpy.Element](t *testing.T, path string, shape []int, data []T) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, ournpy.WriteSlice(&b, shape, data))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// readWithNpyio reads a file with the independent npyio reader.
func readWithNpyio[T any](t *testing.T, path string) ([]T, []int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := npy.NewReader(bufio.NewReader(f))
	require.NoError(t, err)
	var v []T
	require.NoError(t, r.Read(&v))
	return v, r.Header.Descr.Shape
}

func TestCastEndToEnd(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.npy")
	// Values from TensorCast's golden set G4 (ties of e2m1; docs/TENSORCAST.md §5) in a 2×6 array.
	x := []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.75, -2.5, -5.0, 100}
	writeNpy(t, in, []int{2, 6}, x)
	out := filepath.Join(dir, "out")
	// Flags after the positional argument, as users type them.
	code, stdout, stderr := tcast("cast", in, "-dtype", "e2m1", "-round", "away", "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "float4_e2m1fn")

	codes, shape := readWithNpyio[uint8](t, filepath.Join(out, "codes.npy"))
	assert.Equal(t, []int{2, 6}, shape)
	// ties away: 0.5 1 1.5 2 3 4 6 -0.5 -1 -3 -6 6 → E2M1 codes
	assert.Equal(t, []uint8{0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x9, 0xa, 0xd, 0xf, 0x7}, codes)
	deq, _ := readWithNpyio[float32](t, filepath.Join(out, "dequant.npy"))
	assert.Equal(t, []float32{0.5, 1, 1.5, 2, 3, 4, 6, -0.5, -1, -3, -6, 6}, deq)

	var info map[string]any
	js, err := os.ReadFile(filepath.Join(out, "info.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &info))
	format := info["format"].(map[string]any)
	assert.Equal(t, "float4_e2m1fn", format["name"])
	assert.Equal(t, 4.0, format["bits"])
	assert.Equal(t, 6.0, format["max_finite"])
	assert.Equal(t, "away", info["rounding"])
	assert.Equal(t, "uint8", info["codes_dtype"])
	assert.Equal(t, 1.0, info["stats"].(map[string]any)["clipped"])
	assert.Equal(t, 4.0, info["bits_per_value"])
	assert.Equal(t, "float4_e2m1fn", info["datatype"].(map[string]any)["code"])
	// The same codes bit-packed, element 2k in bits 3:0.
	packed, pshape := readWithNpyio[uint8](t, filepath.Join(out, "packed.npy"))
	assert.Equal(t, []int{6}, pshape)
	assert.Equal(t, []uint8{0x21, 0x43, 0x65, 0x97, 0xda, 0x7f}, packed)
	entries, _ := os.ReadDir(out)
	assert.Len(t, entries, 4, "codes, dequant, packed, info and no temporary files")
}

func TestCastInputDTypesAndWidths(t *testing.T) {
	dir := t.TempDir()
	// float16 input, decoded with x448; float64 input; 16- and 32-bit code widths.
	h := []uint16{float16.Fromfloat32(1.5).Bits(), float16.Fromfloat32(-0.1).Bits(), 0x7c00}
	var b bytes.Buffer
	require.NoError(t, ournpy.WriteFloat16(&b, []int{3}, h))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "h.npy"), b.Bytes(), 0o644))
	writeNpy(t, filepath.Join(dir, "d.npy"), []int{3}, []float64{1.5, -0.1, math.Inf(1)})

	for _, in := range []string{"h.npy", "d.npy"} {
		out := filepath.Join(dir, "o-"+strings.TrimSuffix(in, ".npy"))
		code, _, stderr := tcast("cast", "-dtype", "bfloat16", "-overflow", "ieee", "-allow-nonfinite", "-o", out, filepath.Join(dir, in))
		require.Equal(t, 0, code, stderr)
		codes, _ := readWithNpyio[uint16](t, filepath.Join(out, "codes.npy"))
		assert.Equal(t, uint16(0x3fc0), codes[0], in)
		assert.Equal(t, uint16(0x7f80), codes[2], in)
	}
	out := filepath.Join(dir, "o32")
	code, _, stderr := tcast("cast", "-dtype", "float32", "-allow-nonfinite", "-o", out, filepath.Join(dir, "d.npy"))
	require.Equal(t, 0, code, stderr)
	codes, _ := readWithNpyio[uint32](t, filepath.Join(out, "codes.npy"))
	assert.Equal(t, math.Float32bits(1.5), codes[0])
	assert.Equal(t, math.Float32bits(math.MaxFloat32), codes[2], "+Inf saturates by default")
}

func TestCastStochasticIsReproducible(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.npy")
	x := make([]float32, 1000)
	for i := range x {
		x[i] = 2.5
	}
	writeNpy(t, in, []int{1000}, x)
	read := func(seed string) []byte {
		out := filepath.Join(dir, "o"+seed)
		code, _, stderr := tcast("cast", "-dtype", "e2m1", "-round", "stochastic", "-seed", seed, "-force", "-o", out, in)
		require.Equal(t, 0, code, stderr)
		b, err := os.ReadFile(filepath.Join(out, "codes.npy"))
		require.NoError(t, err)
		return b
	}
	assert.Equal(t, read("7"), read("7"))
	assert.NotEqual(t, read("7"), read("8"))
}

func TestCastExistingDir(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.npy")
	writeNpy(t, in, []int{2, 32}, testInput(64, false))
	out := filepath.Join(dir, "out")
	code, _, stderr := tcast("cast", "-dtype", "mxfp4", "-o", out, in)
	require.Equal(t, 0, code, stderr)
	stale := filepath.Join(out, "stale.npy")
	require.NoError(t, os.WriteFile(stale, nil, 0o644))

	// Without -force an existing DIR is refused and left as it was.
	code, stdout, stderr := tcast("cast", "-dtype", "nvfp4", "-o", out, in)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, out)
	assert.Contains(t, stderr, "-force")
	assert.Equal(t, "mxfp4e2", readInfo(t, out)["datatype"].(map[string]any)["name"])
	_, err := os.Stat(stale)
	assert.NoError(t, err)

	// -force replaces the whole directory.
	code, _, stderr = tcast("cast", "-dtype", "nvfp4", "-force", "-o", out, in)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "nvfp4", readInfo(t, out)["datatype"].(map[string]any)["name"])
	_, err = os.Stat(stale)
	assert.True(t, os.IsNotExist(err), "no file of the old cast survives")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "x.npy and out, no temporary directory")

	// -force never replaces the directory holding the input.
	inside := filepath.Join(out, "y.npy")
	writeNpy(t, inside, []int{2, 32}, testInput(64, false))
	code, _, stderr = tcast("cast", "-dtype", "mxfp4", "-force", "-o", out, inside)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "holds the input")
	_, err = os.Stat(inside)
	assert.NoError(t, err)
}

func TestCastBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.npy")
	writeNpy(t, good, []int{2}, []float32{1, 2})
	ints := filepath.Join(dir, "ints.npy")
	writeNpy(t, ints, []int{2}, []int32{1, 2})
	notNpy := filepath.Join(dir, "text.npy")
	require.NoError(t, os.WriteFile(notNpy, []byte("hello, world"), 0o644))
	fortran := filepath.Join(dir, "fortran.npy")
	hdr := "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }"
	hdr += strings.Repeat(" ", 64-(10+len(hdr)+1)%64) + "\n"
	raw := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), 0)
	raw = append(append(raw, hdr...), make([]byte, 16)...)
	require.NoError(t, os.WriteFile(fortran, raw, 0o644))

	cases := []struct {
		name   string
		args   []string
		status int
		msg    string
	}{
		{"missing file", []string{"-dtype", "e2m1", filepath.Join(dir, "nope.npy")}, 1, "nope.npy"},
		{"not npy", []string{"-dtype", "e2m1", notNpy}, 1, "text.npy"},
		{"unsupported dtype", []string{"-dtype", "e2m1", ints}, 1, "int32"},
		{"fortran order", []string{"-dtype", "e2m1", fortran}, 1, "Fortran"},
		{"unknown format", []string{"-dtype", "e2m2x", good}, 2, "unknown datatype"},
		{"bad rounding", []string{"-dtype", "e2m1", "-round", "up", good}, 2, "-round"},
		{"bad overflow", []string{"-dtype", "e2m1", "-overflow", "wrap", good}, 2, "-overflow"},
		{"no dtype", []string{good}, 2, "-dtype"},
		{"two inputs", []string{"-dtype", "e2m1", good, good}, 2, "exactly one"},
		{"unknown flag", []string{"-dtype", "e2m1", "-frobnicate", good}, 2, "frobnicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			code, stdout, stderr := tcast(append([]string{"cast", "-o", out}, c.args...)...)
			assert.Equal(t, c.status, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Contains(t, stderr, c.msg)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "nothing written into DIR")
		})
	}
	code, _, stderr := tcast("cast", "-dtype", "e2m1", good)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-o")
}

func TestFormatsAndUsage(t *testing.T) {
	code, stdout, _ := tcast("formats")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "float8_e4m3fn")
	assert.Contains(t, stdout, "448")
	code, stdout, _ = tcast("formats", "-json", "q1.6")
	require.Equal(t, 0, code)
	var infos []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &infos))
	assert.Equal(t, 1.984375, infos[0]["max_finite"])
	code, _, _ = tcast("frob")
	assert.Equal(t, 2, code)
	code, stdout, _ = tcast("help", "cast")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "-dtype")
	code, stdout, _ = tcast("bench", "-n", "1000", "-rounds", "1", "-dtype", "e4m3fn", "-kernels", "none")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "float8_e4m3fn")
	assert.NotContains(t, stdout, "MemRead")
	code, stdout, _ = tcast("bench", "-n", "8192", "-rounds", "1", "-dtype", "mxfp4,nvfp4", "-kernels", "none")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "mxfp4e2 (Cast, Decompress)")
	assert.Contains(t, stdout, "nvfp4 (Cast, Decompress)")
	assert.NotContains(t, stdout, "scale search")
	code, stdout, _ = tcast("bench", "-n", "8192", "-rounds", "1", "-dtype", "e4m3fn,nvfp4", "-scale-search", "-kernels", "none")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "cost × plain Cast")
	assert.Contains(t, stdout, "nvfp4 + scale search (Cast)")
	assert.NotContains(t, stdout, "float8_e4m3fn + scale search")
	code, _, stderr := tcast("bench", "-n", "8192", "-dtype", "e4m3fn,bfloat16", "-scale-search", "-kernels", "none")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-scale-search: none of the -dtype datatypes searches its scales")
	// Refused before any timing: the kernel table is not run first.
	code, stdout, stderr = tcast("bench", "-kernels", "MemRead", "-size", "l2", "-rounds", "1", "-scale-search")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-scale-search times the casts of the -dtype table: add -dtype")
	assert.Empty(t, stdout)
	code, _, _ = tcast("bench", "-dtype", "mxfp3")
	assert.Equal(t, 2, code)
	code, _, _ = tcast("bench", "-kernels", "QuantizeMXFP3")
	assert.Equal(t, 2, code)
	code, _, _ = tcast("bench", "-size", "l3")
	assert.Equal(t, 2, code)
	// The kernel table: MemRead first (ratio 1), then the kernels asked for.
	code, stdout, _ = tcast("bench", "-size", "l2", "-rounds", "1", "-kernels", "quantizemxfp4,DequantizeMXFP4")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 5, stdout)
	assert.Equal(t, []string{"kernel", "size", "GB/s", "×", "MemRead"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"MemRead", "L2"}, strings.Fields(lines[1])[:2])
	assert.Equal(t, "1.000", strings.Fields(lines[1])[3])
	assert.Equal(t, []string{"QuantizeMXFP4", "L2"}, strings.Fields(lines[2])[:2])
	assert.Equal(t, []string{"DequantizeMXFP4", "L2"}, strings.Fields(lines[3])[:2])
	assert.Contains(t, lines[4], "L2 65536")
	// -workers adds the total speed of that many workers and its ratio to one.
	code, stdout, _ = tcast("bench", "-size", "l2", "-rounds", "1", "-kernels", "Amax32", "-workers", "2")
	require.Equal(t, 0, code)
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	assert.Equal(t, []string{"kernel", "size", "GB/s", "×", "MemRead", "GB/s,", "2", "workers", "×", "1", "worker"}, strings.Fields(lines[0]))
	assert.Len(t, strings.Fields(lines[2]), 6, lines[2])
	code, _, stderr = tcast("bench", "-workers", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-workers must be positive")
	code, stdout, _ = tcast("bench", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "-kernels")
	assert.Contains(t, stdout, "QuantizeNVFP4")
}
