package convert

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
)

// fileSize returns the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

// TestTargetSize converts the mix test model with a size target of the
// Q4_K_M file's size, of less and of a number of bits per weight: each
// file meets its target and uses most of it, the token embedding and the
// output head keep the mix's types, every block tensor takes a candidate
// type chosen by the target (ffn_down's rows of 320 a 32-block one), and a
// dry run plans the same types.
func TestTargetSize(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	mixOut, _, err := convertMix(t, src, "Q4_K_M", Options{})
	require.NoError(t, err)
	full := fileSize(t, mixOut)
	mixTypes := ggufTypes(t, mixOut)
	f, err := gguf.Open(mixOut)
	require.NoError(t, err)
	var elems int64
	for _, ti := range f.Tensors {
		elems += measure.Elements(ti.Shape())
	}
	require.NoError(t, f.Close())
	for _, c := range []struct {
		name string
		g    GGUFOptions
		size int64
	}{
		{"the mix's size", GGUFOptions{TargetSize: full}, full},
		{"3/4 of it", GGUFOptions{TargetSize: full * 3 / 4}, full * 3 / 4},
		{"3.5 bits per weight", GGUFOptions{TargetBPW: 3.5}, int64(3.5 * float64(elems) / 8)},
	} {
		out, res, err := convertMix(t, src, "Q4_K_M", Options{GGUF: c.g})
		require.NoError(t, err, c.name)
		size := fileSize(t, out)
		assert.LessOrEqual(t, size, c.size, c.name)
		assert.Greater(t, size, c.size*97/100, "%s: most of the target used", c.name)
		types := ggufTypes(t, out)
		for _, r := range res.Tensors {
			name, typ := r.Name, types[r.Name]
			switch cat := ggufmix.CategoryOf(name); {
			case cat == ggufmix.Output || cat == ggufmix.TokenEmbd || !typ.Quantized():
				assert.Equal(t, mixTypes[name], typ, "%s: %s", c.name, name)
			default:
				assert.True(t, strings.HasPrefix(r.Reason, "size target: "+typ.String()+", of "), "%s: %s: %s", c.name, name, r.Reason)
				assert.Contains(t, ggufmix.TargetTypes, typ, "%s: %s", c.name, name)
				if cat == ggufmix.FFNDown {
					assert.Equal(t, 32, typ.BlockSize(), "%s: %s", c.name, name)
				}
			}
		}
		dry, err := Convert(src, "", Options{Layout: mustLayout(t, "gguf"), GGUF: withMix(t, c.g, "Q4_K_M"), DryRun: true})
		require.NoError(t, err, c.name)
		for _, r := range dry.Tensors {
			if r.DataType != "" {
				assert.Equal(t, strings.ToLower(types[r.Name].String()), r.DataType, "%s: dry run: %s", c.name, r.Name)
			}
		}
	}
}

// mustLayout returns the layout of that name.
func mustLayout(t *testing.T, name string) layout.Layout {
	t.Helper()
	l, err := layout.Get(name)
	require.NoError(t, err)
	return l
}

// withMix returns g with the mix of that name.
func withMix(t *testing.T, g GGUFOptions, name string) GGUFOptions {
	t.Helper()
	var err error
	g.Mix, err = ggufmix.Lookup(name)
	require.NoError(t, err)
	return g
}

// TestTargetOddRows checks that a tensor the target cannot choose for (an
// MLP of 328, whose rows no block divides: the mix keeps it F16) counts in
// the budget as what it is.
func TestTargetOddRows(t *testing.T) {
	src := mixLlamaFF(t, t.TempDir(), 328)
	mixOut, _, err := convertMix(t, src, "Q4_K_M", Options{})
	require.NoError(t, err)
	full := fileSize(t, mixOut)
	out, _, err := convertMix(t, src, "Q4_K_M", Options{GGUF: GGUFOptions{TargetSize: full}})
	require.NoError(t, err)
	assert.LessOrEqual(t, fileSize(t, out), full)
	assert.Equal(t, gguf.TypeF16, ggufTypes(t, out)["blk.0.ffn_down.weight"])
}

