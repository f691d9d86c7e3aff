package convert

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/verify"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The mix test model: 8 layers of hidden 256 (rows of one K-quant
// super-block), 2 query heads of 128 and 1 key/value head, an MLP of 320
// (a multiple of 32 but not of 256: ffn_down's rows fall back), an output
// head of its own.
const mixLayers, mixHidden, mixFF = 8, 256, 320

// mixLlama writes the mix test model into dir and returns its weights'
// path.
func mixLlama(t *testing.T, dir string) string {
	t.Helper()
	return mixLlamaFF(t, dir, mixFF)
}

// mixLlamaFF is mixLlama with an MLP of ff.
func mixLlamaFF(t *testing.T, dir string, mixFF int) string {
	t.Helper()
	return tinyLlama(t, dir, func(ts map[string][]int, cfg map[string]any) {
		for k := range ts {
			delete(ts, k)
		}
		ts["model.embed_tokens.weight"] = []int{tlVocab, mixHidden}
		ts["model.norm.weight"] = []int{mixHidden}
		ts["lm_head.weight"] = []int{tlVocab, mixHidden}
		for l := range mixLayers {
			p := "model.layers." + strconv.Itoa(l) + "."
			ts[p+"input_layernorm.weight"] = []int{mixHidden}
			ts[p+"post_attention_layernorm.weight"] = []int{mixHidden}
			ts[p+"self_attn.q_proj.weight"] = []int{mixHidden, mixHidden}
			ts[p+"self_attn.k_proj.weight"] = []int{mixHidden / 2, mixHidden}
			ts[p+"self_attn.v_proj.weight"] = []int{mixHidden / 2, mixHidden}
			ts[p+"self_attn.o_proj.weight"] = []int{mixHidden, mixHidden}
			ts[p+"mlp.gate_proj.weight"] = []int{mixFF, mixHidden}
			ts[p+"mlp.up_proj.weight"] = []int{mixFF, mixHidden}
			ts[p+"mlp.down_proj.weight"] = []int{mixHidden, mixFF}
		}
		cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"] = mixHidden, mixFF, mixLayers
		cfg["num_attention_heads"], cfg["num_key_value_heads"] = 2, 1
		cfg["tie_word_embeddings"], cfg["attention_bias"] = false, false
	})
}

// q4KMTypes are the types llama-quantize's Q4_K_M gives the mix test
// model, derived by hand from its rules: the output head Q6_K; attn_v and
// ffn_down Q6_K in the layers use_more_bits picks (i < n/8, i ≥ 7n/8, or
// (i − n/8) mod 3 = 2: layers 0, 3, 6, 7 of 8), Q4_K elsewhere; and
// ffn_down's rows of 320 replace Q6_K by Q8_0 and Q4_K by Q5_0.
func q4KMTypes() map[string]gguf.Type {
	want := map[string]gguf.Type{
		"token_embd.weight": gguf.TypeQ4_K, "output.weight": gguf.TypeQ6_K, "output_norm.weight": gguf.TypeF32,
	}
	for l := range mixLayers {
		b := "blk." + strconv.Itoa(l) + "."
		more := l == 0 || l == 3 || l == 6 || l == 7
		want[b+"attn_norm.weight"], want[b+"ffn_norm.weight"] = gguf.TypeF32, gguf.TypeF32
		for _, n := range []string{"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"} {
			want[b+n+".weight"] = gguf.TypeQ4_K
		}
		want[b+"attn_v.weight"], want[b+"ffn_down.weight"] = gguf.TypeQ4_K, gguf.TypeQ5_0
		if more {
			want[b+"attn_v.weight"], want[b+"ffn_down.weight"] = gguf.TypeQ6_K, gguf.TypeQ8_0
		}
	}
	return want
}

// ggufTypes returns the type of every tensor of a GGUF file.
func ggufTypes(t *testing.T, path string) map[string]gguf.Type {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]gguf.Type{}
	for _, ti := range f.Tensors {
		out[ti.Name] = ti.Type
	}
	return out
}

