package report

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.html")

func TestLayerOf(t *testing.T) {
	for _, c := range []struct {
		name string
		want int
	}{
		{"model.layers.3.mlp.up_proj.weight", 3},
		{"blk.12.attn_q.weight", 12},
		{"model.layers.10.experts.7.w1", 10},
		{"0.weight", 0},
		{"lm_head.weight", -1},
		{"conv2d/Conv2D_weights", -1},
		{"model.embed_tokens2.weight", -1},
	} {
		assert.Equal(t, c.want, layerOf(c.name), c.name)
	}
}

func TestHistogram(t *testing.T) {
	want := []float32{1, 1, 1, 0, 2, 1, 1, 0, 1}
	got := []float32{
		1,               // exact
		1.5,             // 1/2: [2^-1, 2^0), bin 23
		1.25,            // 1/4: [2^-2, 2^-1), bin 22
		0.1,             // zero source: undefined
		2 + 1.0/(1<<22), // 2^-23: [2^-23, 2^-22), bin 1
		float32(math.NaN()),
		100,  // 99: above 2^4, the last bin
		0,    // -0 equals 0: exact
		1e-9, // relative error 1 − 1e-9: [2^-1, 2^0), bin 23
	}
	got[7] = float32(math.Copysign(0, -1))
	h := newHistogram(want, got)
	c := make([]int64, histBins)
	c[23], c[22], c[1], c[27] = 2, 1, 1, 1
	assert.Equal(t, &Histogram{MinExp: -24, Counts: c, Exact: 2, Undefined: 2}, h)
	assert.Equal(t, int64(len(want)), h.Total())
}

func TestNiceTicks(t *testing.T) {
	assert.Equal(t, []float64{10, 12, 14, 16, 18, 20}, niceTicks(10.3, 19.2))
	assert.Equal(t, []float64{0, 0.05, 0.1, 0.15, 0.2, 0.25}, niceTicks(0, 0.23))
	// (6 − 4.25)/5 = 0.35: steps of 0.5 from 4 (the multiple below 4.25).
	assert.Equal(t, []float64{4, 4.5, 5, 5.5, 6}, niceTicks(4.25, 6))
	// 0.375/5 = 0.075: steps of 0.1 from 4.1.
	assert.Equal(t, []float64{4.1, 4.2, 4.3, 4.4, 4.5}, niceTicks(4.125, 4.5))
	// One value: a band of ±1 around it, [3.25, 5.25], in steps of 0.5.
	assert.Equal(t, []float64{3, 3.5, 4, 4.5, 5, 5.5}, niceTicks(4.25, 4.25))
}

// fixture writes a small checkpoint of three layers (two F32 weights of
// 8×128 and a norm each, and an embedding with no layer number) and
// converts it to mxfp4, int4_g128 and mxfp4 with 2:4 sparsity. It returns
// the source and the converted paths, relative to dir, and the
// conversions' results.
func fixture(t *testing.T, dir string) (string, []string, []*convert.Result) {
	t.Helper()
	var ts []safetensors.Tensor
	add := func(name string, shape []int, seed float64) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		b := make([]byte, 4*n)
		for i := range n {
			// Smooth values with a few large ones per row: the int4
			// groups lose more than MXFP4's blocks.
			v := math.Sin(float64(i)*0.731+seed) * (1 + seed/4)
			if i%61 == 0 {
				v *= 6
			}
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		}
		ts = append(ts, safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: b})
	}
	add("model.embed_tokens.weight", []int{16, 128}, 0.5)
	for l := range 3 {
		add(fmt.Sprintf("model.layers.%d.mlp.up_proj.weight", l), []int{8, 128}, float64(l))
		add(fmt.Sprintf("model.layers.%d.mlp.down_proj.weight", l), []int{8, 128}, float64(l)+0.25)
		add(fmt.Sprintf("model.layers.%d.input_layernorm.weight", l), []int{128}, 1)
	}
	src := filepath.Join(dir, "source.safetensors")
	require.NoError(t, safetensors.WriteFile(src, ts, nil))
	sparse, err := tcast.WithSparsity(tcast.MustLookup("mxfp4"), sparsity.P24)
	require.NoError(t, err)
	var outs []string
	var results []*convert.Result
	for _, c := range []struct {
		out    string
		dt     *tcast.DataType
		search bool
		rot    string
	}{{"mxfp4", tcast.MustLookup("mxfp4"), false, ""}, {"int4_g128", tcast.MustLookup("int4_g128"), false, ""},
		{"mxfp4_24", sparse, false, ""}, {"mxfp4_ss_rot", tcast.MustLookup("mxfp4"), true, "hadamard:32"}} {
		out := filepath.Join(dir, c.out+".safetensors")
		rot, err := rotate.Parse(c.rot)
		require.NoError(t, err)
		res, err := convert.Convert(src, out, convert.Options{DataType: c.dt, Include: regexp.MustCompile(`embed_tokens`), Workers: 1,
			ScaleSearch: c.search, Rotate: rot})
		require.NoError(t, err, c.out)
		outs = append(outs, out)
		results = append(results, res)
	}
	return src, outs, results
}

