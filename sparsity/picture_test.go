package sparsity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/mask"
)

func TestPicture(t *testing.T) {
	m, err := UnpackRows([]byte{0x36, 0x69}, []int{2, 8})
	require.NoError(t, err)
	assert.Equal(t, "mask [2 8]: 8 of 16 kept (density 0.5000); one character per element, # kept, . pruned\n"+
		".##.##..\n"+
		"#..#.##.\n", Picture(m, PictureOptions{}))

	// 64 rows of 256: blocks of 2×4 elements; a 2:4 mask keeps half of each.
	x := make([]float32, 64*256)
	for i := range x {
		x[i] = float32(i % 7)
	}
	m, err = Magnitude(x, []int{64, 256}, -1, P24)
	require.NoError(t, err)
	pic := Picture(m, PictureOptions{})
	lines := splitLines(pic)
	require.Len(t, lines, 1+32)
	assert.Contains(t, lines[0], "one character per 2×4 block")
	for _, l := range lines[1:] {
		// Half kept: level round(0.5·9) = 5 (ties up), '+'.
		assert.Equal(t, 64, len(l))
		assert.Equal(t, "++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++", l)
	}
	// All and nothing kept, one row of 200 in blocks of 4.
	full, err := mask.Full([]int{200}, true)
	require.NoError(t, err)
	assert.Equal(t, "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", splitLines(Picture(full, PictureOptions{MaxCols: 50}))[1])
	none, err := mask.New([]int{1, 200})
	require.NoError(t, err)
	assert.Equal(t, "                                                  ", splitLines(Picture(none, PictureOptions{MaxCols: 50}))[1])
	empty, err := mask.New([]int{0, 4})
	require.NoError(t, err)
	assert.Equal(t, "mask [0 4]: 0 of 0 kept (density 0.0000)\n", Picture(empty, PictureOptions{}))
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func TestDensityMap(t *testing.T) {
	// Rows .##.##.. and #..#.##. (LSB first): cells of 2×3 with MaxCols 3,
	// the last column of cells 2 wide. Kept per cell, by hand: columns 0-2
	// hold .## and #.. (3 of 6), 3-5 .## and #.# (4 of 6), 6-7 .. and #. (1 of 4).
	m, err := UnpackRows([]byte{0x36, 0x69}, []int{2, 8})
	require.NoError(t, err)
	g := DensityMap(m, PictureOptions{MaxRows: 1, MaxCols: 3})
	assert.Equal(t, DensityGrid{Rows: 2, Cols: 8, BlockRows: 2, BlockCols: 3, Kept: 8, Len: 16,
		Cells: [][]float64{{0.5, 4.0 / 6, 0.25}}}, g)
	empty, err := mask.New([]int{0, 4})
	require.NoError(t, err)
	assert.Empty(t, DensityMap(empty, PictureOptions{}).Cells)
}
