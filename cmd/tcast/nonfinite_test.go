package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// poisonSynth writes a tcast synth checkpoint (1 layer, hidden 64, MLP 128,
// BF16) and puts 2 NaN and 1 +Inf into the 8192 values of
// model.layers.0.mlp.down_proj.weight, by their BF16 codes.
func poisonSynth(t *testing.T) (string, string) {
	t.Helper()
	src, _ := synthTo(t, t.TempDir(), "-layers", "1", "-hidden", "64", "-intermediate", "128", "-vocab", "8")
	const name = "model.layers.0.mlp.down_proj.weight"
	f, err := safetensors.Open(src)
	require.NoError(t, err)
	ti, ok := f.Tensor(name)
	require.True(t, ok)
	require.Equal(t, safetensors.BF16, ti.DType)
	require.Equal(t, int64(2*8192), ti.Size)
	require.NoError(t, f.Close())
	fh, err := os.OpenFile(src, os.O_RDWR, 0)
	require.NoError(t, err)
	for i, c := range map[int]uint16{17: 0x7f80, 100: 0x7fc0, 5000: 0xffc0} { // +Inf, NaN, −NaN
		var b [2]byte
		binary.LittleEndian.PutUint16(b[:], c)
		_, err := fh.WriteAt(b[:], ti.Offset+int64(2*i))
		require.NoError(t, err)
	}
	require.NoError(t, fh.Close())
	return src, name
}

