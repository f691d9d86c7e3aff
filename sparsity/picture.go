package sparsity

import (
	"fmt"
	"strings"

	"github.com/tensorcast-go/tensorcast/mask"
)

// PictureOptions size a [Picture]. The zero value draws at most 32 rows of 64
// characters.
type PictureOptions struct {
	MaxRows, MaxCols int
}

// pictureLevels are the characters of a block's density, from none kept to
// all kept.
const pictureLevels = " .:-=+*#%@"

// DensityGrid is the keep fraction of a mask in blocks: the picture Picture
// draws as characters and the HTML report draws as shaded cells.
type DensityGrid struct {
	// Rows and Cols are the mask's rows (the leading axes flattened) and
	// columns (the last axis).
	Rows, Cols int
	// BlockRows × BlockCols elements make one cell; 1 × 1 when the mask
	// fits in the options' size.
	BlockRows, BlockCols int
	// Kept is the number of kept elements, Len the number of elements.
	Kept, Len int
	// Cells holds each cell's fraction kept, row by row:
	// ceil(Rows/BlockRows) rows of ceil(Cols/BlockCols) cells.
	Cells [][]float64
}

// DensityMap returns m's keep fractions in at most MaxRows × MaxCols cells
// (PictureOptions' defaults for zero values), each cell a block of
// elements of the same size, the last row and column of blocks cut at the
// mask's edge.
func DensityMap(m *mask.Mask, o PictureOptions) DensityGrid {
	if o.MaxRows <= 0 {
		o.MaxRows = 32
	}
	if o.MaxCols <= 0 {
		o.MaxCols = 64
	}
	shape := m.Shape()
	if len(shape) == 0 {
		shape = []int{1}
	}
	rows, cols := rowsOf(shape)
	g := DensityGrid{Rows: rows, Cols: cols, BlockRows: 1, BlockCols: 1, Kept: m.Count(), Len: m.Len()}
	if rows == 0 || cols == 0 {
		return g
	}
	g.BlockRows, g.BlockCols = (rows+o.MaxRows-1)/o.MaxRows, (cols+o.MaxCols-1)/o.MaxCols
	bh, bw := g.BlockRows, g.BlockCols
	for r0 := 0; r0 < rows; r0 += bh {
		line := make([]float64, 0, (cols+bw-1)/bw)
		for c0 := 0; c0 < cols; c0 += bw {
			n, k := 0, 0
			for r := r0; r < min(r0+bh, rows); r++ {
				k += m.CountRange(r*cols+c0, r*cols+min(c0+bw, cols))
				n += min(c0+bw, cols) - c0
			}
			line = append(line, float64(k)/float64(n))
		}
		g.Cells = append(g.Cells, line)
	}
	return g
}

// Picture draws m as text: its rows are the runs of the last axis (the
// leading axes flattened; a 1-D mask is one row). When the mask fits in
// MaxRows × MaxCols, each character is one element, '#' kept and '.' pruned;
// otherwise each character is a block of elements (the cells of DensityMap)
// and shows the fraction kept on the scale " .:-=+*#%@" (' ' none, '@' all,
// the levels between rounded to nearest: a 2:4 mask is '+' at any block
// size that holds whole groups). The first line gives the shape, the count
// kept and the block size.
func Picture(m *mask.Mask, o PictureOptions) string {
	g := DensityMap(m, o)
	var b strings.Builder
	fmt.Fprintf(&b, "mask %v: %d of %d kept (density %.4f)", m.Shape(), g.Kept, g.Len, MaskDensity(m))
	if len(g.Cells) == 0 {
		b.WriteString("\n")
		return b.String()
	}
	if g.BlockRows == 1 && g.BlockCols == 1 {
		b.WriteString("; one character per element, # kept, . pruned\n")
		for _, line := range g.Cells {
			for _, f := range line {
				if f == 1 {
					b.WriteByte('#')
				} else {
					b.WriteByte('.')
				}
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	fmt.Fprintf(&b, "; one character per %d×%d block, fraction kept on the scale %q\n", g.BlockRows, g.BlockCols, pictureLevels)
	top := len(pictureLevels) - 1
	for r, line := range g.Cells {
		for c, f := range line {
			// 0 and all map to the ends; the rest spread over the levels
			// between, rounding to nearest (in integers: k of n kept).
			n := (min((r+1)*g.BlockRows, g.Rows) - r*g.BlockRows) * (min((c+1)*g.BlockCols, g.Cols) - c*g.BlockCols)
			k := int(f*float64(n) + 0.5)
			lv := 0
			switch {
			case k == n:
				lv = top
			case k > 0:
				lv = min(max(1, (2*k*top+n)/(2*n)), top-1)
			}
			b.WriteByte(pictureLevels[lv])
		}
		b.WriteByte('\n')
	}
	return b.String()
}
