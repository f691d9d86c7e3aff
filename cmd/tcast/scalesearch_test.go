package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
)

// TestImatrixScaleSearchConvert: with -scale-search, the rule-scaled
// datatypes take -imatrix in the tcast layout (refused without the
// search). On the synth llama and testdata/llama_imatrix.npz every weight
// matrix of the layers uses its importance vector, and its
// importance-weighted SQNR, measured here from the decoded tensors, is at
// least that of the search without the matrix (the candidates are the same;
// the weighted search keeps, per block, the one of least weighted error)
// and at least the rule's.
func TestImatrixScaleSearchConvert(t *testing.T) {
	ic := newImatrixCase(t)
	m, dir, src, in, names, shapes, hf := ic.m, ic.dir, ic.src, ic.in, ic.names, ic.shapes, ic.hf
	var table strings.Builder
	for _, dt := range []string{"mxfp4", "nvfp4", "int4_g128", "fp8e4_block128"} {
		conv := func(extra ...string) (*load.Checkpoint, *convert.Result) {
			return ic.convert(t, fmt.Sprintf("%s-%d", dt, len(extra)), dt, extra...)
		}
		// Without -scale-search the matrix weighs nothing: refused, naming the way to use it.
		code, _, stderr := tcast("convert", src, "-layout", "tcast", "-dtype", dt, "-o", filepath.Join(dir, "refused"), "-imatrix", m.Path)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "add -scale-search", dt)

		rule, _ := conv()
		plain, _ := conv("-scale-search")
		weighted, res := conv("-scale-search", "-imatrix", m.Path)
		assert.True(t, res.ScaleSearch)
		status := map[string]convert.ImportanceStatus{}
		for _, r := range res.Tensors {
			status[r.Name] = r.Importance
		}
		var gain float64
		for _, name := range names {
			h := hf[name]
			assert.Equal(t, convert.ImportanceUsed, status[h], "%s %s", dt, h)
			imps, err := m.Importance(name, shapes[name][1], 1)
			require.NoError(t, err)
			x, _, err := in.Float32(h)
			require.NoError(t, err)
			yr, _, err := rule.Float32(h)
			require.NoError(t, err)
			yp, _, err := plain.Float32(h)
			require.NoError(t, err)
			yw, _, err := weighted.Float32(h)
			require.NoError(t, err)
			r, before, after := weightedSQNR(x, yr, imps[0]), weightedSQNR(x, yp, imps[0]), weightedSQNR(x, yw, imps[0])
			assert.GreaterOrEqual(t, after, before-1e-9, "%s %s", dt, name)
			assert.GreaterOrEqual(t, after, r-1e-9, "%s %s", dt, name)
			gain += after - before
			fmt.Fprintf(&table, "%-24s %-15s rule %8.3f  search %8.3f  search+imatrix %8.3f\n", name, dt, r, before, after)
		}
		fmt.Fprintf(&table, "mean gain of -imatrix with -scale-search, %s: %+.3f dB weighted\n", dt, gain/float64(len(names)))
	}
	t.Log("\nimportance-weighted SQNR: rule, -scale-search, -scale-search -imatrix\n" + table.String())
}