// ggufKV returns the value of a GGUF file's key, and whether it is there.
func ggufKV(t *testing.T, path, key string) (any, bool) {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	return v.Any(), true
}

// convertMix converts src to a GGUF file with the given mix name and
// options, as the command line does: the mix, and the datatype when the
// name is also one.
func convertMix(t *testing.T, src, name string, o Options) (string, *Result, error) {
	t.Helper()
	l, err := layout.Get("gguf")
	require.NoError(t, err)
	o.Layout = l
	o.GGUF.Mix, err = ggufmix.Lookup(name)
	require.NoError(t, err)
	o.DataType, _ = layout.DataType(l, name)
	out := filepath.Join(t.TempDir(), "m.gguf")
	res, err := Convert(src, out, o)
	return out, res, err
}

func TestMixQ4KM(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	var streamed string
	for _, whole := range []bool{false, true} {
		forceWhole = whole
		out, res, err := convertMix(t, src, "Q4_K_M", Options{Workers: 2})
		forceWhole = false
		require.NoError(t, err)
		assert.Equal(t, q4KMTypes(), ggufTypes(t, out))
		ft, ok := ggufKV(t, out, "general.file_type")
		require.True(t, ok)
		assert.Equal(t, uint32(15), ft, "LLAMA_FTYPE_MOSTLY_Q4_K_M")
		assert.Equal(t, "Q4_K_M", res.Mix)
		assert.Equal(t, "Q4_K_M", res.DataType)

		byName := map[string]TensorResult{}
		for _, r := range res.Tensors {
			byName[r.Name] = r
		}
		down := byName["blk.3.ffn_down.weight"]
		assert.Equal(t, "q8_0", down.DataType)
		assert.Contains(t, down.Reason, "Q6_K")
		assert.Contains(t, down.Reason, "falls back to Q8_0")
		assert.Equal(t, 8.5, down.Bits)
		assert.Equal(t, "q4_k", byName["blk.1.attn_q.weight"].DataType)
		assert.Equal(t, 4.5, byName["blk.1.attn_q.weight"].Bits)
		assert.Contains(t, byName["output.weight"].Reason, "Q6_K")
		assert.Empty(t, byName["blk.1.attn_norm.weight"].DataType, "norms are kept")
		assert.NotEmpty(t, byName["blk.1.attn_norm.weight"].Note)
		for _, r := range res.Tensors {
			if r.DataType != "" {
				assert.NotEmpty(t, r.Reason, r.Name)
			}
		}

		if !whole {
			streamed = out
		} else {
			sameValues(t, streamed, out)
		}

		vr, err := verifyTensors(src, out)
		require.NoError(t, err)
		for _, r := range vr {
			if r.Converted {
				require.NotNil(t, r.SQNR, r.Name)
				assert.Greater(t, *r.SQNR, 18.0, r.Name)
			}
		}
	}

	// The datatype q4_k, a name of Q4_K_M too, is the mix for a llama.cpp
	// model file, and one type for every cast weight with -gguf-generic.
	out, res, err := convertMix(t, src, "q4_k", Options{})
	require.NoError(t, err)
	assert.Equal(t, q4KMTypes(), ggufTypes(t, out))
	assert.Equal(t, "Q4_K_M", res.Mix)
	out, res, err = convertMix(t, src, "q4_k", Options{GGUF: GGUFOptions{Generic: true}})
	require.NoError(t, err)
	assert.Empty(t, res.Mix)
	types := ggufTypes(t, out)
	assert.Equal(t, gguf.TypeQ4_K, types["model.layers.3.self_attn.v_proj.weight"])
	assert.Equal(t, gguf.TypeBF16, types["model.norm.weight"])
	assert.Equal(t, gguf.TypeBF16, types["model.layers.3.mlp.down_proj.weight"], "kept: rows of 320 hold no Q4_K block")
	_, ok := ggufKV(t, out, "general.file_type")
	assert.False(t, ok)
}

