//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestKQuantStayInBounds runs the K-quant, IQ4 and legacy quantizers and
// the super-block searches of every tier on inputs, importance vectors,
// outputs, scratch and results that each end where an inaccessible page
// begins.
func TestKQuantStayInBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	x := gaussian(rng, 2*qkk, 1)
	imp := guardedCopy(t, gaussian(rng, qkk, 1))
	for i := range imp {
		imp[i] = abs32(imp[i])
	}
	src := guardedCopy(t, x)
	forEachTier(t, func(t *testing.T) {
		for _, c := range kqCodecs {
			for _, w := range [][]float32{nil, imp} {
				dst := guardedTail[byte](t, len(x)/c.block*c.bytes)
				c.quant(dst, src, w, nil)
			}
		}
		xs := guardedCopy(t, x[:qkk])
		ws := guardedCopy(t, imp)
		tr := &guardedTail[superScratch](t, 1)[0]
		res := &guardedTail[superRes](t, 1)[0]
		for _, w := range [][]float32{unitWeights[:], ws} {
			want := superRun(xs, w, true, nil, nil)
			got := superRun(xs, w, false, tr, res)
			for name, wv := range want {
				requireSame(t, wv, got[name], "%s", name)
			}
		}
	})
}
