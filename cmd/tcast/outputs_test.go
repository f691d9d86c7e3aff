package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tensorcast-go/tensorcast/internal/golden"
)

var updateOutputs = flag.Bool("update-outputs", false,
	"rewrite testdata/outputs.golden from this build's outputs")

// outputStep is one command of the output matrix. It runs in a directory
// of its own, beside copies of the inputs; {r} before a name marks an input
// from the repository's testdata, {t} one from this package's and {d} an
// output of an earlier step.
// With stdout set, the command's standard output is an output too (JSON
// reports, lists); otherwise only the files it writes count.
type outputStep struct {
	args   string
	stdout bool
}

// outputMatrix are the commands whose every output byte is fixed: the
// fixtures and synth models in every layout and a representative set of
// datatypes, with casts, decompressions and the JSON reports. Their
// digests in testdata/outputs.golden were written by the build before the
// library's API was reworked, so a refactoring that changes one byte of
// any output fails here.
var outputMatrix = []outputStep{
	{args: "synth -arch llama -o {d}/llama/model.safetensors -layers 2 -hidden 256 " +
		"-intermediate 512 -vocab 512"},
	{args: "synth -o {d}/syn/model.safetensors -layers 1 -hidden 128 -intermediate 384 " +
		"-dtype f16 -seed 3"},
	{args: "synth -arch llama -o {d}/im/model.safetensors -layers 2 -hidden 768 " +
		"-intermediate 2048 -vocab 512 -dtype f32 -seed 13"},

	// The tcast layout on the fixture, datatypes of every family.
	{args: "convert {r}/iris.bf16.safetensors -dtype mxfp4 -o {d}/iris-mxfp4"},
	{args: "convert {r}/iris.bf16.safetensors -dtype nvfp4 -o {d}/iris-nvfp4.safetensors"},
	{args: "convert {r}/iris.bf16.safetensors -dtype mxfp8e4 -o {d}/iris-mxfp8e4"},
	{args: "convert {r}/iris.bf16.safetensors -dtype mxfp6e2 -o {d}/iris-mxfp6e2"},
	{args: "convert {r}/iris.bf16.safetensors -dtype mxint8 -o {d}/iris-mxint8"},
	{args: "convert {r}/iris.bf16.safetensors -dtype int4_g32 -o {d}/iris-int4"},
	{args: "convert {r}/iris.bf16.safetensors -dtype uint4_g32 -o {d}/iris-uint4"},
	{args: "convert {r}/iris.bf16.safetensors -dtype fp8e4_channel -o {d}/iris-fp8c"},
	{args: "convert {r}/iris.bf16.safetensors -dtype bfp16 -o {d}/iris-bfp16"},
	{args: "convert {r}/iris.bf16.safetensors -dtype nf4 -o {d}/iris-nf4"},
	{args: "convert {r}/iris.bf16.safetensors -dtype mxfi4 -o {d}/iris-mxfi4"},
	{args: "convert {r}/iris.bf16.safetensors -dtype icb44fi2_e32s8 -o {d}/iris-icb"},
	{args: "convert {r}/iris.bf16.safetensors -dtype mxfp4 -sparsity 2:4 -o {d}/iris-24"},
	{args: "convert {r}/iris.bf16.safetensors -dtype nvfp4 -scale-search -o {d}/iris-ss"},
	{args: "convert {r}/iris.bf16.safetensors -dtype mxfp4 -shard-size 20KB -o {d}/iris-shards"},
	{args: "convert {r}/iris.bf16.safetensors -dtype float8_e4m3fn -o {d}/iris-e4m3"},
	{args: "convert {r}/iris.bf16.safetensors -dtype mxfp4 -json -o {d}/iris-json", stdout: true},

	// Every loader layout on the synth Llama.
	{args: "convert {d}/llama -dtype int4_g128 -layout compressed-tensors -o {d}/ct-int4"},
	{args: "convert {d}/llama -dtype uint4_g128 -layout compressed-tensors -o {d}/ct-uint4"},
	{args: "convert {d}/llama -dtype nvfp4 -layout compressed-tensors -o {d}/ct-nvfp4"},
	{args: "convert {d}/llama -dtype mxfp4 -layout compressed-tensors -o {d}/ct-mxfp4"},
	{args: "convert {d}/llama -dtype fp8e4_channel -layout compressed-tensors -o {d}/ct-fp8"},
	{args: "convert {d}/llama -dtype fp8e4_block128 -layout compressed-tensors -o {d}/ct-fp8b"},
	{args: "convert {d}/llama -sparsity 2:4 -layout compressed-tensors -o {d}/ct-24"},
	{args: "convert {d}/llama -sparsity 2:4 -dtype fp8e4_channel -layout compressed-tensors " +
		"-o {d}/ct-24-fp8"},
	{args: "convert {d}/llama -sparsity 2:4 -dtype int4_g128 -sparsity-format dense " +
		"-layout compressed-tensors -o {d}/ct-24-dense"},
	{args: "convert {d}/llama -dtype mxfp4 -layout gpt-oss -o {d}/gptoss"},
	{args: "convert {d}/llama -dtype nvfp4 -layout modelopt -o {d}/modelopt"},
	{args: "convert {d}/llama -dtype fp8e4_block128 -layout fp8-block -o {d}/fp8block"},
	{args: "convert {d}/llama -dtype mxfp4 -rotate hadamard -o {d}/rot"},
	{args: "convert {d}/syn -dtype mxfp4 -o {d}/syn-mxfp4"},
	{args: "convert {d}/syn -dtype mxfp4 -scale-mode even -axis 0 -o {d}/syn-even"},

	// GGUF: llama.cpp model files, mixes and types, generic GGUF.
	{args: "convert {d}/llama -layout gguf -dtype q4_k_m -o {d}/q4km.gguf"},
	{args: "convert {d}/llama -layout gguf -dtype q8_0 -o {d}/q80.gguf"},
	{args: "convert {d}/llama -layout gguf -dtype q6_k -o {d}/q6k.gguf"},
	{args: "convert {d}/llama -layout gguf -dtype q3_k_m -gguf-pure -o {d}/q3kmp.gguf"},
	{args: "convert {d}/llama -layout gguf -dtype iq4_xs -o {d}/iq4xs.gguf"},
	{args: "convert {d}/llama -layout gguf -dtype q4_0 -type-for ffn_down=q5_1 -o {d}/q40.gguf"},
	{args: "convert {d}/llama -layout gguf -dtype f16 -o {d}/f16.gguf"},
	{args: "convert {d}/llama -layout gguf -dtype mxfp4 -o {d}/mxfp4.gguf"},
	{args: "convert {d}/im -layout gguf -dtype q3_k_m -imatrix {t}/llama_imatrix.npz " +
		"-o {d}/im-q3km.gguf"},
	{args: "convert {d}/im -layout gguf -dtype q2_k -imatrix {t}/llama_imatrix.npz " +
		"-o {d}/im-q2k.gguf"},
	{args: "convert {d}/im -layout gguf -dtype iq4_nl -imatrix {t}/llama_imatrix.npz " +
		"-o {d}/im-iq4nl.gguf"},
	{args: "convert {d}/im -layout gguf -dtype q5_k_s -o {d}/im-q5ks.gguf"},
	{args: "convert {r}/iris.bf16.safetensors -layout gguf -dtype q8_0 -o {d}/iris.gguf"},
	{args: "convert {d}/q80.gguf -layout gguf -dtype q4_k_m -allow-requantize -o {d}/re-q4km.gguf"},

	// Reading back: decompress, verify and inspect.
	{args: "decompress -o {d}/iris-plain.safetensors {d}/iris-mxfp4"},
	{args: "decompress -to f16 -o {d}/iris-plain16.safetensors {d}/iris-nvfp4.safetensors"},
	{args: "decompress -o {d}/ct-plain {d}/ct-int4"},
	{args: "decompress -to bf16 -o {d}/q4km-plain.safetensors {d}/q4km.gguf"},
	{args: "decompress -o {d}/rot-plain {d}/rot"},
	{args: "verify -json {r}/iris.bf16.safetensors {d}/iris-mxfp4", stdout: true},
	{args: "verify -json {d}/llama {d}/ct-24", stdout: true},
	{args: "verify -json -imatrix {t}/llama_imatrix.npz {d}/im {d}/im-q3km.gguf", stdout: true},
	{args: "verify -compare -json -label a,b {d}/llama {d}/ct-nvfp4 {d}/modelopt", stdout: true},
	{args: "inspect -json {d}/iris-24", stdout: true},
	{args: "inspect -json {d}/q4km.gguf", stdout: true},
	{args: "inspect -json {d}/gptoss", stdout: true},
	{args: "report -o {d}/report.html -label q4_k_m,q8_0 {d}/llama {d}/q4km.gguf {d}/q80.gguf"},

	// Casts of one array and their decompression.
	{args: "cast -dtype mxfp4 -o {d}/c-mxfp4 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype nvfp4 -scale-search -o {d}/c-nvfp4 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype int4_g32 -axis 0 -o {d}/c-int4 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype uint8_g32 -o {d}/c-uint8 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype mxfp4 -sparsity 2:4 -o {d}/c-24 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype e5m2 -round stochastic -seed 7 -o {d}/c-e5m2 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype e4m3fn -overflow ieee -o {d}/c-e4m3 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype int8_channel -full-range -o {d}/c-int8 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype nf4 -o {d}/c-nf4 {r}/conv2d_2.f32.npy"},
	{args: "cast -dtype mx6 -o {d}/c-mx6 {r}/conv2d_2.f32.npy"},
	{args: "decompress -o {d}/c-mxfp4.npy {d}/c-mxfp4"},
	{args: "decompress -to bf16 -o {d}/c-24.npy {d}/c-24"},

	// Lists.
	{args: "datatypes -json", stdout: true},
	{args: "formats -json e4m3fn e2m1 e8m0 int4 float8_e4m3fnuz", stdout: true},
}

