package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// nanNPY writes a copy of testdata/conv2d_2.f32.npy (18432 values, shape
// 32×64×3×3) with its element 1000 made NaN and returns its path.
func nanNPY(t *testing.T) string {
	t.Helper()
	arr, err := npy.ReadFile("../../testdata/conv2d_2.f32.npy")
	require.NoError(t, err)
	x, err := arr.Float32s()
	require.NoError(t, err)
	require.Len(t, x, 18432)
	x[1000] = float32(math.NaN())
	var b bytes.Buffer
	require.NoError(t, npy.WriteSlice(&b, arr.Shape, x))
	p := filepath.Join(t.TempDir(), "nan.npy")
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
	return p
}

// TestCastRefusesNonFiniteCLI: tcast cast of an input holding a NaN exits 1
// by default, naming the file and its NaN/+Inf/-Inf counts and
// -allow-nonfinite, and writes nothing (on i15-int it exited 0 and printed
// "max abs error 0, exact" over 18432 NaN values).
func TestCastRefusesNonFiniteCLI(t *testing.T) {
	in := nanNPY(t)
	for _, dt := range []string{"fp8e4_tensor", "mxfp4", "bfloat16"} {
		t.Run(dt, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			code, stdout, stderr := tcast("cast", "-dtype", dt, "-o", out, in)
			assert.Equal(t, 1, code, stdout+stderr)
			assert.Contains(t, stderr, in+": holds 1 NaN, 0 +Inf, 0 -Inf values")
			assert.Contains(t, stderr, "no output was written; pass -allow-nonfinite")
			assert.NotContains(t, stderr, "-exclude", "cast has no -exclude")
			left, err := os.ReadDir(parent)
			require.NoError(t, err)
			assert.Empty(t, left, "nothing written")
		})
	}
	code, stdout, _ := tcast("help", "cast")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "-allow-nonfinite")
}

// TestCastAllowNonFiniteCLI: with -allow-nonfinite tcast cast casts per the
// block policy (fp8e4_tensor: one scale, all 18432 values NaN; mxfp4: the
// NaN's block of 32) and its figures say that finite values were lost: no
// "exact", no 0 error; info.json gives nonfinite_outputs and null error
// figures. On i15-int -allow-nonfinite did not exist.
func TestCastAllowNonFiniteCLI(t *testing.T) {
	in := nanNPY(t)
	for _, c := range []struct {
		dt   string
		lost int
	}{
		{"fp8e4_tensor", 18431}, // one tensor scale, NaN: every other value lost
		{"mxfp4", 31},           // the NaN's block of 32 (docs/NUMERICS.md §4.2)
		{"bfloat16", 0},         // element by element: only the NaN stays NaN
	} {
		t.Run(c.dt, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := tcast("cast", "-dtype", c.dt, "-allow-nonfinite", "-o", out, in)
			require.Equal(t, 0, code, stderr)
			raw, err := os.ReadFile(filepath.Join(out, "info.json"))
			require.NoError(t, err)
			var info struct {
				Stats map[string]any `json:"stats"`
			}
			require.NoError(t, json.Unmarshal(raw, &info))
			if c.lost == 0 {
				assert.NotContains(t, stdout, "lost")
				assert.NotContains(t, info.Stats, "nonfinite_outputs")
				return
			}
			assert.NotContains(t, stdout, "exact")
			assert.NotContains(t, stdout, "max abs error 0,")
			assert.Contains(t, stdout, "max abs error +Inf, SQNR lost: "+strconv.Itoa(c.lost)+" finite values became NaN or Inf")
			assert.Equal(t, float64(c.lost), info.Stats["nonfinite_outputs"])
			assert.Nil(t, info.Stats["max_abs_error"])
			assert.Contains(t, info.Stats, "max_abs_error")
			assert.Nil(t, info.Stats["sqnr_db"])
			// tcast decompress reads it back.
			code, _, stderr = tcast("decompress", "-o", filepath.Join(t.TempDir(), "x.npy"), out)
			assert.Equal(t, 0, code, stderr)
		})
	}
}