// built is the report of the fixture, with paths relative to its
// directory (the test's working directory), and the conversions' results.
func built(t *testing.T, o Options) (*Report, []*convert.Result) {
	t.Helper()
	t.Chdir(t.TempDir())
	src, outs, results := fixture(t, ".")
	r, err := Build(src, outs, o)
	require.NoError(t, err)
	return r, results
}

func TestBuild(t *testing.T) {
	r, results := built(t, Options{Labels: []string{"", "int4 groups"}})
	require.Len(t, r.Recipes, 4)
	assert.Equal(t, "tcast report: source.safetensors", r.Title)
	assert.Equal(t, "mxfp4", r.Recipes[0].Label)
	assert.Equal(t, "mxfp4e2", r.Recipes[0].DataType)
	assert.Equal(t, "int4 groups", r.Recipes[1].Label)
	// Bits per value from the datatypes' definitions: E2M1 and an E8M0
	// scale per 32 (4 + 8/32); int4 and a float16 scale per 128
	// (4 + 16/128); 2:4 keeps half of the E2M1 values, with a bit of mask
	// per element and an E8M0 per 32 kept (2 + 1 + 8/64); searched and
	// rotated MXFP4 stores the same.
	for i, want := range []float64{4.25, 4.125, 3.125, 4.25} {
		rec := r.Recipes[i]
		assert.Equal(t, "tcast", rec.Layout)
		assert.InDelta(t, want, rec.Bits, 1e-9, rec.Label)
		require.Len(t, rec.Tensors, 10)
		for _, tt := range rec.Tensors {
			assert.Equal(t, !strings.Contains(tt.Name, "norm"), tt.Converted, tt.Name)
			if tt.Converted {
				assert.InDelta(t, want, tt.Bits, 1e-9, tt.Name)
				require.NotNil(t, tt.Errors, tt.Name)
				assert.Equal(t, measure.Elements(tt.Shape), tt.Errors.Total(), tt.Name)
				require.NotNil(t, tt.SQNR, tt.Name)
			} else {
				assert.Nil(t, tt.Errors, tt.Name)
				assert.Equal(t, 32.0, tt.Bits, tt.Name) // kept F32
			}
		}
	}
	// The SQNR is verify's.
	vr, err := verify.Checkpoints(r.Source, r.Recipes[1].Path, verify.Options{})
	require.NoError(t, err)
	for i, v := range vr.Tensors {
		assert.Equal(t, v.SQNR, r.Recipes[1].Tensors[i].SQNR, v.Name)
	}
	assert.Equal(t, -1, r.Recipes[0].Tensors[0].Layer)
	assert.Equal(t, 2, r.Recipes[0].Tensors[9].Layer)
	// Only the sparse recipe has masks: 2:4 keeps half of every row, in
	// cells of 1×2 elements (128 columns in at most 96 cells).
	for _, tt := range r.Recipes[2].Tensors {
		if !tt.Converted {
			continue
		}
		require.NotNil(t, tt.Mask, tt.Name)
		assert.Equal(t, measure.Elements(tt.Shape)/2, int64(tt.Mask.Kept), tt.Name)
		assert.Equal(t, [2]int{1, 2}, [2]int{tt.Mask.BlockRows, tt.Mask.BlockCols})
		for _, row := range tt.Mask.Cells {
			sum := 0.0
			for _, f := range row {
				sum += f
			}
			assert.Equal(t, float64(len(row))/2, sum)
		}
	}
	assert.Nil(t, r.Recipes[0].Tensors[1].Mask)
	// What each recipe did, from its metadata: only the last searched its
	// scales and rotated its weights, by 32-element Hadamard blocks (MXFP4's
	// block); norms are not rotated.
	for i, want := range []string{"mxfp4e2", "int4_g128", "float4_e2m1fn_float8_e8m0fnu_t32n2m4",
		"mxfp4e2; scale search; rotated hadamard:32"} {
		assert.Equal(t, want, r.Recipes[i].Describe(), i)
	}
	assert.Equal(t, "hadamard:32", r.Recipes[3].Rotation)
	assert.True(t, r.Recipes[3].ScaleSearch)
	// Each rotated weight's SQNR without rotation is the one its
	// conversion measured (the file records it); with rotation, verify's
	// measure is the conversion's too. The recipe's mean without rotation
	// is over the same tensors as its SQNR.
	res := results[3]
	require.Len(t, res.Tensors, len(r.Recipes[3].Tensors))
	for i, tt := range r.Recipes[3].Tensors {
		if !tt.Converted {
			assert.Empty(t, tt.Rotation, tt.Name)
			assert.False(t, tt.HasUnrotated, tt.Name)
			continue
		}
		require.Equal(t, res.Tensors[i].Name, tt.Name)
		assert.Equal(t, "hadamard:32", tt.Rotation, tt.Name)
		assert.True(t, tt.HasUnrotated, tt.Name)
		require.NotNil(t, tt.SQNRUnrotated, tt.Name)
		assert.Equal(t, *res.Tensors[i].SQNRUnrotated, *tt.SQNRUnrotated, tt.Name)
		assert.InDelta(t, *res.Tensors[i].SQNR, *tt.SQNR, 1e-9, tt.Name)
		g, ok := tt.Gain()
		assert.True(t, ok)
		assert.Equal(t, *tt.SQNR-*tt.SQNRUnrotated, g)
	}
	assert.True(t, r.Recipes[3].HasUnrotated)
	require.NotNil(t, r.Recipes[3].SQNRUnrotated)
	s := res.Summarize() // every converted weight is rotated: the same means
	assert.InDelta(t, *s.SQNRUnrotated, *r.Recipes[3].SQNRUnrotated, 1e-9)
	assert.InDelta(t, *s.SQNR, *r.Recipes[3].SQNR, 1e-9)
	for i := range 3 {
		assert.False(t, r.Recipes[i].HasUnrotated, i)
		assert.Nil(t, r.Recipes[i].SQNRUnrotated, i)
	}
	for _, tt := range r.Recipes[0].Tensors {
		assert.Empty(t, tt.Rotation, tt.Name)
		assert.False(t, tt.HasUnrotated, tt.Name)
		_, ok := tt.Gain()
		assert.False(t, ok, tt.Name)
		assert.Nil(t, tt.WeightedSQNR, tt.Name) // no Options.Imatrix
	}

	_, err = Build("source.safetensors", nil, Options{})
	assert.ErrorContains(t, err, "no converted checkpoint")
	_, err = Build("source.safetensors", []string{"no-such.safetensors"}, Options{})
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// goldenReport is the fixture's report as the golden page draws it.
func goldenReport(t *testing.T) []byte {
	r, _ := built(t, Options{Title: "golden", Masks: 1, Histograms: 2, Worst: 8})
	var b bytes.Buffer
	require.NoError(t, r.WriteHTML(&b))
	return b.Bytes()
}

// TestGolden compares the page with testdata/golden.html (go test
// -update rewrites it; look at it in a browser before committing). Two
// builds give the same bytes.
func TestGolden(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	golden := filepath.Join(wd, "testdata", "golden.html")
	page := goldenReport(t)
	assert.Equal(t, page, goldenReport(t), "the page is deterministic")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o777))
		require.NoError(t, os.WriteFile(golden, page, 0o666))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(page))
}

