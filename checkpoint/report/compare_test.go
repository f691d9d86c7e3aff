package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
)

func TestCompare(t *testing.T) {
	db := func(v float64) *float64 { return &v }
	r := &Report{Source: "src", Recipes: []Recipe{
		{Label: "a", Path: "a.gguf", DataType: "q8_0", Bits: 8.5, SQNR: db(40), Tensors: []Tensor{
			{Name: "x", Shape: []int{2}, DataType: "F32", Bits: 32},
			{Name: "w", Shape: []int{2, 32}, DataType: "q8_0", Converted: true, Bits: 8.5, SQNR: db(40)},
		}},
		// b keeps the tensor a left out, between x and w, and loses values
		// of w; it records its rotated weights' SQNR without rotation (w's
		// cast is exact without it).
		{Label: "b", Path: "b", DataType: "mxfp4", Bits: 4.25, SQNR: db(18), ScaleSearch: true, Rotation: "hadamard:32",
			SQNRUnrotated: db(17), HasUnrotated: true, Tensors: []Tensor{
				{Name: "x", Shape: []int{2}, DataType: "F32", Bits: 32},
				{Name: "head", Shape: []int{2, 32}, DataType: "mxfp4", Converted: true, Bits: 4.25, SQNR: db(18.5),
					Rotation: "hadamard:32", SQNRUnrotated: db(17.25), HasUnrotated: true},
				{Name: "w", Shape: []int{2, 32}, DataType: "mxfp4", Converted: true, Bits: 4.25, SQNR: db(17.5), Lost: 3,
					Rotation: "hadamard:32", HasUnrotated: true},
				{Name: "z", Shape: []int{1}, DataType: "F32", Bits: 32},
			}},
		// c was converted before checkpoints recorded it.
		{Label: "c", Path: "c", DataType: "mxfp4", Bits: 4.25, SQNR: db(19), Rotation: "hadamard:32", Tensors: []Tensor{
			{Name: "x", Shape: []int{2}, DataType: "F32", Bits: 32},
			{Name: "w", Shape: []int{2, 32}, DataType: "mxfp4", Converted: true, Bits: 4.25, SQNR: db(19), Rotation: "hadamard:32"},
		}},
	}}
	c := r.Compare()
	require.Len(t, c.Recipes, 3)
	assert.Equal(t, RecipeSummary{Label: "b", Path: "b", DataType: "mxfp4", Bits: 4.25, SQNR: db(18),
		Recipe: "mxfp4; scale search; rotated hadamard:32", ScaleSearch: true, Rotation: "hadamard:32",
		SQNRUnrotated: db(17), HasUnrotated: true}, c.Recipes[1])
	assert.Equal(t, "q8_0", c.Recipes[0].Recipe)
	assert.Empty(t, c.Imatrix)
	var names []string
	for _, tt := range c.Tensors {
		names = append(names, tt.Name)
		require.Len(t, tt.Recipes, 3)
		assert.NotNil(t, tt.Recipes[1], tt.Name)
	}
	assert.Equal(t, []string{"x", "head", "w", "z"}, names)
	assert.Nil(t, c.Tensors[1].Recipes[0])
	assert.Nil(t, c.Tensors[3].Recipes[0])
	assert.Equal(t, &Cell{DataType: "q8_0", Converted: true, Bits: 8.5, SQNR: db(40)}, c.Tensors[2].Recipes[0])
	assert.Equal(t, &Cell{DataType: "mxfp4", Converted: true, Bits: 4.25, SQNR: db(18.5), Rotation: "hadamard:32",
		SQNRUnrotated: db(17.25), HasUnrotated: true}, c.Tensors[1].Recipes[1])

	var b bytes.Buffer
	require.NoError(t, c.WriteText(&b))
	lines := bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n"))
	require.Len(t, lines, 3+4+1)
	// The rotated recipes have a column of SQNR without rotation: "-" for a
	// tensor not rotated, "?" where the checkpoint does not say.
	want := [][]string{
		{"", "a", "", "", "b", "", "", "", "c", "", "", ""},
		{"recipe", "q8_0", "", "", "mxfp4; scale search; rotated hadamard:32", "", "", "", "mxfp4; rotated hadamard:32", "", "", ""},
		{"tensor", "datatype", "bits/value", "SQNR dB", "datatype", "bits/value", "SQNR dB", "unrotated dB", "datatype", "bits/value", "SQNR dB", "unrotated dB"},
		{"x", "kept F32", "32.000", "exact", "kept F32", "32.000", "exact", "-", "kept F32", "32.000", "exact", "-"},
		{"head", "-", "-", "-", "mxfp4 hadamard:32", "4.250", "18.50", "17.25", "-", "-", "-", "-"},
		{"w", "q8_0", "8.500", "40.00", "mxfp4 hadamard:32", "4.250", "lost 3", "exact", "mxfp4 hadamard:32", "4.250", "19.00", "?"},
		{"z", "-", "-", "-", "kept F32", "32.000", "exact", "-", "-", "-", "-", "-"},
		{"mean by elements, converted tensors", "q8_0", "8.500", "40.00", "mxfp4", "4.250", "18.00", "17.00", "mxfp4", "4.250", "19.00", "?"},
	}
	for i, line := range lines {
		cells := bytes.Split(line, []byte("|"))
		require.Len(t, cells, 13, "%s", line)
		var got []string
		for _, c := range cells[:12] {
			got = append(got, string(bytes.TrimSpace(c)))
		}
		assert.Equal(t, want[i], got, "line %d", i)
		assert.Equal(t, len(lines[0]), len(line), "aligned: %s", line)
	}
}

