package tcast

import (
	"math"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// ErrorSum gathers what Compare measures piece by piece, for converters
// that dequantize a tensor a chunk at a time while the chunk is in cache:
// Add each piece of source and dequantized values (on any goroutine, each
// with its own ErrorSum), Merge the partial sums, and read Errors. The zero
// value holds nothing.
//
// The sums are float64 like Compare's, but kept in eight partial sums
// (kernels.ErrorSums) and added up per piece, so SQNR and MSE may differ
// from Compare's in the last bits (MaxAbs, Lost and whether the cast is
// exact do not). Merging the same
// pieces in the same order gives the same bits, however the pieces were
// spread over goroutines.
type ErrorSum struct {
	sig, noise, maxAbs  float64
	n, lost             int
	nan, posInf, negInf int // of the source
}

// Add measures got against want, element by element (len(got) ≥ len(want)).
func (s *ErrorSum) Add(want, got []float32) {
	got = got[:len(want)]
	// The kernel keeps eight partial sums of each; a NaN or an infinity
	// sends the piece through the element-by-element path instead.
	var sig, noise [kernels.ErrorLanes]float64
	m, ok := kernels.ErrorSums(&sig, &noise, want, got)
	if !ok {
		s.addSlow(want, got)
		return
	}
	s.sig += ((sig[0] + sig[1]) + (sig[2] + sig[3])) + ((sig[4] + sig[5]) + (sig[6] + sig[7]))
	s.noise += ((noise[0] + noise[1]) + (noise[2] + noise[3])) + ((noise[4] + noise[5]) + (noise[6] + noise[7]))
	s.n += len(want)
	s.maxAbs = max(s.maxAbs, m)
}

// addSlow is Add element by element, and Compare: elements where either
// value is a NaN or an infinity are left out, and a finite want whose got is
// not counts as lost.
func (s *ErrorSum) addSlow(want, got []float32) {
	for i, w := range want {
		g := got[i]
		wf, gf := !isNonFinite(w), !isNonFinite(g)
		if wf && !gf {
			s.lost++
		}
		if !wf {
			switch {
			case w != w:
				s.nan++
			case w > 0:
				s.posInf++
			default:
				s.negInf++
			}
		}
		if !wf || !gf {
			continue
		}
		d := float64(g) - float64(w)
		s.sig += float64(w) * float64(w)
		s.noise += d * d
		if a := math.Abs(d); a > s.maxAbs {
			s.maxAbs = a
		}
		s.n++
	}
}

// Merge adds the sums of o.
func (s *ErrorSum) Merge(o ErrorSum) {
	s.sig += o.sig
	s.noise += o.noise
	s.maxAbs = max(s.maxAbs, o.maxAbs)
	s.n += o.n
	s.lost += o.lost
	s.nan += o.nan
	s.posInf += o.posInf
	s.negInf += o.negInf
}

// Errors returns the measures, as Compare defines them.
func (s *ErrorSum) Errors() Errors {
	e := Errors{MaxAbs: s.maxAbs, Lost: s.lost, NaN: s.nan, PosInf: s.posInf, NegInf: s.negInf}
	if s.n > 0 {
		e.MSE = s.noise / float64(s.n)
	}
	if s.noise != 0 && s.sig != 0 {
		db := 10 * math.Log10(s.sig/s.noise)
		e.SQNR = &db
	}
	if s.lost > 0 {
		inf := math.Inf(-1)
		e.SQNR, e.MaxAbs, e.MSE = &inf, math.Inf(1), math.Inf(1)
	}
	return e
}
