package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// weightedSQNR returns 10·log10(Σ imp_c·w² / Σ imp_c·(w − ŵ)²) over the
// rows of w (row length len(imp)); nil imp weighs every column 1.
func weightedSQNR(w, wq, imp []float32) float64 {
	var sig, noise float64
	cols := len(w)
	if imp != nil {
		cols = len(imp)
	}
	for i, x := range w {
		k := 1.0
		if imp != nil {
			k = float64(imp[i%cols])
		}
		d := float64(x) - float64(wq[i])
		sig += k * float64(x) * float64(x)
		noise += k * d * d
	}
	return 10 * math.Log10(sig/noise)
}

// The importance matrix that testdata/llama_imatrix.py computed for the
// synth llama (torch, the calibration text) makes the searching quantizers
// better where it counts: for every matrix of the layers and each of Q4_K,
// Q3_K and IQ4_XS, the SQNR weighted as the quantizer weighs the error
// with the importance (gguf.Weigh: the importance times ggml's
// sqrt(σ² + x²), the error the activations see) is higher when
// gguf.Quantize is given the importance than when it is not. (The plain
// SQNR pays for it: -v prints both.)
func TestImatrixImprovesQuantizers(t *testing.T) {
	m := llamaImatrix(t)
	src, _ := synthTo(t, t.TempDir(), imatrixSynth...)
	shapes, hf := synthMatrices(t, src)
	f, err := safetensors.Open(src)
	require.NoError(t, err)
	defer f.Close()

	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	types := []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS}
	type sums struct{ gain, plainLoss float64 }
	total := map[gguf.Type]*sums{}
	var table strings.Builder
	fmt.Fprintf(&table, "%-26s %-7s %9s %9s %7s %9s %9s\n", "tensor", "type", "wSQNR", "wSQNR+im", "gain", "SQNR", "SQNR+im")
	for _, name := range names {
		w, err := f.Float32s(hf[name])
		require.NoError(t, err)
		imps, err := m.Importance(name, shapes[name][1], 1)
		require.NoError(t, err)
		imp := imps[0]
		for _, typ := range types {
			size, _ := typ.Size(int64(len(w)))
			deq := func(importance []float32) []float32 {
				blocks := make([]byte, size)
				require.NoError(t, gguf.Quantize(typ, blocks, w, importance))
				out := make([]float32, len(w))
				require.NoError(t, gguf.Dequantize(typ, out, blocks))
				return out
			}
			plain, weighted := deq(nil), deq(imp)
			we := make([]float32, len(w))
			require.NoError(t, gguf.Weigh(typ, we, w, imp))
			before, after := weightedSQNR(w, plain, we), weightedSQNR(w, weighted, we)
			pBefore, pAfter := weightedSQNR(w, plain, nil), weightedSQNR(w, weighted, nil)
			assert.Greater(t, after, before, "%s %v: weighted SQNR with the imatrix", name, typ)
			if total[typ] == nil {
				total[typ] = &sums{}
			}
			total[typ].gain += after - before
			total[typ].plainLoss += pBefore - pAfter
			fmt.Fprintf(&table, "%-26s %-7v %9.3f %9.3f %+7.3f %9.3f %9.3f\n", name, typ, before, after, after-before, pBefore, pAfter)
		}
	}
	for _, typ := range types {
		s := total[typ]
		n := float64(len(names))
		fmt.Fprintf(&table, "mean %-21s %-7v gain %+.3f dB weighted, %+.3f dB plain\n", "", typ, s.gain/n, -s.plainLoss/n)
	}
	t.Log("\n" + table.String())
}
