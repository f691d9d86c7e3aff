package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

const irisFixture = "../../testdata/iris.bf16.safetensors"

// TestConvertVerifyDecompress runs the checkpoint commands end to end on the
// bundled fixture.
func TestConvertVerifyDecompress(t *testing.T) {
	out := filepath.Join(t.TempDir(), "conv")
	code, stdout, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-workers", "2")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "(tcast layout, mxfp4)")
	assert.Contains(t, stdout, "ratio")
	assert.Contains(t, stderr, "189/189 tensors")

	// Flags after the positional argument, JSON report, refusal to overwrite.
	code, _, stderr = tcast("convert", irisFixture, "-o", out, "-dtype", "mxfp4")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "exists")
	code, stdout, stderr = tcast("convert", "-dtype", "mxfp4", "-o", out, "-force", "-json", irisFixture)
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Tensors []struct {
			Name     string   `json:"name"`
			DataType string   `json:"datatype"`
			SQNR     *float64 `json:"sqnr_db"`
		} `json:"tensors"`
		BytesIn  int64 `json:"bytes_in"`
		BytesOut int64 `json:"bytes_out"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	assert.Len(t, rep.Tensors, 189)
	assert.Greater(t, rep.BytesIn, 3*rep.BytesOut)

	code, stdout, stderr = tcast("verify", "-min-sqnr", "10", irisFixture, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "189 tensors checked, 0 below -min-sqnr 10.00 dB or with values lost to NaN/Inf")
	code, _, stderr = tcast("verify", irisFixture, out, "-min-sqnr", "60")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "below -min-sqnr")

	plain := filepath.Join(t.TempDir(), "plain.safetensors")
	code, _, stderr = tcast("decompress", "-o", plain, "-to", "bf16", out)
	require.Equal(t, 0, code, stderr)
	f, err := safetensors.Open(plain)
	require.NoError(t, err)
	defer f.Close()
	assert.Len(t, f.Tensors(), 189)
	for _, ti := range f.Tensors() {
		assert.Equal(t, safetensors.BF16, ti.DType, ti.Name)
	}
}

func TestConvertBadInput(t *testing.T) {
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.safetensors")
	b, err := os.ReadFile(irisFixture)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(trunc, b[:1000], 0o644))
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"convert", irisFixture, "-o", dir + "/a"}, 2, "-dtype is required"},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4"}, 2, "-o is required"},
		{[]string{"convert", irisFixture, "-dtype", "mxfp3", "-o", dir + "/a"}, 2, "mxfp4"},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-layout", "onnx", "-o", dir + "/a"}, 2, "unknown layout"},
		{[]string{"convert", irisFixture, "-dtype", "mxfp4", "-include", "(", "-o", dir + "/a"}, 2, "-include"},
		{[]string{"convert", trunc, "-dtype", "mxfp4", "-o", dir + "/b"}, 1, "trunc.safetensors"},
		{[]string{"convert", dir + "/missing.safetensors", "-dtype", "mxfp4", "-o", dir + "/c"}, 1, "missing.safetensors"},
		{[]string{"verify", irisFixture}, 2, "want ORIG and CONVERTED"},
		{[]string{"verify", irisFixture, irisFixture, irisFixture}, 2, "want ORIG and CONVERTED, got 3 arguments: add -compare"},
		{[]string{"verify", irisFixture, trunc}, 1, "trunc.safetensors"},
	}
	for _, tc := range tests {
		code, _, stderr := tcast(tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
	for _, d := range []string{"b", "c"} {
		_, err := os.Stat(filepath.Join(dir, d, "model.safetensors"))
		assert.True(t, os.IsNotExist(err), "no output for a failed conversion")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"5GB": 5e9, "500MB": 5e8, "2GiB": 2 << 30, "1.5KiB": 1536, "123": 123, "64B": 64, "10 MB": 1e7} {
		got, err := parseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	// NaN passed every comparison (and became a negative size), and a
	// fraction of a byte was truncated to 0, which turns sharding off.
	for _, in := range []string{"", "-1GB", "GB", "5XB", "0", "NaN", "nanMB", "0.5", "0.0001KB", "Inf", "1e30TB"} {
		_, err := parseSize(in)
		assert.Error(t, err, in)
	}
	out := filepath.Join(t.TempDir(), "sharded")
	code, stdout, stderr := tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-shard-size", "200KB")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, out)
	assert.FileExists(t, filepath.Join(out, "model.safetensors.index.json"))
	code, _, stderr = tcast("convert", irisFixture, "-dtype", "mxfp4", "-o", out, "-shard-size", "lots")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-shard-size")
}
