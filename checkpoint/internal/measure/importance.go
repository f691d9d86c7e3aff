package measure

import (
	"math"
	"slices"
	"sync"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmodel"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/kernels"
)

// Weighted is the importance-weighted signal and error energy of a
// weight's rows: Σ w·x² and Σ w·(x − x̂)², w the importance of x's column,
// or, for a GGUF type whose quantizer searches (AddType), the weight that
// quantizer gives the element. The zero value is empty.
type Weighted struct{ Signal, Noise float64 }

// Add adds rows [r0, r0 + len(x)/cols) of a weight, x their source and y
// their dequantized values; imp holds one importance vector of cols values
// per rowsPer rows.
func (s *Weighted) Add(imp []float32, cols, rowsPer, r0 int, x, y []float32) {
	s.AddType(0, imp, cols, rowsPer, r0, x, y)
}

// AddType is Add with each element weighted as the quantizer of GGUF type
// t weighs it with the importance (gguf.Weigh); t = 0 (F32), or a type
// without a quantizer, weighs the importance alone.
func (s *Weighted) AddType(t gguf.Type, imp []float32, cols, rowsPer, r0 int, x, y []float32) {
	var we []float32
	if gguf.Searches(t) {
		if cols <= weighChunk {
			p := weighBufs.Get().(*[weighChunk]float32)
			defer weighBufs.Put(p)
			we = p[:]
		} else {
			we = make([]float32, cols)
		}
	}
	rows := len(x) / cols
	for r := 0; r < rows; {
		// The rows up to the next importance vector's, as many at once as
		// the buffer holds.
		k := (r0 + r) / rowsPer
		n := min(rows-r, (k+1)*rowsPer-r0-r)
		w := imp[k*cols : (k+1)*cols]
		if we != nil {
			n = min(n, max(len(we)/cols, 1))
		}
		xr, yr := x[r*cols:(r+n)*cols], y[r*cols:(r+n)*cols]
		if we != nil && gguf.Weigh(t, we[:len(xr)], xr, w) == nil {
			s.AddWeighed(we[:len(xr)], xr, yr)
		} else {
			for i := range n {
				s.AddWeighed(w, xr[i*cols:(i+1)*cols], yr[i*cols:(i+1)*cols])
			}
		}
		r += n
	}
}

// weighChunk is the most elements AddType weighs at once (but a longer
// row).
const weighChunk = 1 << 16

// weighBufs holds AddType's buffers of weights.
var weighBufs = sync.Pool{New: func() any { return new([weighChunk]float32) }}

// AddWeighed adds the sums of x and y with element i weighted by w[i]
// (len(x) long): the weights a quantizer gave (gguf.QuantizeWeighed).
func (s *Weighted) AddWeighed(w, x, y []float32) {
	// Elements whose error is not finite are left out: the plain sums
	// count them (Lost).
	var sig, noise [kernels.ErrorLanes]float64
	kernels.WeightedErrorSums(&sig, &noise, w, x, y)
	var rs, rn float64
	for l := range sig {
		rs += sig[l]
		rn += noise[l]
	}
	s.Signal += rs
	s.Noise += rn
}

// SQNR returns the weighted SQNR in dB, nil when there is no error.
func (s Weighted) SQNR() *float64 {
	if s.Noise == 0 {
		return nil
	}
	v := 10 * math.Log10(s.Signal/s.Noise)
	return &v
}

// WeightedSQNR returns the importance-weighted SQNR of got against want, a
// tensor of the given shape named name in the matrix, each element
// weighted as the quantizer of GGUF type t weighs it (AddType), or nil
// when the matrix has no entry of that size for it or got is exact.
func WeightedSQNR(im *imatrix.Imatrix, name string, shape []int, t gguf.Type, want, got []float32) *float64 {
	cols, experts := Matrices(shape)
	if !im.Has(name) {
		return nil
	}
	imp, err := im.Vector(name, cols, experts)
	if err != nil {
		return nil
	}
	var s Weighted
	s.AddType(t, imp, cols, len(want)/len(imp), 0, want, got)
	return s.SQNR()
}

// Matrices returns the columns of a weight of the given shape and the
// number of matrices its importance covers: the experts of a 3-D expert
// weight, else 1.
func Matrices(shape []int) (cols, experts int) {
	cols, experts = shape[len(shape)-1], 1
	if len(shape) == 3 {
		experts = shape[0]
	}
	return cols, experts
}

// Entry returns the name under which im holds the importance of a weight
// whose source tensor is source, as convert and verify look it up: its
// GGUF name when m (the architecture of the source's config.json, nil when
// ggufmodel does not know it) maps it and im has it, else the first of
// names that im has, "" when im has none of them.
func Entry(im *imatrix.Imatrix, m *ggufmodel.Model, source string, names ...string) string {
	if m != nil {
		if mp, err := m.Tensor(source); err == nil && mp.Name != "" && im.Has(mp.Name) {
			return mp.Name
		}
	}
	for _, n := range names {
		if im.Has(n) {
			return n
		}
	}
	return ""
}

// Unrecorded reports whether im's entry name records no activations:
// noCounts when every count is 0, allZero when every value is 0. Both are
// false for an entry im does not have.
func Unrecorded(im *imatrix.Imatrix, name string) (noCounts, allZero bool) {
	e, err := im.Entry(name)
	if err != nil {
		return false, false
	}
	if !slices.ContainsFunc(e.Counts, func(c int64) bool { return c != 0 }) {
		return true, false
	}
	return false, !slices.ContainsFunc(e.Importance, func(v float32) bool { return v != 0 })
}
