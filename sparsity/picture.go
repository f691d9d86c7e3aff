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

// Picture draws m as text: its rows are the runs of the last axis (the
// leading axes flattened; a 1-D mask is one row). When the mask fits in
// MaxRows × MaxCols, each character is one element, '#' kept and '.' pruned;
// otherwise each character is a block of elements and shows the fraction kept
// on the scale " .:-=+*#%@" (' ' none, '@' all, the levels between rounded to
// nearest: a 2:4 mask is '+' at any block size that holds whole groups). The first line gives the shape, the
// count kept and the block size.
func Picture(m *mask.Mask, o PictureOptions) string {
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
	var b strings.Builder
	kept := m.Count()
	fmt.Fprintf(&b, "mask %v: %d of %d kept (density %.4f)", m.Shape(), kept, m.Len(), MaskDensity(m))
	if rows == 0 || cols == 0 {
		b.WriteString("\n")
		return b.String()
	}
	bh, bw := (rows+o.MaxRows-1)/o.MaxRows, (cols+o.MaxCols-1)/o.MaxCols
	if bh == 1 && bw == 1 {
		b.WriteString("; one character per element, # kept, . pruned\n")
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				if m.Get(r*cols + c) {
					b.WriteByte('#')
				} else {
					b.WriteByte('.')
				}
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	fmt.Fprintf(&b, "; one character per %d×%d block, fraction kept on the scale %q\n", bh, bw, pictureLevels)
	top := len(pictureLevels) - 1
	for r0 := 0; r0 < rows; r0 += bh {
		for c0 := 0; c0 < cols; c0 += bw {
			n, k := 0, 0
			for r := r0; r < min(r0+bh, rows); r++ {
				k += m.CountRange(r*cols+c0, r*cols+min(c0+bw, cols))
				n += min(c0+bw, cols) - c0
			}
			// 0 and all map to the ends; the rest spread over the levels
			// between, rounding to nearest.
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
