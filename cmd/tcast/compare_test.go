package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/rotate"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

var update = flag.Bool("update", false, "rewrite testdata/verify_compare.golden")

// compareRecipes converts the iris fixture to mxfp4, int4_g128 and mxfp4
// with the scale search and 32-element Hadamard rotation (without the one
// weight whose rows no power of two ≥ 32 divides) in dir and returns the
// three checkpoints and their conversions' summaries.
func compareRecipes(t *testing.T, dir string) ([]string, []convert.Summary) {
	t.Helper()
	var outs []string
	var sums []convert.Summary
	for _, dt := range []string{"mxfp4", "int4_g128", "mxfp4+search+rot"} {
		out := filepath.Join(dir, "iris."+dt+".safetensors")
		var o convert.Options
		if name, ok := strings.CutSuffix(dt, "+search+rot"); ok {
			dt = name
			o.ScaleSearch, o.Rotate = true, rotate.Rotation{Kind: rotate.Hadamard, Block: 32}
			o.Exclude = regexp.MustCompile(`^unknown_344$`)
		}
		d, err := tc.Lookup(dt)
		require.NoError(t, err)
		o.DataType = d
		res, err := convert.Convert(irisFixture, out, o)
		require.NoError(t, err, dt)
		outs = append(outs, out)
		sums = append(sums, res.Summarize())
	}
	return outs, sums
}