// TestWellFormed parses the page as XML: every element closed, every
// attribute quoted, no entity XML does not know. It holds the sections and
// plots, and nothing that loads or runs anything.
func TestWellFormed(t *testing.T) {
	page := goldenReport(t)
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	counts := map[string]int{}
	ids := map[string]bool{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
			for _, a := range se.Attr {
				assert.NotContains(t, []string{"src", "href", "onload", "onclick"}, a.Name.Local, "nothing loads or runs")
				if a.Name.Local == "id" {
					assert.False(t, ids[a.Value], "id %s once", a.Value)
					ids[a.Value] = true
				}
			}
		}
	}
	assert.Zero(t, counts["script"])
	assert.Zero(t, counts["link"])
	assert.Zero(t, counts["img"])
	assert.Equal(t, 1, counts["html"])
	// Two per-layer charts, two histograms, one mask.
	assert.Equal(t, 5, counts["svg"])
	for _, id := range []string{"sqnr", "bits", "hist0", "hist1", "mask0"} {
		assert.True(t, ids[id], id)
	}
	// Four recipes: a line per chart each (the four layers, embedding
	// "other" included, are consecutive), 4 points each, and the rotated
	// recipe's line without rotation in the SQNR chart.
	assert.Equal(t, 9, counts["polyline"])
	assert.Equal(t, 36, counts["circle"])
	assert.Equal(t, 8, counts["polygon"]) // histograms: a recipe each
	s := string(page)
	assert.Contains(t, s, "<h2>Worst tensors</h2>")
	assert.Contains(t, s, "20 more converted tensors not shown") // 4 recipes × 7 weights − 8 rows
	assert.Contains(t, s, "mxfp4_ss_rot (mxfp4e2; scale search; rotated hadamard:32)")
	assert.Contains(t, s, "scale search: the checkpoint records")
	assert.Contains(t, s, "rotated: the weights were multiplied")
	assert.Contains(t, s, "<th>SQNR dB without rotation</th><th>rotation gain dB</th>") // recipes
	assert.Contains(t, s, "<th>SQNR dB</th><th>without rotation (gain)</th>")           // worst tensors
	assert.Contains(t, s, "mxfp4_ss_rot without rotation")
	assert.Contains(t, s, "<h2>Rotation</h2>")
	assert.NotContains(t, s, "not recorded")
	assert.NotContains(t, s, "weighted SQNR") // no Options.Imatrix
	assert.Contains(t, s, "<h2>Sparsity masks</h2>")
}