// sameValues checks that two GGUF files hold the same tensors, with the
// same types and values. (A weight cast whole goes through the layout's
// tcast view and is packed again, which may store a Q6_K super-block's
// scales differently for the same values.)
func sameValues(t *testing.T, a, b string) {
	t.Helper()
	fa, err := gguf.Open(a)
	require.NoError(t, err)
	defer fa.Close()
	fb, err := gguf.Open(b)
	require.NoError(t, err)
	defer fb.Close()
	require.Equal(t, len(fa.Tensors), len(fb.Tensors))
	for _, ta := range fa.Tensors {
		tb, ok := fb.Tensor(ta.Name)
		require.True(t, ok, ta.Name)
		assert.Equal(t, ta.Type, tb.Type, ta.Name)
		va, err := fa.Float32s(ta.Name)
		require.NoError(t, err)
		vb, err := fb.Float32s(ta.Name)
		require.NoError(t, err)
		sameBits(t, va, vb, ta.Name)
	}
}

func TestMixFromGGUF(t *testing.T) {
	// A llama.cpp F16 model file (a GGUF input with an architecture)
	// quantized with a mix gets the same types as the checkpoint, from its
	// own keys (block_count, head counts).
	src := mixLlama(t, t.TempDir())
	f16, _, err := convertMix(t, src, "f16", Options{})
	require.NoError(t, err)
	assert.Equal(t, gguf.TypeF16, ggufTypes(t, f16)["blk.0.attn_q.weight"])
	out, res, err := convertMix(t, f16, "q4_k_m", Options{})
	require.NoError(t, err)
	assert.Equal(t, q4KMTypes(), ggufTypes(t, out))
	assert.Equal(t, "Q4_K_M", res.Mix)
	arch, _ := ggufKV(t, out, "general.architecture")
	assert.Equal(t, "llama", arch)
	ft, _ := ggufKV(t, out, "general.file_type")
	assert.Equal(t, uint32(15), ft)
}

func TestMixOtherMixes(t *testing.T) {
	// The base type of each mix reaches the weights its rules leave alone
	// (blk.1.attn_q), and the output head gets Q6_K except in Q8_0 and
	// Q6_K, which keep their own; rows of 320 fall back (ffn_down of a
	// layer no rule picks).
	src := mixLlama(t, t.TempDir())
	for _, c := range []struct {
		mix          string
		ft           uint32
		q, out, down gguf.Type
	}{
		{"Q8_0", 7, gguf.TypeQ8_0, gguf.TypeQ8_0, gguf.TypeQ8_0},
		{"Q6_K", 18, gguf.TypeQ6_K, gguf.TypeQ6_K, gguf.TypeQ8_0},
		{"Q5_K_M", 17, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ5_1},
		{"Q4_K_S", 14, gguf.TypeQ4_K, gguf.TypeQ6_K, gguf.TypeQ5_0},
		{"IQ4_NL", 25, gguf.TypeIQ4_NL, gguf.TypeQ6_K, gguf.TypeIQ4_NL},
		{"IQ4_XS", 30, gguf.TypeIQ4_XS, gguf.TypeQ6_K, gguf.TypeIQ4_NL},
		{"Q4_0", 2, gguf.TypeQ4_0, gguf.TypeQ6_K, gguf.TypeQ4_0},
	} {
		out, res, err := convertMix(t, src, c.mix, Options{})
		require.NoError(t, err, c.mix)
		types := ggufTypes(t, out)
		assert.Equal(t, c.q, types["blk.1.attn_q.weight"], c.mix)
		assert.Equal(t, c.out, types["output.weight"], c.mix)
		assert.Equal(t, c.down, types["blk.4.ffn_down.weight"], c.mix)
		ft, _ := ggufKV(t, out, "general.file_type")
		assert.Equal(t, c.ft, ft, c.mix)
		assert.Equal(t, c.mix, res.Mix)
	}
}