// TestVerifyCompare prints the iris fixture under two recipes side by side
// (testdata/verify_compare.golden; go test -update rewrites it), as JSON
// with the same figures, and its means are the conversions' summaries.
func TestVerifyCompare(t *testing.T) {
	dir := t.TempDir()
	outs, sums := compareRecipes(t, dir)
	args := append([]string{"verify", "-compare", irisFixture}, outs...)
	code, text, stderr := tcast(args...)
	require.Equal(t, 0, code, stderr)
	golden := filepath.Join("testdata", "verify_compare.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(text), 0o666))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), text)

	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	require.Len(t, lines, 3+189+1, "three heads, a row per tensor, the means")
	assert.Regexp(t, `^ *\| *iris\.mxfp4\| *\| *\| *iris\.int4_g128\| *\| *\| *iris\.mxfp4\+search\+rot\|`, lines[0])
	// What each recipe did, from its metadata.
	assert.Regexp(t, `^ *recipe\| *mxfp4e2\| *\| *\| *int4_g128\| *\| *\| *mxfp4e2; scale search; rotated hadamard:32\|`, lines[1])
	assert.Regexp(t, `^ *tensor\| *datatype\| *bits/value\| *SQNR dB\| *datatype\|`, lines[2])
	// A weight int4_g128 keeps (64 values along its axis, less than a
	// group) and mxfp4 casts: E2M1 and an E8M0 per 32 is 4 + 8/32 bits.
	// The rotated recipe has a column of SQNR without rotation, which its
	// checkpoint records.
	assert.Regexp(t, `^ *tensor\|.*\| *datatype\| *bits/value\| *SQNR dB\| *unrotated dB\|$`, lines[2])
	assert.Regexp(t, `^ *conv2d/Conv2D_weights\| *mxfp4e2\| *4\.250\| *[0-9.]+\| *kept BF16\| *16\.000\| *exact\| *mxfp4e2 hadamard:32\| *4\.250\| *[0-9.]+\| *[0-9.]+\|$`, lines[4])
	assert.Regexp(t, `^ *conv2d/Conv2D_bn_offset\|.*\| *kept BF16\| *16\.000\| *exact\| *-\|$`, lines[3])
	assert.Regexp(t, `^ *mean by elements, converted tensors\| *mxfp4e2\|`, lines[len(lines)-1])

	code, js, stderr := tcast(append([]string{"verify", "-compare", "-json", "-label", "mx,int,mx search rot"}, args[2:]...)...)
	require.Equal(t, 0, code, stderr)
	var got struct {
		Source  string `json:"source"`
		Recipes []struct {
			Label    string   `json:"label"`
			Path     string   `json:"path"`
			Layout   string   `json:"layout"`
			DataType string   `json:"datatype"`
			Bits     float64  `json:"bits_per_value"`
			SQNR     *float64 `json:"sqnr_db"`
			Recipe   string   `json:"recipe"`
			Search   bool     `json:"scale_search"`
			Rotation string   `json:"rotation"`
			Unrot    *float64 `json:"sqnr_unrotated_db"`
			HasUnrot bool     `json:"has_sqnr_unrotated"`
		} `json:"recipes"`
		Tensors []struct {
			Name    string `json:"name"`
			Shape   []int  `json:"shape"`
			Recipes []*struct {
				DataType  string   `json:"datatype"`
				Converted bool     `json:"converted"`
				Bits      float64  `json:"bits_per_value"`
				SQNR      *float64 `json:"sqnr_db"`
				Rotation  string   `json:"rotation"`
				Unrot     *float64 `json:"sqnr_unrotated_db"`
				HasUnrot  bool     `json:"has_sqnr_unrotated"`
			} `json:"recipes"`
		} `json:"tensors"`
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&got), js)
	assert.Equal(t, irisFixture, got.Source)
	require.Len(t, got.Recipes, 3)
	f, err := safetensors.Open(irisFixture)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, got.Tensors, len(f.Tensors()))
	for i, ti := range f.Tensors() {
		tt := got.Tensors[i]
		assert.Equal(t, ti.Name, tt.Name, "source order")
		assert.Equal(t, ti.Shape, tt.Shape, ti.Name)
		require.Len(t, tt.Recipes, 3, ti.Name)
		// The third recipe rotated every weight it cast.
		assert.Equal(t, tt.Recipes[2].Converted, tt.Recipes[2].Rotation == "hadamard:32", ti.Name)
		assert.Equal(t, tt.Recipes[2].Converted, tt.Recipes[2].HasUnrot, ti.Name)
		assert.Equal(t, tt.Recipes[2].Converted, tt.Recipes[2].Unrot != nil, ti.Name)
		assert.Empty(t, tt.Recipes[0].Rotation, ti.Name)
		assert.False(t, tt.Recipes[0].HasUnrot, ti.Name)
		for _, c := range tt.Recipes {
			require.NotNil(t, c, ti.Name)
			if !c.Converted {
				assert.Equal(t, "BF16", c.DataType, ti.Name)
				assert.Equal(t, 16.0, c.Bits, ti.Name)
				assert.Nil(t, c.SQNR, ti.Name)
			}
		}
	}
	for i, rec := range got.Recipes {
		assert.Equal(t, []string{"mx", "int", "mx search rot"}[i], rec.Label)
		assert.Equal(t, i == 2, rec.Search, rec.Label)
		assert.Equal(t, []string{"", "", "hadamard:32"}[i], rec.Rotation, rec.Label)
		assert.Equal(t, outs[i], rec.Path)
		assert.Equal(t, "tcast", rec.Layout)
		// The means are the conversion's summary.
		assert.InDelta(t, sums[i].Bits, rec.Bits, 1e-9, rec.Label)
		require.NotNil(t, rec.SQNR)
		require.NotNil(t, sums[i].SQNR)
		assert.InDelta(t, *sums[i].SQNR, *rec.SQNR, 1e-9, rec.Label)
		// Without rotation too: the rotated recipe rotated every weight it
		// cast, so the report's mean is over the summary's tensors.
		assert.Equal(t, i == 2, rec.HasUnrot, rec.Label)
		if i == 2 {
			require.NotNil(t, rec.Unrot)
			require.NotNil(t, sums[i].SQNRUnrotated)
			assert.InDelta(t, *sums[i].SQNRUnrotated, *rec.Unrot, 1e-9, rec.Label)
		} else {
			assert.Nil(t, rec.Unrot, rec.Label)
		}
		var cast []string
		for _, tc := range sums[i].Types {
			if tc.DataType != "kept" {
				cast = append(cast, tc.DataType)
			}
		}
		assert.Equal(t, strings.Join(cast, ", "), rec.DataType)
	}
	// The text's figures are the JSON's.
	for i, line := range lines[3 : 3+189] {
		cells := strings.Split(line, "|")
		assert.Equal(t, got.Tensors[i].Name, strings.TrimSpace(cells[0]))
		want := "-"
		if u := got.Tensors[i].Recipes[2].Unrot; u != nil {
			want = fmt.Sprintf("%.2f", *u)
		}
		assert.Equal(t, want, strings.TrimSpace(cells[10]), got.Tensors[i].Name)
	}
}

