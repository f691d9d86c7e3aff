package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
)

// The importance matrix of testdata/llama_imatrix.npz (GGUF names) weights
// the table choice of codebook datatypes in the tcast layout: `tcast
// convert -layout tcast -dtype icb44fi2_e32s8` (and mxfi4) of the synth
// llama with -imatrix finds every weight matrix of the layers under its
// GGUF name, and each one's importance-weighted SQNR, measured here from
// the decoded tensors, is at least that without the matrix (the scales are
// the same, and every subtile's table has the least weighted error).
func TestImatrixCodebookConvert(t *testing.T) {
	ic := newImatrixCase(t)
	m, in, names, shapes, hf := ic.m, ic.in, ic.names, ic.shapes, ic.hf
	var table strings.Builder
	for _, dt := range []string{"icb44fi2_e32s8", "mxfi4"} {
		conv := func(extra ...string) (*load.Checkpoint, *convert.Result) {
			return ic.convert(t, dt+fmt.Sprint(len(extra)), dt, extra...)
		}
		plain, _ := conv()
		weighted, res := conv("-imatrix", m.Path)
		status := map[string]convert.ImportanceStatus{}
		for _, r := range res.Tensors {
			status[r.Name] = r.Importance
		}
		var gain float64
		for _, name := range names {
			h := hf[name]
			assert.Equal(t, convert.ImportanceUsed, status[h], "%s %s", dt, h)
			imps, err := m.Importance(name, shapes[name][1], 1)
			require.NoError(t, err)
			x, _, err := in.Float32(h)
			require.NoError(t, err)
			yp, _, err := plain.Float32(h)
			require.NoError(t, err)
			yw, _, err := weighted.Float32(h)
			require.NoError(t, err)
			before, after := weightedSQNR(x, yp, imps[0]), weightedSQNR(x, yw, imps[0])
			pBefore, pAfter := weightedSQNR(x, yp, nil), weightedSQNR(x, yw, nil)
			assert.GreaterOrEqual(t, after, before, "%s %s", dt, name)
			gain += after - before
			fmt.Fprintf(&table, "%-24s %-15s %8.3f %8.3f %+7.3f  plain %8.3f %8.3f\n", name, dt, before, after, after-before, pBefore, pAfter)
		}
		fmt.Fprintf(&table, "mean gain %s: %+.3f dB weighted\n", dt, gain/float64(len(names)))
	}
	t.Log("\nweighted SQNR without and with -imatrix\n" + table.String())
}
