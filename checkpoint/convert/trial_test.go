package convert

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
)

// The findings of a new user's trial of convert -layout gguf with an
// importance matrix.

// trialMatrix writes a .dat importance matrix of the given entries into
// dir and reads it.
func trialMatrix(t *testing.T, dir string, entries []datEntry) *imatrix.Imatrix {
	t.Helper()
	path := filepath.Join(dir, "imatrix.dat")
	writeDat(t, path, entries)
	im, err := imatrix.Read(path)
	require.NoError(t, err)
	return im
}

// importanceOf returns the report's importance status of each tensor.
func importanceOf(res *Result) map[string]ImportanceStatus {
	out := map[string]ImportanceStatus{}
	for _, r := range res.Tensors {
		if r.Importance != ImportanceNone {
			out[r.Name] = r.Importance
		}
	}
	return out
}

// Generic GGUF output of a known architecture finds entries by the GGUF
// names of its Hugging Face weights, as verify does (item 3a).
func TestImatrixGenericByGGUFName(t *testing.T) {
	dir := t.TempDir()
	src := mixLlama(t, dir)
	im := trialMatrix(t, dir, []datEntry{{"blk.1.attn_q.weight", 1, ramp(mixHidden)}})
	_, res, err := convertGGUF(t, src, "q4_k", Options{Imatrix: im, GGUF: GGUFOptions{Generic: true}})
	require.NoError(t, err)
	st := importanceOf(res)
	assert.Equal(t, ImportanceUsed, st["model.layers.1.self_attn.q_proj.weight"])
	assert.Equal(t, ImportanceMissing, st["model.layers.0.self_attn.q_proj.weight"])
	assert.Empty(t, res.Warnings)
}

// A matrix of another model fails before anything is written (item 3c);
// entries for tensors the input does not have are a warning (item 3d).
func TestImatrixOfAnotherModel(t *testing.T) {
	dir := t.TempDir()
	src := mixLlama(t, dir)
	im := trialMatrix(t, dir, []datEntry{{"layers.0.attention.wq.weight", 1, ramp(mixHidden)}})
	out, _, err := convertMix(t, src, "q4_k_m", Options{Imatrix: im})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.ErrorIs(t, err, ErrImatrixUnmatched)
	assert.Equal(t, "Imatrix", oe.Option)
	for _, want := range []string{"imatrix.dat has no entry for any of the", `"layers.0.attention.wq.weight"`, `"blk.0.ffn_gate.weight"`, "another model"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NoFileExists(t, out)

	im = trialMatrix(t, dir, []datEntry{
		{"blk.1.attn_q.weight", 1, ramp(mixHidden)},
		{"blk.8.attn_q.weight", 1, ramp(mixHidden)},
		{"blk.9.attn_q.weight", 1, ramp(mixHidden)},
		{"blk.10.attn_q.weight", 1, ramp(mixHidden)},
		{"blk.11.attn_q.weight", 1, ramp(mixHidden)},
	})
	_, res, err := convertMix(t, src, "q4_k_m", Options{Imatrix: im})
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	assert.Equal(t, `Options.Imatrix imatrix.dat has 4 of its 5 entries that match no tensor of the input ("blk.10.attn_q.weight", "blk.11.attn_q.weight", "blk.8.attn_q.weight", ...): is it the matrix of a larger or another model?`,
		res.Warnings[0].String())
}

// verify reports an entry of the wrong size as convert does (item 3b) and
// says when the matrix matches no converted weight.
func TestVerifyImatrixMismatch(t *testing.T) {
	dir := t.TempDir()
	src := mixLlama(t, dir)
	out, _, err := convertMix(t, src, "q4_k_m", Options{})
	require.NoError(t, err)
	im := trialMatrix(t, dir, []datEntry{{"blk.1.attn_q.weight", 1, ramp(mixHidden / 2)}})
	_, err = verify.Checkpoints(src, out, verify.Options{Imatrix: im})
	var se *imatrix.SizeError
	require.ErrorAs(t, err, &se)
	var ie *verify.ImatrixError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "model.layers.1.self_attn.q_proj.weight", ie.Tensor)
	assert.Equal(t, "imatrix.dat", filepath.Base(ie.Path))
	assert.Contains(t, err.Error(), "tensor model.layers.1.self_attn.q_proj.weight: Options.Imatrix imatrix.dat:")
	assert.Contains(t, err.Error(), `"blk.1.attn_q.weight" has 128 values`)

	im = trialMatrix(t, dir, []datEntry{{"layers.0.attention.wq.weight", 1, ramp(mixHidden)}})
	rep, err := verify.Checkpoints(src, out, verify.Options{Imatrix: im})
	require.NoError(t, err)
	assert.NotEmpty(t, rep.Tensors)
	require.NotNil(t, rep.Unmatched)
	assert.Equal(t, "imatrix.dat", filepath.Base(rep.Unmatched.Path))
	assert.Equal(t, "layers.0.attention.wq.weight", rep.Unmatched.Entry)
	assert.Positive(t, rep.Unmatched.Weights)
}