// TestVerifyBits: plain verify gives each tensor's datatype and bits per
// value, those of the conversion's report.
func TestVerifyBits(t *testing.T) {
	outs, _ := compareRecipes(t, t.TempDir())
	code, stdout, stderr := tcast("verify", irisFixture, outs[1])
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^ *tensor\| *converted\| *datatype\| *bits/value\| *SQNR dB\|`, stdout)
	// int4 and a float16 scale per group of 128: 4 + 16/128 bits.
	assert.Regexp(t, `(?m)^ *conv2d_10/Conv2D_weights\| *true\| *int4_g128\| *4\.125\|`, stdout)
	assert.Regexp(t, `(?m)^ *conv2d/Conv2D_weights\| *false\| *BF16\| *16\.000\| *exact\|`, stdout)

	code, js, stderr := tcast("verify", "-json", irisFixture, outs[1])
	require.Equal(t, 0, code, stderr)
	var res []verify.Result
	require.NoError(t, json.Unmarshal([]byte(js), &res))
	for _, r := range res {
		if r.Name == "conv2d_10/Conv2D_weights" {
			assert.Equal(t, 4.125, r.Bits)
		}
	}
}

// TestVerifyCompareRefusals: mismatched inputs name the file and say what
// to do; flags that do not go together are usage errors.
func TestVerifyCompareRefusals(t *testing.T) {
	dir := t.TempDir()
	outs, _ := compareRecipes(t, dir)
	// A recipe of another source: one tensor of iris, renamed.
	other := filepath.Join(dir, "other.safetensors")
	f, err := safetensors.Open(irisFixture)
	require.NoError(t, err)
	ti := f.Tensors()[1]
	data, err := f.Bytes(ti.Name)
	require.NoError(t, err)
	require.NoError(t, safetensors.WriteFile(other, []safetensors.Tensor{{Name: "w", DType: ti.DType, Shape: ti.Shape, Data: data}}, nil))
	f.Close()
	otherOut := filepath.Join(dir, "other.mxfp4.safetensors")
	d, err := tc.Lookup("mxfp4")
	require.NoError(t, err)
	_, err = convert.Convert(other, otherOut, convert.Options{DataType: d, Include: regexp.MustCompile(`.`)})
	require.NoError(t, err)

	for _, c := range []struct {
		args []string
		code int
		msgs []string
	}{
		{[]string{irisFixture, outs[0], otherOut}, 1, []string{otherOut + " is not a conversion of " + irisFixture,
			"compare only checkpoints converted from " + irisFixture}},
		{[]string{irisFixture, outs[0], filepath.Join(dir, "missing.safetensors")}, 1, []string{"missing.safetensors"}},
		{[]string{irisFixture}, 2, []string{"-compare wants ORIG and at least one CONVERTED"}},
		{[]string{"-label", "a", irisFixture, outs[0], outs[1]}, 2, []string{"-label gives 1 name for 2 converted checkpoints"}},
		{[]string{"-imatrix", "x.dat", irisFixture, outs[0]}, 2, []string{"-imatrix: imatrix: x.dat"}},
		{[]string{"-min-sqnr", "18", irisFixture, outs[0], outs[1]}, 1, []string{"below -min-sqnr 18.00 dB", "in " + outs[0]}},
	} {
		code, _, stderr := tcast(append([]string{"verify", "-compare"}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, stderr)
		for _, m := range c.msgs {
			assert.Contains(t, stderr, m, c.args)
		}
	}
	code, _, stderr := tcast("verify", "-label", "a", irisFixture, outs[0])
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "add -compare")
}
