package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
)

// targetCases are the mixes whose size TestOutputQualityTarget gives
// -target-size, with the importance matrix or without.
var targetCases = []struct {
	mix     string
	imatrix bool
}{{"Q4_K_M", false}, {"Q4_K_M", true}, {"Q3_K_M", false}, {"Q3_K_M", true}, {"Q2_K", true},
	{"IQ3_XXS", true}, {"IQ2_M", true}, {"IQ2_XXS", true}}

// targetOnly gives TestOutputQualityTarget some of targetCases.
var targetOnly = flag.String("target-cases", "", "TestOutputQualityTarget runs only these comma-separated `cases` (Q4_K_M-false,IQ2_M-true, ...)")

// TestOutputQualityTarget converts the trained model to each mix of
// targetCases and again with -target-size the mix's file size, and
// compares the two files through llama.cpp: the target's file is no
// larger, and its mean KL divergence against the F16 file's is not higher
// than the mix's by more than the standard error.
func TestOutputQualityTarget(t *testing.T) {
	h := newQualityHarness(t)
	node, mods, dir, f16, ref, imPath, im := h.node, h.mods, h.dir, h.f16, h.ref, h.imPath, h.im
	var b strings.Builder
	b.WriteString("| mix | imatrix | bytes, mix / target | mean KLD, target / mix ± SE | 99 % KLD | top token | SQNR dB | weighted SQNR dB |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, c := range targetCases {
		if *targetOnly != "" && !strings.Contains(*targetOnly, fmt.Sprintf("%s-%v", c.mix, c.imatrix)) {
			continue
		}
		mixFile := filepath.Join(dir, "mix.gguf")
		args := []string{"convert", trainedModel, "-layout", "gguf", "-dtype", c.mix, "-force"}
		var m *imatrix.Imatrix
		if c.imatrix {
			args, m = append(args, "-imatrix", imPath), im
		}
		code, _, stderr := tcast(append(args, "-o", mixFile)...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		st, err := os.Stat(mixFile)
		require.NoError(t, err)
		target := filepath.Join(dir, "target.gguf")
		code, _, stderr = tcast(append(args, "-o", target, "-target-size", fmt.Sprint(st.Size()))...)
		require.Equal(t, 0, code, "%v -target-size: %s", args, stderr)
		tt, err := os.Stat(target)
		require.NoError(t, err)
		assert.LessOrEqual(t, tt.Size(), st.Size(), "%s: the target's file", c.mix)
		dm, dt := klDivergence(t, ref, evalLogits(t, node, mods, mixFile)), klDivergence(t, ref, evalLogits(t, node, mods, target))
		em, et := measureWeights(t, mixFile, f16, m), measureWeights(t, target, f16, m)
		se := pairedSE(dt, dm)
		fmt.Fprintf(&b, "| %s | %v | %d / %d | %.5f / %.5f ± %.5f | %.4f / %.4f | %.4f / %.4f | %.2f / %.2f | %.2f / %.2f |\n",
			c.mix, c.imatrix, st.Size(), tt.Size(), dt.mean(), dm.mean(), se, dt.p99(), dm.p99(), dt.top(), dm.top(),
			et.sqnr, em.sqnr, et.weighted, em.weighted)
		if d := dt.mean() - dm.mean(); d > se {
			t.Errorf("%s (imatrix %v): the target's mean KLD %.6f, the mix's %.6f: higher by more than the standard error %.6f",
				c.mix, c.imatrix, dt.mean(), dm.mean(), se)
		}
	}
	t.Logf("the table:\n%s", b.String())
}
