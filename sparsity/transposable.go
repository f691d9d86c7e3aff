package sparsity

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/tensorcast-go/tensorcast/mask"
)

// Transposable 2:4 masks: in every 4×4 block of a matrix each row and each
// column keeps exactly two elements, so the mask is 2:4 along both axes and
// the matrix and its transpose both run on 2:4 kernels (the weight in the
// forward pass, its transpose in the backward one).

// pairs lists the six ways to keep two of four, as 4-bit masks in increasing
// order.
var pairs = [6]uint16{0x3, 0x5, 0x6, 0x9, 0xa, 0xc}

// block24 is one 4×4 pattern with two kept per row and per column: rows[r]
// indexes pairs for row r; bits is the 16-bit mask, bit 4r+c for row r,
// column c.
type block24 struct {
	rows [4]uint8
	bits uint16
}

// transposable24 lists the 90 patterns in increasing order of their 16-bit
// mask, the order ties are broken in.
var transposable24 = func() []block24 {
	var ps []block24
	for a := range 6 {
		for b := range 6 {
			for c := range 6 {
				for d := range 6 {
					v := pairs[a] | pairs[b]<<4 | pairs[c]<<8 | pairs[d]<<12
					ok := true
					for col := range 4 {
						if bits.OnesCount16(v>>col&0x1111) != 2 {
							ok = false
						}
					}
					if ok {
						ps = append(ps, block24{[4]uint8{uint8(a), uint8(b), uint8(c), uint8(d)}, v})
					}
				}
			}
		}
	}
	slices.SortFunc(ps, func(x, y block24) int { return int(x.bits) - int(y.bits) })
	return ps
}()

// Transposable24 returns the mask that keeps, in every 4×4 block of the
// matrix formed by the last two axes of x, two elements in each row and two
// in each column, choosing among the 90 such patterns the one that keeps the
// largest sum of |x|. A kept ±Inf or NaN counts as infinitely large: the
// pattern keeping the most of them wins, then the largest finite sum. Ties go
// to the pattern whose 16-bit mask (bit 4r+c for row r, column c of the
// block) is smallest. Leading axes are a batch of matrices. Both of the last
// two dimensions must be multiples of 4 (else a *ShapeError).
func Transposable24(x []float32, shape []int) (*mask.Mask, error) {
	op := "transposable 2:4"
	if len(shape) < 2 {
		return nil, &ShapeError{Op: op, Shape: slices.Clone(shape), Reason: "needs a matrix (rank ≥ 2)"}
	}
	g, err := splitAxis(op, shape, -1, P24)
	if err == nil {
		_, err = splitAxis(op, shape, -2, P24)
	}
	if err == nil {
		err = g.checkLen(op, "x", x)
	}
	if err != nil {
		return nil, err
	}
	rows, cols := shape[len(shape)-2], shape[len(shape)-1]
	out := make([]byte, (g.n+7)/8)
	var mag [4][4]float64
	var inf [4][4]int
	for base := 0; base < g.n; base += rows * cols {
		for r0 := 0; r0 < rows; r0 += 4 {
			for c0 := 0; c0 < cols; c0 += 4 {
				for r := range 4 {
					for c := range 4 {
						v := math.Abs(float64(x[base+(r0+r)*cols+c0+c]))
						mag[r][c], inf[r][c] = v, 0
						if math.IsInf(v, 0) || math.IsNaN(v) {
							mag[r][c], inf[r][c] = 0, 1
						}
					}
				}
				// The kept sum and infinity count of each pair choice in each row.
				var ps [4][6]float64
				var pi [4][6]int
				for r := range 4 {
					for k, p := range pairs {
						for c := range 4 {
							if p>>c&1 != 0 {
								ps[r][k] += mag[r][c]
								pi[r][k] += inf[r][c]
							}
						}
					}
				}
				best, bestSum, bestInf := 0, -1.0, -1
				for i, b := range transposable24 {
					s := ps[0][b.rows[0]] + ps[1][b.rows[1]] + ps[2][b.rows[2]] + ps[3][b.rows[3]]
					n := pi[0][b.rows[0]] + pi[1][b.rows[1]] + pi[2][b.rows[2]] + pi[3][b.rows[3]]
					if n > bestInf || (n == bestInf && s > bestSum) {
						best, bestSum, bestInf = i, s, n
					}
				}
				v := transposable24[best].bits
				for r := range 4 {
					pos := base + (r0+r)*cols + c0
					out[pos>>3] |= byte(v>>(4*r)&0xf) << (pos & 7)
				}
			}
		}
	}
	m, err := mask.FromBytes(g.shape, out)
	if err != nil {
		return nil, fmt.Errorf("sparsity: %s: %w", op, err)
	}
	return m, nil
}
