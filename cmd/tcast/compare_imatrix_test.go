package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// TestCompareImatrix: verify -compare and report take -imatrix and show
// each converted weight's importance-weighted SQNR, which for this tiny
// MXFP4 weight is summed by hand. Its rows' maximum 6 gives the E8M0
// scale 2^(⌊log2 6⌋ − 2) = 1, so 1.2 → 1, 2.4 → 2 and 5.5 → 6 on the E2M1
// grid; the importance is 4 for column 1, 9 for column 2, 1 elsewhere.
func TestCompareImatrix(t *testing.T) {
	dir := t.TempDir()
	const w = "model.layers.0.mlp.up_proj.weight"
	vals := make([]float32, 64)
	copy(vals, []float32{6, 1.2, 2.4})
	copy(vals[32:], []float32{6, 5.5})
	data := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	src := filepath.Join(dir, "src.safetensors")
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{{Name: w, DType: safetensors.F32, Shape: []int{2, 32}, Data: data}}, nil))
	conv := filepath.Join(dir, "mx")
	code, _, stderr := tcast("convert", src, "-dtype", "mxfp4", "-o", conv)
	require.Equal(t, 0, code, stderr)
	imp := make([]float32, 32)
	for i := range imp {
		imp[i] = 1
	}
	imp[1], imp[2] = 4, 9
	im := filepath.Join(dir, "imp.gguf")
	require.NoError(t, imatrix.WriteFile(im, &imatrix.Stats{ChunkCount: 1, ChunkSize: 1,
		Entries: []imatrix.Stat{{Name: w, Sum2: imp, Counts: []int64{1}}}}, imatrix.FormatGGUF))

	f := func(v float32) float64 { return float64(v) }
	e1, e2, e3 := f(1.2)-1, f(2.4)-2, 0.5
	want := 10 * math.Log10((36+4*f(1.2)*f(1.2)+9*f(2.4)*f(2.4)+36+4*5.5*5.5)/(4*e1*e1+9*e2*e2+4*e3*e3))
	plain := 10 * math.Log10((36+f(1.2)*f(1.2)+f(2.4)*f(2.4)+36+5.5*5.5)/(e1*e1+e2*e2+e3*e3))

	code, stdout, stderr := tcast("verify", "-compare", "-imatrix", im, src, conv)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^ *tensor\| *datatype\| *bits/value\| *SQNR dB\| *weighted dB\|$`, stdout)
	assert.Regexp(t, fmt.Sprintf(`(?m)^ *%s\| *mxfp4e2\| *4\.250\| *%s\| *%s\|$`, regexp.QuoteMeta(w),
		regexp.QuoteMeta(fmt.Sprintf("%.2f", plain)), regexp.QuoteMeta(fmt.Sprintf("%.2f", want))), stdout)

	page := filepath.Join(dir, "r.html")
	code, _, stderr = tcast("report", "-o", page, "-imatrix", im, src, conv)
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<th>weighted SQNR dB</th>")
	assert.Contains(t, string(b), fmt.Sprintf("<td>%s</td>", trimZeros(fmt.Sprintf("%.2f", want))))

	// convert -report with -imatrix draws the weighted SQNR of what it
	// wrote, and its page says what the recipe did.
	page = filepath.Join(dir, "c.html")
	code, _, stderr = tcast("convert", src, "-dtype", "mxfp4", "-scale-search", "-imatrix", im, "-o", filepath.Join(dir, "mxs"), "-report", page)
	require.Equal(t, 0, code, stderr)
	b, err = os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<th>weighted SQNR dB</th>")
	assert.Contains(t, string(b), "mxfp4e2; scale search</td>")

	code, _, stderr = tcast("report", "-o", filepath.Join(dir, "x.html"), "-imatrix", filepath.Join(dir, "none.dat"), src, conv)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-imatrix: ")
}

// trimZeros drops a decimal number's trailing zeros, as the page writes
// its figures.
func trimZeros(s string) string {
	for len(s) > 1 && (s[len(s)-1] == '0' || s[len(s)-1] == '.') {
		last := s[len(s)-1]
		s = s[:len(s)-1]
		if last == '.' {
			break
		}
	}
	return s
}