func TestMixOverrides(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	ovs, err := ggufmix.ParseOverrides([]string{`ffn_up=q8_0`, `blk\.[01]\.attn_q=f16`, `ffn_down=q6_k`})
	require.NoError(t, err)
	out, res, err := convertMix(t, src, "q4_k_m", Options{GGUF: GGUFOptions{TypeFor: ovs}})
	require.NoError(t, err)
	types := ggufTypes(t, out)
	assert.Equal(t, gguf.TypeQ8_0, types["blk.5.ffn_up.weight"])
	assert.Equal(t, gguf.TypeF16, types["blk.1.attn_q.weight"])
	assert.Equal(t, gguf.TypeQ4_K, types["blk.2.attn_q.weight"])
	assert.Equal(t, gguf.TypeQ8_0, types["blk.4.ffn_down.weight"], "an override's type falls back too")
	for _, r := range res.Tensors {
		if r.Name == "blk.5.ffn_up.weight" {
			assert.Contains(t, r.Reason, "override ffn_up=q8_0")
		}
	}

	// --pure: the base type everywhere the mix quantizes.
	out, _, err = convertMix(t, src, "q4_k_m", Options{GGUF: GGUFOptions{Pure: true}})
	require.NoError(t, err)
	types = ggufTypes(t, out)
	assert.Equal(t, gguf.TypeQ4_K, types["output.weight"])
	assert.Equal(t, gguf.TypeQ4_K, types["blk.0.attn_v.weight"])
	assert.Equal(t, gguf.TypeQ5_0, types["blk.0.ffn_down.weight"])

	// Generic output with one datatype: the rules set a weight's type,
	// which must fit its rows.
	ovs, err = ggufmix.ParseOverrides([]string{`down_proj=q8_0`, `up_proj=iq4_nl`})
	require.NoError(t, err)
	out, res, err = convertMix(t, src, "q4_k", Options{GGUF: GGUFOptions{Generic: true, TypeFor: ovs}})
	require.NoError(t, err)
	assert.Empty(t, res.Mix)
	types = ggufTypes(t, out)
	assert.Equal(t, gguf.TypeQ8_0, types["model.layers.2.mlp.down_proj.weight"])
	assert.Equal(t, gguf.TypeIQ4_NL, types["model.layers.2.mlp.up_proj.weight"])
	assert.Equal(t, gguf.TypeQ4_K, types["model.layers.2.mlp.gate_proj.weight"])
	for _, r := range res.Tensors {
		if r.Name == "model.layers.2.mlp.up_proj.weight" {
			assert.Equal(t, "override up_proj=iq4_nl: IQ4_NL", r.Reason, "worded as with a mix")
		}
	}
	ovs, err = ggufmix.ParseOverrides([]string{`down_proj=q4_k`})
	require.NoError(t, err)
	_, _, err = convertMix(t, src, "q8_0", Options{GGUF: GGUFOptions{Generic: true, TypeFor: ovs}})
	var te *ggufmix.TensorError
	require.ErrorAs(t, err, &te)
	assert.ErrorContains(t, err, "model.layers.0.mlp.down_proj.weight")
	assert.ErrorContains(t, err, "320")
}