func TestHistRange(t *testing.T) {
	h := func(bins ...int) *Histogram {
		c := make([]int64, histBins)
		for _, b := range bins {
			c[b]++
		}
		return &Histogram{MinExp: histMinExp, Counts: c}
	}
	for _, c := range []struct {
		hs     []*Histogram
		lo, hi int
	}{
		{[]*Histogram{h()}, 0, histBins},              // nothing counted: all
		{[]*Histogram{h(10, 14), h(20)}, 9, 22},       // 10..20 and one either side: 13 binades
		{[]*Histogram{h(20)}, 14, 26},                 // 19..22 widened to 12, a binade either side at a time
		{[]*Histogram{h(0)}, 0, 12},                   // no room on the left
		{[]*Histogram{h(histBins - 1)}, 16, histBins}, // nor on the right
	} {
		lo, hi := histRange(c.hs)
		assert.Equal(t, [2]int{c.lo, c.hi}, [2]int{lo, hi})
	}
}

// TestNameCell: a name cell may break after each dot and slash, and its
// text stays escaped.
func TestNameCell(t *testing.T) {
	nameCell := func(s string) string {
		var b strings.Builder
		require.NoError(t, pageTemplate.ExecuteTemplate(&b, "name", s))
		return b.String()
	}
	assert.Equal(t, "model.<wbr/>layers.<wbr/>0/<wbr/>w&lt;1&gt;", nameCell("model.layers.0/w<1>"))
	assert.Equal(t, "a.<wbr/>", nameCell("a."))
	assert.Equal(t, "", nameCell(""))
}

const iris = "../../testdata/iris.bf16.safetensors"

// TestBuildMismatch: a recipe that is not a conversion of the source is a
// *MismatchError naming both, which matches verify.ErrMismatch.
func TestBuildMismatch(t *testing.T) {
	dir := t.TempDir()
	src, outs, _ := fixture(t, dir)
	_, err := Build(outs[0], []string{src, iris}, Options{})
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, iris, me.Recipe)
	assert.Equal(t, outs[0], me.Source)
	assert.True(t, errors.Is(err, verify.ErrMismatch))
	assert.ErrorContains(t, err, iris+" is not a conversion of "+outs[0]+": checkpoints differ: ")
}