// TestOutputsUnchanged runs the output matrix and compares the SHA-256 of
// every output file (and of the JSON reports) with testdata/outputs.golden.
// go test -run TestOutputsUnchanged -update-outputs rewrites the golden;
// do that only for a change of output meant and said in its commit.
func TestOutputsUnchanged(t *testing.T) {
	goldenPath, err := filepath.Abs(filepath.Join("testdata", "outputs.golden"))
	require.NoError(t, err)
	d := t.TempDir()
	for _, f := range []string{"../../testdata/iris.bf16.safetensors",
		"../../testdata/conv2d_2.f32.npy", "testdata/llama_imatrix.npz"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, filepath.Base(f)), b, 0o644))
	}
	// Relative paths only, so that no output depends on where the test runs.
	t.Chdir(d)
	expand := strings.NewReplacer("{d}/", "", "{t}/", "", "{r}/", "")
	inputs := digestTree(t, ".")
	var got []string
	for i, s := range outputMatrix {
		code, out, errs := tcast(strings.Fields(expand.Replace(s.args))...)
		require.Equal(t, 0, code, "tcast %s\n%s", s.args, errs)
		if s.stdout {
			got = append(got, digestLine(fmt.Sprintf("stdout %02d %s", i, s.args), []byte(out)))
		}
	}
	for _, l := range digestTree(t, ".") {
		if !slices.Contains(inputs, l) {
			got = append(got, l)
		}
	}
	text := strings.Join(got, "\n") + "\n"
	if *updateOutputs {
		require.NoError(t, os.WriteFile(goldenPath, []byte(text), 0o644))
		return
	}
	want, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	if string(want) != text {
		t.Errorf("outputs differ from %s:\n%s", goldenPath, golden.Diff(string(want), text))
	}
}

// seconds matches the timings of the JSON reports, which differ run by run.
var seconds = regexp.MustCompile(`"seconds": [0-9.e+-]+`)

// digestLine is "sha256 size name" of one output.
func digestLine(name string, b []byte) string {
	b = seconds.ReplaceAll(b, []byte(`"seconds": 0`))
	return fmt.Sprintf("%x %d %s", sha256.Sum256(b), len(b), name)
}

// digestTree digests every file below d, named by its path in d.
func digestTree(t *testing.T, d string) []string {
	var lines []string
	err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, digestLine("file "+filepath.ToSlash(p), b))
		return nil
	})
	require.NoError(t, err)
	return lines
}