func TestMixErrors(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	_, _, err := convertMix(t, src, "q4_k_m", Options{Include: regexp.MustCompile("norm")})
	var ie *OptionError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "Include", ie.Option)
	assert.Equal(t, "GGUF.Mix", ie.With)
	assert.ErrorIs(t, err, ErrConflict)
	_, _, err = convertMix(t, src, "q4_k", Options{GGUF: GGUFOptions{Generic: true, Pure: true}})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "GGUF.Pure", oe.Option)

	tc, err := layout.Get("tcast")
	require.NoError(t, err)
	mix, err := ggufmix.Lookup("q4_k_m")
	require.NoError(t, err)
	im := &imatrix.Imatrix{Path: "x.dat"}
	ovs, err := ggufmix.ParseOverrides([]string{"a=q8_0"})
	require.NoError(t, err)
	mx := mustDataType(t, tc, "mxfp4")
	// Refused before the input is read (it does not exist), with one
	// wording per flag.
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Layout: tc, GGUF: GGUFOptions{Mix: mix}}, "Options.GGUF.Mix: Q4_K_M is a GGUF mix, which applies to GGUF output; set Options.Layout to gguf"},
		{Options{DataType: mx, Imatrix: im}, "Options.Imatrix weights the error of quantizers that search: the GGUF types of the gguf layout (q4_k_m, iq4_xs, ...), the codebook datatypes of several tables (mxfi4, mxfp4e, icb44fi2_e32s8, ...) and, with the scale search, the MX, NVFP4, integer-group and FP8 datatypes (mxfp4, nvfp4, int4_g128, fp8e4_block128, ...); mxfp4 takes its scales by rule; unset Options.Imatrix, or set Options.ScaleSearch to true"},
		{Options{Layout: tc, DataType: mx, GGUF: GGUFOptions{TypeFor: ovs}}, "Options.GGUF.TypeFor applies to GGUF output; set Options.Layout to gguf"},
		{Options{Layout: tc, DataType: mx, GGUF: GGUFOptions{Pure: true}}, "Options.GGUF.Pure applies to GGUF output; set Options.Layout to gguf"},
	} {
		_, err = Convert(filepath.Join(t.TempDir(), "none"), filepath.Join(t.TempDir(), "o"), c.o)
		require.ErrorAs(t, err, &oe, c.want)
		assert.Equal(t, c.want, err.Error())
	}
}

func mustDataType(t *testing.T, l layout.Layout, name string) *tcast.DataType {
	t.Helper()
	dt, err := layout.DataType(l, name)
	require.NoError(t, err)
	return dt
}

// datEntry is one entry of a legacy .dat importance matrix.
type datEntry struct {
	name  string
	ncall int32
	vals  []float32
}

// writeDat writes a .dat importance matrix as its format defines it:
// int32 count, then per entry int32 name length, name, int32 ncall, int32
// value count, float32 values; then the chunk count and dataset name.
func writeDat(t *testing.T, path string, entries []datEntry) {
	t.Helper()
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(len(entries)))
	for _, e := range entries {
		b = le.AppendUint32(b, uint32(len(e.name)))
		b = append(b, e.name...)
		b = le.AppendUint32(b, uint32(e.ncall))
		b = le.AppendUint32(b, uint32(len(e.vals)))
		for _, v := range e.vals {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	}
	b = le.AppendUint32(b, 12)
	b = le.AppendUint32(b, uint32(len("calib.txt")))
	b = append(b, "calib.txt"...)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// ramp returns n importance values that vary strongly from column to
// column.
func ramp(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(1 + (i*37)%n*(i%7))
	}
	return v
}