// -imatrix with types that take no importance is refused before anything
// is written (item 4); a mix whose types search takes it.
func TestImatrixNoWeightUsesIt(t *testing.T) {
	dir := t.TempDir()
	src := mixLlama(t, dir)
	im := trialMatrix(t, dir, []datEntry{{"blk.1.attn_q.weight", 1, ramp(mixHidden)}})
	for typ, name := range map[string]string{"q8_0": "q8_0", "mxfp4": "mxfp4", "f16": "float16"} {
		for _, generic := range []bool{false, true} {
			out, _, err := convertGGUF(t, src, typ, Options{Imatrix: im, GGUF: GGUFOptions{Generic: generic}})
			var oe *OptionError
			require.ErrorAs(t, err, &oe, typ)
			assert.ErrorIs(t, err, ErrImatrixUnused)
			assert.Contains(t, err.Error(), "unset Options.Imatrix, or set Options.DataType to a type that searches", typ)
			assert.Contains(t, err.Error(), "cast to "+name, typ)
			_, statErr := os.Stat(out)
			assert.True(t, os.IsNotExist(statErr), typ)
		}
	}
	// The datatype is named as the user asked for it.
	_, _, err := convertGGUF(t, src, "mxfp4", Options{Imatrix: im})
	require.ErrorIs(t, err, ErrImatrixUnused)
	assert.Contains(t, err.Error(), "they are cast to mxfp4, which")
	_, _, err = convertMix(t, src, "q4_k_m", Options{Imatrix: im})
	require.NoError(t, err)
}

// An entry with counts of 0, or of values all 0, records nothing: its
// weight is quantized without it, and the report says which (item 7).
func TestImatrixDegenerateEntries(t *testing.T) {
	dir := t.TempDir()
	src := mixLlama(t, dir)
	im := trialMatrix(t, dir, []datEntry{
		{"blk.0.attn_q.weight", 0, ramp(mixHidden)},
		{"blk.1.attn_q.weight", 3, make([]float32, mixHidden)},
		{"blk.2.attn_q.weight", 1, ramp(mixHidden)},
	})
	out, res, err := convertGGUF(t, src, "q4_k", Options{Imatrix: im})
	require.NoError(t, err)
	st := importanceOf(res)
	assert.Equal(t, ImportanceZeroCount, st["blk.0.attn_q.weight"])
	assert.Equal(t, ImportanceAllZero, st["blk.1.attn_q.weight"])
	assert.Equal(t, ImportanceUsed, st["blk.2.attn_q.weight"])
	// Quantized without: the same bytes as a conversion without a matrix.
	plain, _, err := convertGGUF(t, src, "q4_k", Options{})
	require.NoError(t, err)
	a, b := tensorBytes(t, out, "blk.1.attn_q.weight"), tensorBytes(t, plain, "blk.1.attn_q.weight")
	assert.Equal(t, b, a)
	assert.Equal(t, tensorBytes(t, plain, "blk.0.attn_q.weight"), tensorBytes(t, out, "blk.0.attn_q.weight"))
	assert.NotEqual(t, tensorBytes(t, plain, "blk.2.attn_q.weight"), tensorBytes(t, out, "blk.2.attn_q.weight"))
	for _, r := range res.Tensors {
		if r.Importance != ImportanceUsed {
			assert.Nil(t, r.WeightedSQNR, r.Name)
		}
	}
}

// tensorBytes returns the stored bytes of a tensor of a GGUF file.
func tensorBytes(t *testing.T, path, name string) []byte {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, err := f.TensorBytes(name)
	require.NoError(t, err)
	return slices.Clone(b)
}