// TestConvertRefusesNonFiniteCLI checks tcast convert on a weight holding
// NaN and Inf: by default it exits 1, names the weight and its counts, says
// what to do and writes nothing; -allow-nonfinite casts it (fp8e4_tensor's
// single scale makes all 8192 values NaN) with a warning; -exclude keeps it.
func TestConvertRefusesNonFiniteCLI(t *testing.T) {
	src, name := poisonSynth(t)
	for _, c := range []struct{ layout, dt, ext string }{
		{"tcast", "fp8e4_tensor", ".safetensors"},
		{"tcast", "mxfp4", ".safetensors"},
		{"compressed-tensors", "fp8e4_tensor", ""},
		{"gguf", "q8_0", ".gguf"},
	} {
		t.Run(c.layout+"/"+c.dt, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out"+c.ext)
			args := []string{"convert", src, "-dtype", c.dt, "-layout", c.layout, "-o", out, "-workers", "2"}
			if c.layout == "gguf" {
				args = append(args, "-gguf-generic") // synth writes no tokenizer
			}
			code, _, stderr := tcast(args...)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, "tcast convert: "+src+": 1 weight to cast holds NaN or Inf values")
			assert.Contains(t, stderr, "\n  "+name+": 2 NaN, 1 +Inf, 0 -Inf\n")
			assert.Contains(t, stderr, "no output was written; pass -allow-nonfinite")
			assert.Contains(t, stderr, "-exclude RE")
			left, err := os.ReadDir(parent)
			require.NoError(t, err)
			assert.Empty(t, left, "no output, no temporary file")

			code, stdout, stderr := tcast(append(args, "-allow-nonfinite")...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "source holds 2 NaN, 1 +Inf, 0 -Inf", "the report's note")
			assert.Contains(t, stderr, "tcast convert: warning: 1 weight was cast with NaN or Inf values in the source")
			assert.Contains(t, stderr, name+" (2 NaN, 1 +Inf, 0 -Inf)")
			ck, err := load.Open(out)
			require.NoError(t, err)
			v, _, err := ck.Float32(name)
			require.NoError(t, err)
			nans := 0
			for _, x := range v {
				if math.IsNaN(float64(x)) {
					nans++
				}
			}
			switch c.dt {
			case "fp8e4_tensor":
				assert.Equal(t, 8192, nans, "one scale for the tensor, and it is NaN")
			case "mxfp4":
				assert.Equal(t, 3*32, nans, "three blocks of 32 (docs/NUMERICS.md §4.2)")
			default: // Q8_0 follows llama.cpp's quantizer, not the MX block policy
				assert.Positive(t, nans)
			}
			require.NoError(t, ck.Close())

			code, _, stderr = tcast(append(args, "-force", "-exclude", "down_proj")...)
			require.Equal(t, 0, code, stderr)
			assert.NotContains(t, stderr, "NaN")
		})
	}
	// The JSON report gives the counts of the weight cast.
	out := filepath.Join(t.TempDir(), "o.safetensors")
	code, stdout, stderr := tcast("convert", src, "-dtype", "mxfp4", "-o", out, "-allow-nonfinite", "-json")
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Tensors []struct {
			Name         string
			SourceNaN    int `json:"source_nan"`
			SourcePosInf int `json:"source_pos_inf"`
			SourceNegInf int `json:"source_neg_inf"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	found := false
	for _, r := range rep.Tensors {
		if r.Name == name {
			found = true
			assert.Equal(t, [3]int{2, 1, 0}, [3]int{r.SourceNaN, r.SourcePosInf, r.SourceNegInf})
		} else {
			assert.Zero(t, r.SourceNaN+r.SourcePosInf+r.SourceNegInf, r.Name)
		}
	}
	assert.True(t, found)

	code, stdout, _ = tcast("help", "convert")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "-allow-nonfinite")
	assert.Contains(t, stdout, "is refused")
}

// TestLostValuesFiguresCLI: a weight cast with -allow-nonfinite whose
// finite values became NaN (fp8e4_tensor: one NaN scale, 8189 finite
// values lost) reports its error as not finite everywhere: SQNR "lost" and
// max abs error +Inf in convert's and verify's tables, null sqnr_db,
// max_abs_error (and mse) beside nonfinite_outputs in their -json, "lost"
// in tcast report's page; never "exact" or 0. On i15-int all of them said
// exact, 0.
func TestLostValuesFiguresCLI(t *testing.T) {
	src, name := poisonSynth(t)
	const lost = 8192 - 3
	out := filepath.Join(t.TempDir(), "o.safetensors")
	code, stdout, stderr := tcast("convert", src, "-dtype", "fp8e4_tensor", "-o", out, "-allow-nonfinite")
	require.Equal(t, 0, code, stderr)
	row := lineOf(t, stdout, name)
	assert.NotContains(t, row, "exact")
	assert.Regexp(t, `\s+lost\s+\+Inf\s+`, row)
	assert.Contains(t, row, "8189 finite values became NaN or Inf")
	other := lineOf(t, stdout, "model.layers.0.mlp.up_proj.weight")
	assert.NotContains(t, other, "lost", "a weight without lost values keeps its figures")

	checkJSON := func(stdout string, mse bool) {
		t.Helper()
		var rep struct {
			Tensors []map[string]any `json:"tensors"`
		}
		if strings.HasPrefix(strings.TrimSpace(stdout), "[") {
			require.NoError(t, json.Unmarshal([]byte(stdout), &rep.Tensors))
		} else {
			require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
		}
		found := false
		for _, r := range rep.Tensors {
			if r["name"] != name {
				assert.NotEqual(t, nil, r["max_abs_error"], r["name"])
				continue
			}
			found = true
			assert.Equal(t, float64(lost), r["nonfinite_outputs"])
			for _, k := range []string{"sqnr_db", "max_abs_error"} {
				assert.Contains(t, r, k)
				assert.Nil(t, r[k], k)
			}
			if mse {
				assert.Contains(t, r, "mse")
				assert.Nil(t, r["mse"])
			}
		}
		assert.True(t, found)
	}
	code, stdout, stderr = tcast("convert", src, "-dtype", "fp8e4_tensor", "-o", out, "-allow-nonfinite", "-force", "-json")
	require.Equal(t, 0, code, stderr)
	checkJSON(stdout, false)

	code, stdout, _ = tcast("verify", src, out)
	assert.Equal(t, 1, code, "a weight that lost values fails verify")
	row = lineOf(t, stdout, name)
	assert.NotContains(t, row, "exact")
	assert.Regexp(t, `\|\s+lost\|\s+\+Inf\|\s+\+Inf\|\s+8189\|`, row)
	code, stdout, _ = tcast("verify", "-json", src, out)
	assert.Equal(t, 1, code)
	checkJSON(stdout, true)

	code, stdout, _ = tcast("verify", "-compare", "-json", src, out)
	assert.Equal(t, 1, code)
	var cmp struct {
		Tensors []struct {
			Name    string           `json:"name"`
			Recipes []map[string]any `json:"recipes"`
		} `json:"tensors"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &cmp), stdout)
	found := false
	for _, r := range cmp.Tensors {
		if r.Name == name {
			found = true
			require.Len(t, r.Recipes, 1)
			assert.Equal(t, float64(lost), r.Recipes[0]["nonfinite_outputs"])
			assert.Contains(t, r.Recipes[0], "sqnr_db")
			assert.Nil(t, r.Recipes[0]["sqnr_db"])
		}
	}
	assert.True(t, found, stdout)

	page := filepath.Join(t.TempDir(), "r.html")
	code, _, stderr = tcast("report", "-o", page, src, out)
	require.Equal(t, 0, code, stderr)
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	i := strings.Index(string(html), "<h2>Worst tensors</h2>")
	require.Positive(t, i)
	worst := string(html[i:])
	worst = worst[:strings.Index(worst, "</tr>\n<tr><td>2<")]
	assert.Contains(t, worst, "down_proj.<wbr/>weight")
	assert.Contains(t, worst, "<td>lost</td>")
	assert.Contains(t, worst, "+Inf")
	assert.NotContains(t, worst, "exact")
}

// lineOf returns the line of s that contains sub.
func lineOf(t *testing.T, s, sub string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	t.Fatalf("no line with %q in\n%s", sub, s)
	return ""
}