func TestMixImatrix(t *testing.T) {
	dir := t.TempDir()
	src := mixLlama(t, dir)
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	read := func(name string) []float32 {
		x, _, err := in.Float32(name)
		require.NoError(t, err)
		return x
	}
	impQ, impDown := ramp(mixHidden), ramp(mixFF)
	// ncall 2: the importance is the stored value over ncall.
	twice := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = 2 * x
		}
		return out
	}
	imPath := filepath.Join(dir, "imatrix.dat")
	writeDat(t, imPath, []datEntry{
		{"blk.1.attn_q.weight", 2, twice(impQ)},
		{"blk.1.ffn_down.weight", 1, impDown},
		{"blk.0.ffn_down.weight", 1, impDown},
		{"token_embd.weight", 1, ramp(8)}, // the wrong size: ignored there
	})
	im, err := imatrix.Read(imPath)
	require.NoError(t, err)

	for _, whole := range []bool{false, true} {
		forceWhole = whole
		out, res, err := convertMix(t, src, "q4_k_m", Options{Imatrix: im, Workers: 2})
		forceWhole = false
		require.NoError(t, err)
		assert.Equal(t, q4KMTypes(), ggufTypes(t, out), "Q4_K_M's rules do not change with an imatrix")
		f, err := gguf.Open(out)
		require.NoError(t, err)
		raw := func(name string) []byte {
			b, err := f.TensorBytes(name)
			require.NoError(t, err)
			return b
		}
		quant := func(typ gguf.Type, x, imp []float32) []byte {
			n, _ := typ.Size(int64(len(x)))
			b := make([]byte, n)
			require.NoError(t, gguf.Quantize(typ, b, x, imp))
			return b
		}
		q := torchPermute(read("model.layers.1.self_attn.q_proj.weight"), mixHidden, mixHidden, 2)
		assert.Equal(t, quant(gguf.TypeQ4_K, q, impQ), raw("blk.1.attn_q.weight"), "whole %v", whole)
		assert.NotEqual(t, quant(gguf.TypeQ4_K, q, nil), raw("blk.1.attn_q.weight"), "the importance changes the blocks")
		down := read("model.layers.1.mlp.down_proj.weight")
		assert.Equal(t, quant(gguf.TypeQ5_0, down, impDown), raw("blk.1.ffn_down.weight"))
		k := torchPermute(read("model.layers.2.self_attn.k_proj.weight"), mixHidden/2, mixHidden, 1)
		assert.Equal(t, quant(gguf.TypeQ4_K, k, nil), raw("blk.2.attn_k.weight"), "no entry: quantized without")

		imp := map[string]ImportanceStatus{}
		for _, r := range res.Tensors {
			imp[r.Name] = r.Importance
		}
		assert.Equal(t, ImportanceUsed, imp["blk.1.attn_q.weight"])
		// The weighted SQNR, by hand from the dequantized file, each
		// element weighted as the quantizer weighs it.
		for _, r := range res.Tensors {
			if r.Name != "blk.1.attn_q.weight" {
				if r.Importance != ImportanceUsed {
					assert.Nil(t, r.WeightedSQNR, r.Name)
				}
				continue
			}
			y, err := f.Float32s(r.Name)
			require.NoError(t, err)
			ti, ok := f.Tensor(r.Name)
			require.True(t, ok)
			we := make([]float32, len(q))
			require.NoError(t, gguf.Weigh(ti.Type, we, q, impQ))
			var sig, noise float64
			for i := range q {
				w := float64(we[i])
				sig += w * float64(q[i]) * float64(q[i])
				noise += w * (float64(q[i]) - float64(y[i])) * (float64(q[i]) - float64(y[i]))
			}
			require.NotNil(t, r.WeightedSQNR)
			assert.InDelta(t, 10*math.Log10(sig/noise), *r.WeightedSQNR, 1e-9, "whole %v", whole)
			assert.Greater(t, *r.WeightedSQNR, *r.SQNR, "the search favours the important columns")
		}
		// verify -imatrix measures the same.
		vr, err := verifyTensorsWith(src, out, verify.Options{Imatrix: im})
		require.NoError(t, err)
		for _, v := range vr {
			switch v.Name {
			case "model.layers.1.self_attn.q_proj.weight":
				require.NotNil(t, v.WeightedSQNR)
				for _, r := range res.Tensors {
					if r.Name == "blk.1.attn_q.weight" {
						assert.InDelta(t, *r.WeightedSQNR, *v.WeightedSQNR, 1e-9)
					}
				}
			case "model.layers.2.self_attn.k_proj.weight", "model.embed_tokens.weight", "model.norm.weight":
				assert.Nil(t, v.WeightedSQNR, "no entry of its size: %s", v.Name)
			}
		}
		assert.Equal(t, ImportanceUsed, imp["blk.1.ffn_down.weight"])
		assert.Equal(t, ImportanceUnused, imp["blk.0.ffn_down.weight"], "Q8_0 takes none")
		assert.Equal(t, ImportanceMissing, imp["blk.2.attn_k.weight"])
		assert.Equal(t, ImportanceIgnored, imp["token_embd.weight"])
		assert.Empty(t, imp["blk.2.attn_norm.weight"], "kept")
		assert.Equal(t, imPath, res.Imatrix)

		for key, want := range map[string]any{
			"quantize.imatrix.file": "imatrix.dat", "quantize.imatrix.dataset": "calib.txt",
			"quantize.imatrix.entries_count": uint32(4), "quantize.imatrix.chunks_count": uint32(12),
		} {
			v, ok := f.Get(key)
			if assert.True(t, ok, key) {
				assert.Equal(t, want, v.Any(), key)
			}
		}
		f.Close()

		// Requantizing that file drops its importance-matrix keys: with
		// -imatrix it gets its own (no duplicate keys), without it none.
		for _, o := range []Options{{Imatrix: im, Workers: 2}, {Workers: 2}} {
			again, _, err := convertMix(t, out, "q4_k_m", o)
			require.NoError(t, err, "requantize with imatrix %v", o.Imatrix != nil)
			_, ok := ggufKV(t, again, "quantize.imatrix.file")
			assert.Equal(t, o.Imatrix != nil, ok, "requantize with imatrix %v", o.Imatrix != nil)
		}
	}

	// A size that does not match any other tensor is an error naming it.
	bad := filepath.Join(dir, "bad.dat")
	writeDat(t, bad, []datEntry{{"blk.1.attn_k.weight", 1, ramp(100)}})
	im, err = imatrix.Read(bad)
	require.NoError(t, err)
	_, _, err = convertMix(t, src, "q4_k_m", Options{Imatrix: im})
	require.Error(t, err)
	assert.ErrorContains(t, err, "blk.1.attn_k.weight")
	var se *imatrix.SizeError
	assert.ErrorAs(t, err, &se)
}