// TestCompareWeighted: with an importance matrix, each recipe has a
// weighted SQNR column, "-" where a tensor has none.
func TestCompareWeighted(t *testing.T) {
	db := func(v float64) *float64 { return &v }
	r := &Report{Source: "src", Options: Options{Imatrix: &imatrix.Imatrix{Path: "imp.dat"}}, Recipes: []Recipe{
		{Label: "a", Path: "a", DataType: "int4_g128", Bits: 4.125, SQNR: db(14), WeightedSQNR: db(15), Tensors: []Tensor{
			{Name: "x", Shape: []int{2}, DataType: "F32", Bits: 32},
			{Name: "w", Shape: []int{2, 128}, DataType: "int4_g128", Converted: true, Bits: 4.125, SQNR: db(14), WeightedSQNR: db(15)},
			{Name: "v", Shape: []int{2, 128}, DataType: "int4_g128", Converted: true, Bits: 4.125, SQNR: db(14)},
		}},
	}}
	c := r.Compare()
	assert.Equal(t, "imp.dat", c.Imatrix)
	assert.Equal(t, db(15), c.Recipes[0].WeightedSQNR)
	assert.Equal(t, db(15), c.Tensors[1].Recipes[0].WeightedSQNR)
	var b bytes.Buffer
	require.NoError(t, c.WriteText(&b))
	lines := bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n"))
	want := [][]string{
		{"", "a", "", "", ""},
		{"recipe", "int4_g128", "", "", ""},
		{"tensor", "datatype", "bits/value", "SQNR dB", "weighted dB"},
		{"x", "kept F32", "32.000", "exact", "-"},
		{"w", "int4_g128", "4.125", "14.00", "15.00"},
		{"v", "int4_g128", "4.125", "14.00", "-"},
		{"mean by elements, converted tensors", "int4_g128", "4.125", "14.00", "15.00"},
	}
	require.Len(t, lines, len(want))
	for i, line := range lines {
		cells := bytes.Split(line, []byte("|"))
		require.Len(t, cells, 6, "%s", line)
		var got []string
		for _, c := range cells[:5] {
			got = append(got, string(bytes.TrimSpace(c)))
		}
		assert.Equal(t, want[i], got, "line %d", i)
	}
}