// -gguf-generic cannot make a llama.cpp model file generic: it is refused
// for one (item 6), and a generic GGUF input takes it.
func TestGGUFGenericOfModelFile(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	f16, _, err := convertMix(t, src, "f16", Options{})
	require.NoError(t, err)
	out, _, err := convertMix(t, f16, "q4_k_m", Options{GGUF: GGUFOptions{Generic: true}})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "GGUF.Generic", oe.Option)
	assert.ErrorIs(t, err, ErrNotHuggingFace)
	assert.Contains(t, err.Error(), `the input is a llama.cpp model file (general.architecture "llama")`)
	assert.Contains(t, err.Error(), "unset Options.GGUF.Generic")
	assert.NoFileExists(t, out)

	generic, _, err := convertGGUF(t, src, "f16", Options{GGUF: GGUFOptions{Generic: true}})
	require.NoError(t, err)
	_, _, err = convertGGUF(t, generic, "q8_0", Options{GGUF: GGUFOptions{Generic: true}})
	require.NoError(t, err)
}

// Patterns that match no tensor are warned of, with the GGUF name of the
// tensor a Hugging Face name would have matched, and the case rule (item 5).
func TestPatternsThatMatchNothing(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	typeFor := func(vs ...string) []ggufmix.Override {
		ov, err := ggufmix.ParseOverrides(vs)
		require.NoError(t, err)
		return ov
	}
	_, res, err := convertMix(t, src, "q4_k_m", Options{GGUF: GGUFOptions{TypeFor: typeFor("nomatch=q6_k", "FFN_DOWN=q6_k", "ffn_up=q5_k")}})
	require.NoError(t, err)
	require.Len(t, res.Warnings, 2)
	assert.Equal(t, `Options.GGUF.TypeFor "nomatch=q6_k" matches no tensor; patterns match the llama.cpp model file's GGUF names (blk.N.ffn_down.weight, token_embd.weight)`, res.Warnings[0].String())
	assert.Contains(t, res.Warnings[1].String(), `Options.GGUF.TypeFor "FFN_DOWN=q6_k" matches no tensor`)
	assert.Contains(t, res.Warnings[1].String(), "it would match blk.0.ffn_down.weight if case were ignored: patterns are case-sensitive")

	_, res, err = convertGGUF(t, src, "q8_0", Options{Exclude: regexp.MustCompile("down_proj"), Include: regexp.MustCompile(`^output\.weight$`)})
	require.NoError(t, err)
	assert.Equal(t, []string{`Options.Exclude "down_proj" matches no tensor; patterns match the llama.cpp model file's GGUF names (blk.N.ffn_down.weight, token_embd.weight): it matches the input's model.layers.0.mlp.down_proj.weight, which is blk.0.ffn_down.weight here`},
		warningTexts(res))

	// Generic output keeps the input's names: no word of GGUF names.
	_, res, err = convertGGUF(t, src, "q8_0", Options{Exclude: regexp.MustCompile("ffn_down"), GGUF: GGUFOptions{Generic: true}})
	require.NoError(t, err)
	assert.Equal(t, []string{`Options.Exclude "ffn_down" matches no tensor`}, warningTexts(res))
}

// A quantized input cast again is noted per weight and warned of (item 8):
// the keep rule compares with the 32 bits a kept quantized tensor costs.
func TestRequantizedIsNoted(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	q4, _, err := convertGGUF(t, src, "q4_k", Options{GGUF: GGUFOptions{Generic: true}})
	require.NoError(t, err)
	for _, tc := range []struct{ lay, typ, name string }{{"gguf", "q8_0", "q8_0"}, {"tcast", "mxfp8e4", "mxfp8e4"}} {
		l, err := layout.Get(tc.lay)
		require.NoError(t, err)
		o := Options{Layout: l, DataType: mustDataType(t, l, tc.typ)}
		out := filepath.Join(t.TempDir(), "out")
		if tc.lay == "gguf" {
			out += ".gguf"
		}
		res, err := Convert(q4, out, o)
		require.NoError(t, err, tc.lay)
		n := 0
		for _, r := range res.Tensors {
			if r.Source == "q4_k" {
				// Q4_K: 144 bytes per 256 values, 4.5 bits each.
				assert.Equal(t, "requantized from q4_k (4.5 bits per value): its error adds to the source's", r.Note, r.Name)
				n++
			}
		}
		assert.Positive(t, n)
		require.Len(t, res.Warnings, 1, tc.lay)
		assert.Contains(t, res.Warnings[0].String(), "weights of the input were already quantized (q4_k) and were quantized again to "+tc.name)
	}
}

// warningTexts returns the sentences of res's warnings.
func warningTexts(res *Result) []string {
	var out []string
	for _, w := range res.Warnings {
		out = append(out, w.String())
	}
	return out
}