func TestMixStreams(t *testing.T) {
	// Every weight a mix casts goes through the pipeline (the permuted
	// query and key rows and those with an importance vector too).
	dir := t.TempDir()
	src := mixLlama(t, dir)
	imPath := filepath.Join(dir, "imatrix.dat")
	writeDat(t, imPath, []datEntry{{"blk.1.attn_q.weight", 1, ramp(mixHidden)}})
	im, err := imatrix.Read(imPath)
	require.NoError(t, err)
	l, err := layout.Get("gguf")
	require.NoError(t, err)
	mix, err := ggufmix.Lookup("q4_k_m")
	require.NoError(t, err)
	in, err := load.Open(src)
	require.NoError(t, err)
	defer in.Close()
	p, err := newPlan(in, &Options{Layout: l, Imatrix: im, GGUF: GGUFOptions{Mix: mix}})
	require.NoError(t, err)
	cast := 0
	for _, d := range p.tensors {
		if d.cast {
			cast++
			assert.NotNil(t, p.streamOf(d), d.info.Name)
		}
	}
	assert.Equal(t, 2+7*mixLayers, cast)
}

// Q8_K is refused for a llama.cpp model file, whose weights llama.cpp
// cannot compute with in it, and written for generic GGUF output.
func TestQ8KOnlyGeneric(t *testing.T) {
	src := mixLlama(t, t.TempDir())
	_, _, err := convertGGUF(t, src, "q8_k", Options{})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	assert.ErrorIs(t, err, ErrNotForLlamaCpp)
	assert.Equal(t, "DataType", oe.Option)
	assert.Contains(t, err.Error(), "set Options.DataType to q8_0")
	assert.Contains(t, oe.Fixes, Fix{Option: "GGUF.Generic", Value: "true"})
	out, res, err := convertGGUF(t, src, "q8_k", Options{GGUF: GGUFOptions{Generic: true}})
	require.NoError(t, err)
	assert.Equal(t, gguf.TypeQ8_K, ggufTypes(t, out)["model.layers.0.self_attn.q_proj.weight"])
	assert.Positive(t, res.Cast())
}
