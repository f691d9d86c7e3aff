package tcast

import "math"

// ErrorSum gathers what Compare measures piece by piece, for converters
// that dequantize a tensor a chunk at a time while the chunk is in cache:
// Add each piece of source and dequantized values (on any goroutine, each
// with its own ErrorSum), Merge the partial sums, and read Errors. The zero
// value holds nothing.
//
// The sums are float64 like Compare's, but run four to a loop step and add
// up per piece, so SQNR and MSE may differ from Compare's in the last bits
// (MaxAbs, Lost and whether the cast is exact do not). Merging the same
// pieces in the same order gives the same bits, however the pieces were
// spread over goroutines.
type ErrorSum struct {
	sig, noise, maxAbs float64
	n, lost            int
}

// nonFinite32 reports whether the float32 bits b are a NaN or an infinity.
func nonFinite32(b uint32) bool { return b&0x7f800000 == 0x7f800000 }

// Add measures got against want, element by element (len(got) ≥ len(want)).
func (s *ErrorSum) Add(want, got []float32) {
	got = got[:len(want)]
	var s0, s1, s2, s3, n0, n1, n2, n3 float64
	m := s.maxAbs
	i := 0
	for ; i+4 <= len(want); i += 4 {
		w, g := want[i:i+4:i+4], got[i:i+4:i+4]
		bw0, bw1, bw2, bw3 := math.Float32bits(w[0]), math.Float32bits(w[1]), math.Float32bits(w[2]), math.Float32bits(w[3])
		bg0, bg1, bg2, bg3 := math.Float32bits(g[0]), math.Float32bits(g[1]), math.Float32bits(g[2]), math.Float32bits(g[3])
		top := max(bw0&0x7fffffff, bw1&0x7fffffff, bw2&0x7fffffff, bw3&0x7fffffff,
			bg0&0x7fffffff, bg1&0x7fffffff, bg2&0x7fffffff, bg3&0x7fffffff)
		if top >= 0x7f800000 {
			s.addSlow(w, g, &m)
			continue
		}
		x0, x1, x2, x3 := float64(w[0]), float64(w[1]), float64(w[2]), float64(w[3])
		d0, d1, d2, d3 := float64(g[0])-x0, float64(g[1])-x1, float64(g[2])-x2, float64(g[3])-x3
		s0 += x0 * x0
		s1 += x1 * x1
		s2 += x2 * x2
		s3 += x3 * x3
		n0 += d0 * d0
		n1 += d1 * d1
		n2 += d2 * d2
		n3 += d3 * d3
		a := max(math.Abs(d0), math.Abs(d1), math.Abs(d2), math.Abs(d3))
		if a > m {
			m = a
		}
		s.n += 4
	}
	s.addSlow(want[i:], got[i:], &m)
	s.sig += (s0 + s1) + (s2 + s3)
	s.noise += (n0 + n1) + (n2 + n3)
	s.maxAbs = m
}

// addSlow is Add element by element, with NaN and Inf handled as Compare
// does; m is the running max abs error.
func (s *ErrorSum) addSlow(want, got []float32, m *float64) {
	for i, w := range want {
		g := got[i]
		wf, gf := !nonFinite32(math.Float32bits(w)), !nonFinite32(math.Float32bits(g))
		if wf && !gf {
			s.lost++
		}
		if !wf || !gf {
			continue
		}
		d := float64(g) - float64(w)
		s.sig += float64(w) * float64(w)
		s.noise += d * d
		if a := math.Abs(d); a > *m {
			*m = a
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
}

// Errors returns the measures, as Compare defines them.
func (s *ErrorSum) Errors() Errors {
	e := Errors{MaxAbs: s.maxAbs, Lost: s.lost}
	if s.n > 0 {
		e.MSE = s.noise / float64(s.n)
	}
	if s.noise != 0 && s.sig != 0 {
		db := 10 * math.Log10(s.sig/s.noise)
		e.SQNR = &db
	}
	return e
}
