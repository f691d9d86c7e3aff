package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// Finding 11: each mistake gets a message that names it and says what to do,
// with one prefix.
func TestMessages(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-layot", "tcast"}, 2,
			[]string{"unknown flag -layot", "did you mean -layout", "tcast help convert"}},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-layout", "gguff"}, 2,
			[]string{`unknown layout "gguff"`, "closest: gguf", "fp8-block"}},
		{[]string{"convert", irisFixture, "-dtype", "mxpf4", "-o", out}, 2,
			[]string{`unknown datatype "mxpf4" (closest: mxfp4`}},
		{[]string{"convert", irisFixture, "-dtype", "q8_0", "-o", out}, 2,
			[]string{"q8_0 is a datatype of the gguf layout: add -layout gguf"}},
		{[]string{"convert", "../../testdata/conv2d_2.f32.npy", "-dtype", "mxfp4", "-o", out}, 1,
			[]string{"NumPy .npy array", "tcast cast"}},
		{[]string{"convert", irisFixture, "-dtype", "nvfp4", "-layout", "gguf", "-o", out}, 2,
			[]string{"mxfp4", "q8_0", "q4_0"}},
	} {
		code, _, stderr := tcast(tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		for _, w := range tc.want {
			assert.Contains(t, stderr, w, tc.args)
		}
		assert.Equal(t, 1, strings.Count(stderr, "tcast convert:"), "one prefix: %s", stderr)
		assert.NotContains(t, stderr, "convert: convert:")
		assert.NotContains(t, stderr, "tcast: tcast:")
		assert.NoDirExists(t, out)
	}
}

// Finding 12: off a terminal the progress is one line at the end (and one
// every ten seconds), not a line per tensor.
func TestProgressOffTerminal(t *testing.T) {
	var b bytes.Buffer
	p := progressPrinter(&b)
	for i := 1; i <= 189; i++ {
		p(convert.Progress{Tensors: i, TotalTensors: 189, Bytes: int64(i), TotalBytes: 189, Elapsed: time.Duration(i) * time.Millisecond})
	}
	assert.Equal(t, 1, strings.Count(b.String(), "\n"), b.String())
	assert.Contains(t, b.String(), "189/189 tensors")
	b.Reset()
	p = progressPrinter(&b)
	for i := 1; i <= 30; i++ {
		p(convert.Progress{Tensors: i, TotalTensors: 30, Elapsed: time.Duration(i) * time.Second})
	}
	assert.Equal(t, 3, strings.Count(b.String(), "\n"), "at 10 s, 20 s and the end: %s", b.String())
}

// Wrong outputs and wrong files for decompress, cast and convert.
func TestMoreMessages(t *testing.T) {
	dir := t.TempDir()
	cast := filepath.Join(dir, "cast")
	code, _, stderr := tcast("cast", "-dtype", "mxfp4", "-o", cast, "../../testdata/conv2d_2.f32.npy")
	require.Equal(t, 0, code, stderr)
	text := filepath.Join(dir, "x.safetensors")
	require.NoError(t, os.WriteFile(text, []byte("this is not a checkpoint at all\n"), 0o644))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"decompress", "-o", filepath.Join(dir, "back.safetensors"), cast}, 2, "decompresses to one .npy array"},
		{[]string{"decompress", "-o", filepath.Join(dir, "x.npy"), "../../testdata/conv2d_2.f32.npy"}, 2, "cast it with tcast cast"},
		{[]string{"decompress", irisFixture}, 2, "OUT.safetensors or a directory"},
		{[]string{"decompress", "-o", filepath.Join(dir, "x.gguf"), irisFixture}, 2, "Decompress writes safetensors; give -o a directory or a .safetensors file"},
		{[]string{"cast", "-dtype", "mxfp4", "-o", filepath.Join(dir, "c.npy"), "../../testdata/conv2d_2.f32.npy"}, 2, "give a directory name"},
		{[]string{"convert", text, "-dtype", "mxfp4", "-o", filepath.Join(dir, "o")}, 1, "neither a safetensors file"},
		{[]string{"convert", filepath.Join(dir, "missing.safetensors"), "-dtype", "mxfp4", "-o", filepath.Join(dir, "o")}, 1, "does not exist"},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-rename", ".*=x", "-o", filepath.Join(dir, "o")}, 2, "-rename maps"},
	} {
		code, _, stderr := tcast(tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
		assert.NotContains(t, stderr, "-layout", "decompress has no -layout: %v", tc.args)
	}
	assert.NoFileExists(t, filepath.Join(dir, "back.safetensors"))
}

// -h asks for help: usage on stdout, exit 0; no arguments is a usage error.
func TestTopLevelHelp(t *testing.T) {
	code, stdout, _ := tcast("-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "convert")
	code, _, stderr := tcast()
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "usage: tcast")
}

// decompress reads a GGUF conversion's output directory like any checkpoint,
// and a GGUF -scale-mode the layout cannot honour is refused at once.
func TestDecompressGGUFDirectory(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "g")
	code, _, stderr := tcast("convert", irisFixture, "-layout", "gguf", "-dtype", "q8_0", "-o", g)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := tcast("decompress", "-o", filepath.Join(dir, "d.safetensors"), g)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "gguf layout")
	code, _, stderr = tcast("convert", irisFixture, "-layout", "gguf", "-dtype", "q8_0", "-scale-mode", "ceil", "-o", filepath.Join(dir, "h"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-scale-mode: ceil chooses power-of-two scales, and q8_0 has none")
	assert.NoDirExists(t, filepath.Join(dir, "h"))
}

// Finding 11: a GGUF tensor name over 63 bytes fails with the way out, and
// -rename gets it through; verify pairs the renamed tensor with its source.
func TestRenameLongGGUFNames(t *testing.T) {
	dir := t.TempDir()
	long := "model.layers.0.some_very_long_module_name_that_goes_on.down_proj.weight"
	src := filepath.Join(dir, "src.safetensors")
	data := make([]byte, 4*64*64)
	for i := range 64 * 64 {
		data[4*i+2], data[4*i+3] = byte(i), 0x3f
	}
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{{Name: long, DType: safetensors.F32, Shape: []int{64, 64}, Data: data}}, nil))
	g := filepath.Join(dir, "m.gguf")
	code, _, stderr := tcast("convert", src, "-layout", "gguf", "-dtype", "q8_0", "-o", g)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "-rename")
	code, _, stderr = tcast("convert", src, "-layout", "gguf", "-dtype", "q8_0", "-o", g, "-rename", "some_very_long_module_name_that_goes_on=m")
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := tcast("verify", src, g)
	require.Equal(t, 0, code, stderr)
	// No -min-sqnr: nothing about a threshold.
	assert.Contains(t, stdout, "1 tensor checked, 0 with values lost to NaN/Inf\n")
	assert.NotContains(t, stdout, "below")
}