// TestScaleSearchConvertCLI: convert -scale-search says so in its summary
// and JSON, records it in the output's metadata, never lowers the mean
// SQNR, and is refused where it would change nothing.
func TestScaleSearchConvertCLI(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := tcast("convert", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "-scale-search")

	sqnr := map[bool]float64{}
	for _, search := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprint(search))
		args := []string{"convert", irisFixture, "-dtype", "nvfp4", "-o", out, "-workers", "2"}
		if search {
			args = append(args, "-scale-search")
		}
		code, stdout, stderr := tcast(args...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, search, strings.Contains(stdout, "(tcast layout, nvfp4, scale search)"), stdout)
		assert.Equal(t, search, strings.Contains(stdout, "\nscale search: SQNR "), stdout)
		c, err := load.Open(out)
		require.NoError(t, err)
		_, ok := c.Metadata()[layout.KeyScaleSearch]
		assert.Equal(t, search, ok)
		require.NoError(t, c.Close())
		code, stdout, stderr = tcast(append(args[:len(args):len(args)], "-json", "-force")...)
		require.Equal(t, 0, code, stderr)
		var res convert.Result
		require.NoError(t, json.Unmarshal([]byte(stdout), &res))
		assert.Equal(t, search, res.ScaleSearch)
		require.NotNil(t, res.Summary.SQNR)
		sqnr[search] = *res.Summary.SQNR
	}
	assert.Greater(t, sqnr[true], sqnr[false])

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dtype", "mxfp4", "-layout", "gguf"}, "-scale-search does not apply to the gguf layout, whose types are quantized by llama.cpp's own quantizers"},
		{[]string{"-dtype", "uint4_g128"}, "-scale-search: uint4_g128 has no scale chosen by rule to search"},
		{[]string{"-dtype", "nf4"}, "drop -scale-search, or give -dtype an MX, NVFP4"},
	} {
		args := append([]string{"convert", irisFixture, "-scale-search", "-o", filepath.Join(dir, "refused")}, tc.args...)
		code, _, stderr := tcast(args...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
}

// TestScaleSearchCastCLI: cast -scale-search records the search in
// info.json, gives an SQNR at least the rule's, and its dequant.npy is what
// tcast decompress (the unchanged decoders) rebuilds from the packed parts;
// a datatype without a searchable scale is a usage error.
func TestScaleSearchCastCLI(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 4))
	x := make([]float32, 8*256)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()))
	}
	in := filepath.Join(dir, "x.npy")
	writeNpy(t, in, []int{8, 256}, x)
	code, stdout, _ := tcast("cast", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "-scale-search")

	for _, dt := range []string{"mxfp4", "nvfp4", "int4_g128", "fp8e4_channel"} {
		infos := map[bool]castdir.Info{}
		for _, search := range []bool{false, true} {
			out := filepath.Join(dir, dt+fmt.Sprint(search))
			args := []string{"cast", "-dtype", dt, "-o", out, in}
			if search {
				args = append(args, "-scale-search")
			}
			code, stdout, stderr := tcast(args...)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, search, strings.Contains(stdout, ", scale search ("), stdout)
			raw, err := os.ReadFile(filepath.Join(out, "info.json"))
			require.NoError(t, err)
			assert.Equal(t, search, strings.Contains(string(raw), `"scale_search": true`), dt)
			d, err := castdir.Open(out)
			require.NoError(t, err)
			assert.Equal(t, search, d.Info.ScaleSearch, dt)
			infos[search] = d.Info
			if !search {
				continue
			}
			dec := filepath.Join(dir, dt+".dec.npy")
			code, _, stderr = tcast("decompress", "-o", dec, out)
			require.Equal(t, 0, code, stderr)
			want, err := os.ReadFile(filepath.Join(out, "dequant.npy"))
			require.NoError(t, err)
			got, err := os.ReadFile(dec)
			require.NoError(t, err)
			assert.Equal(t, want, got, dt)
		}
		require.NotNil(t, infos[false].Stats.SQNR)
		require.NotNil(t, infos[true].Stats.SQNR)
		assert.GreaterOrEqual(t, *infos[true].Stats.SQNR, *infos[false].Stats.SQNR, dt)
	}
	for _, dt := range []string{"bfloat16", "e4m3fn", "uint4_g128", "nf4"} {
		code, _, stderr := tcast("cast", "-dtype", dt, "-scale-search", "-o", filepath.Join(dir, "refused"), in)
		assert.Equal(t, 2, code, "%s: %s", dt, stderr)
		assert.Contains(t, stderr, "-scale-search: "+dt+" has no scale chosen by rule to search", dt)
	}
}
