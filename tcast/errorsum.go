package tcast

import "math"

// ErrorSum gathers what Compare measures piece by piece, for converters
// that dequantize a tensor a chunk at a time while the chunk is in cache:
// Add each piece of source and dequantized values (on any goroutine, each
// with its own ErrorSum), Merge the partial sums, and read Errors. The zero
// value holds nothing.
//
// The sums are float64 like Compare's, but run two to a loop step and add
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
	// Finite values give finite sums (a float32's square is far inside
	// float64's range), and a NaN or an infinity makes a sum NaN or
	// infinite: the loop runs without per-element checks, and the values
	// are measured again one by one only if a sum comes out non-finite.
	var s0, s1, s2, s3, n0, n1, n2, n3 float64
	var mb uint64 // the largest |d| as float64 bits shifted left by one (no sign): ordered as the values
	i := 0
	for ; i+4 <= len(want); i += 4 {
		w, g := want[i:i+4:i+4], got[i:i+4:i+4]
		w0, w1, w2, w3 := float64(w[0]), float64(w[1]), float64(w[2]), float64(w[3])
		d0, d1, d2, d3 := float64(g[0])-w0, float64(g[1])-w1, float64(g[2])-w2, float64(g[3])-w3
		s0 += w0 * w0
		s1 += w1 * w1
		s2 += w2 * w2
		s3 += w3 * w3
		n0 += d0 * d0
		n1 += d1 * d1
		n2 += d2 * d2
		n3 += d3 * d3
		mb = max(mb, math.Float64bits(d0)<<1, math.Float64bits(d1)<<1, math.Float64bits(d2)<<1, math.Float64bits(d3)<<1)
	}
	m := math.Float64frombits(mb >> 1)
	s0, s1, n0, n1 = s0+s2, s1+s3, n0+n2, n1+n3
	sig, noise := s0+s1, n0+n1
	if nonFinite64(sig) || nonFinite64(noise) {
		s.addSlow(want, got)
		return
	}
	s.sig += sig
	s.noise += noise
	s.n += i
	s.maxAbs = max(s.maxAbs, m)
	s.addSlow(want[i:], got[i:])
}

// nonFinite64 reports whether x is a NaN or an infinity.
func nonFinite64(x float64) bool { return math.Float64bits(x)&0x7ff0000000000000 == 0x7ff0000000000000 }

// addSlow is Add element by element, with NaN and Inf handled as Compare
// does.
func (s *ErrorSum) addSlow(want, got []float32) {
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
