//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSqErrSymAVX512 compares the assembly's float32 candidate errors with
// their Go reference bit for bit (NaN with NaN), candidates laid out with
// a stride larger than the groups.
func TestSqErrSymAVX512(t *testing.T) {
	if hwTier < tierAVX512 {
		t.Log("no AVX-512: the Go reference runs")
		return
	}
	r := rand.New(rand.NewPCG(95, 96))
	for iter := range 200 {
		glen := 16 * (1 + r.IntN(12))
		nb := r.IntN(9)
		stride := nb + r.IntN(3)
		qmax := []float32{7, 127}[iter%2]
		src := searchInput(r, nb*glen)
		rdiv, dmul := make([]float32, 5*stride), make([]float32, 5*stride)
		for i := range rdiv {
			d := float32(math.Ldexp(1+r.Float64(), r.IntN(40)-30))
			switch r.IntN(10) {
			case 0:
				d = 0
			case 1:
				d = math.Float32frombits(edgeBits(r) &^ (1 << 31))
			}
			rdiv[i], dmul[i] = 1/d, d
			if d == 0 {
				rdiv[i] = 0
			}
		}
		want, got := make([]float32, 5*stride), make([]float32, 5*stride)
		sqErrSymLanesGo(want, src, rdiv, dmul, glen, stride, nb, qmax)
		sqErrSymAVX512(got, src, rdiv, dmul, glen, stride, nb, qmax)
		for i := range want {
			if !(math.IsNaN(float64(want[i])) && math.IsNaN(float64(got[i]))) {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "iter %d entry %d: %v, want %v", iter, i, got[i], want[i])
			}
		}
	}
}