// TestTargetSplits checks a target with -shard-size: the splits together
// meet it.
func TestTargetSplits(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	mixOut, _, err := convertMix(t, src, "Q4_K_M", Options{})
	require.NoError(t, err)
	full := fileSize(t, mixOut)
	l := mustLayout(t, "gguf")
	dir := filepath.Join(t.TempDir(), "splits") + "/"
	_, err = Convert(src, dir, Options{Layout: l, ShardSize: 200000, GGUF: withMix(t, GGUFOptions{TargetSize: full}, "Q4_K_M")})
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var sum int64
	for _, e := range entries {
		sum += fileSize(t, filepath.Join(dir, e.Name()))
	}
	assert.Greater(t, len(entries), 5)
	assert.LessOrEqual(t, sum, full)
	assert.Greater(t, sum, full*97/100)
}

// TestTargetNoImatrix checks that without an importance matrix a small
// target chooses none of the types llama-quantize quantizes only with one.
func TestTargetNoImatrix(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	out, _, err := convertMix(t, src, "Q2_K", Options{GGUF: GGUFOptions{TargetBPW: 3.1}})
	require.NoError(t, err)
	for name, typ := range ggufTypes(t, out) {
		assert.NotContains(t, []gguf.Type{gguf.TypeIQ1_S, gguf.TypeIQ1_M, gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS,
			gguf.TypeIQ2_S, gguf.TypeIQ3_XXS}, typ, name)
	}
}

// TestTargetErrors checks the refusals: a target below the smallest
// types, two targets, a negative or not-a-number one, one with GGUF.Pure,
// one for another layout and one without a mix.
func TestTargetErrors(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	_, _, err := convertMix(t, src, "Q4_K_M", Options{GGUF: GGUFOptions{TargetBPW: 1}})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "GGUF.TargetBPW", oe.Option)
	assert.ErrorIs(t, err, ggufmix.ErrTargetTooSmall)
	var te *ggufmix.TargetError
	require.ErrorAs(t, err, &te)
	assert.Greater(t, te.Least, te.Budget)
	assert.Contains(t, err.Error(), "Options.GGUF.TargetBPW: 1 is below the smallest file the candidate types make of this model (with the token embedding and output head in the mix's types): ")
	assert.Contains(t, err.Error(), "bits per weight; set Options.GGUF.TargetBPW to 3.")

	mix, err := ggufmix.Lookup("Q4_K_M")
	require.NoError(t, err)
	gg := mustLayout(t, "gguf")
	for _, c := range []struct {
		o    Options
		want error
		msg  string
	}{
		{Options{Layout: gg, GGUF: GGUFOptions{Mix: mix, TargetBPW: 4, TargetSize: 1 << 20}}, ErrConflict,
			"Options.GGUF.TargetBPW does not go with Options.GGUF.TargetSize: both set the file's size; " +
				"unset Options.GGUF.TargetBPW, or unset Options.GGUF.TargetSize"},
		{Options{Layout: gg, GGUF: GGUFOptions{Mix: mix, TargetBPW: -1}}, ErrInvalidTarget,
			"Options.GGUF.TargetBPW: -1 is not a number of bits per weight above 0; set Options.GGUF.TargetBPW to 4.5"},
		{Options{Layout: gg, GGUF: GGUFOptions{Mix: mix, TargetBPW: math.NaN()}}, ErrInvalidTarget, ""},
		{Options{Layout: gg, GGUF: GGUFOptions{Mix: mix, TargetSize: -5}}, ErrInvalidTarget,
			"Options.GGUF.TargetSize: -5 is not a size in bytes above 0"},
		{Options{Layout: gg, GGUF: GGUFOptions{Mix: mix, TargetBPW: 4, Pure: true}}, ErrConflict, ""},
		{Options{Layout: mustLayout(t, "tcast"), DataType: mustDataType(t, mustLayout(t, "tcast"), "mxfp4"),
			GGUF: GGUFOptions{TargetSize: 1 << 20}}, ErrGGUFOnly,
			"Options.GGUF.TargetSize applies to GGUF output; set Options.Layout to gguf"},
	} {
		_, err := Convert(filepath.Join(t.TempDir(), "none"), filepath.Join(t.TempDir(), "o.gguf"), c.o)
		require.True(t, errors.Is(err, c.want), "%v: %v", c.want, err)
		if c.msg != "" {
			assert.Equal(t, c.msg, err.Error())
		}
	}
	_, _, err = convertMix(t, src, "q4_k", Options{GGUF: GGUFOptions{Generic: true, TargetBPW: 4}})
	assert.ErrorIs(t, err, ErrMixOnly)
}
