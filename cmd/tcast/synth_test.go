package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// synthTo runs tcast synth writing FILE in dir with the given flags and
// returns FILE and what it printed.
func synthTo(t *testing.T, dir string, flags ...string) (string, string) {
	t.Helper()
	out := filepath.Join(dir, "model.safetensors")
	var stdout, stderr bytes.Buffer
	require.NoError(t, runSynth(append([]string{"-o", out}, flags...), &stdout, &stderr))
	return out, stdout.String()
}

func TestSynthIntermediate(t *testing.T) {
	// 8H/3 rounded up to a multiple of 256, by hand: 8·64/3 = 170.7 → 256;
	// 8·256/3 = 682.7 → 768; 8·768/3 = 2048 exactly; and Llama's own sizes,
	// 5632 for 2048 and 11008 for 4096 (Llama 2 7B).
	for h, want := range map[int]int{64: 256, 128: 512, 192: 512, 256: 768, 768: 2048, 2048: 5632, 4096: 11008} {
		assert.Equal(t, want, synthIntermediate(h), "H=%d", h)
	}
}

func TestSynthIntermediateFlag(t *testing.T) {
	// -intermediate sets the MLP width of the tensors and of config.json.
	dir := t.TempDir()
	out, _ := synthTo(t, dir, "-layers", "1", "-hidden", "128", "-intermediate", "512", "-vocab", "8")
	f, err := safetensors.Open(out)
	require.NoError(t, err)
	defer f.Close()
	shapes := map[string][]int{}
	for _, ti := range f.Tensors() {
		shapes[ti.Name] = ti.Shape
	}
	assert.Equal(t, []int{512, 128}, shapes["model.layers.0.mlp.gate_proj.weight"])
	assert.Equal(t, []int{512, 128}, shapes["model.layers.0.mlp.up_proj.weight"])
	assert.Equal(t, []int{128, 512}, shapes["model.layers.0.mlp.down_proj.weight"])
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	require.NoError(t, err)
	var cfg struct {
		Intermediate int `json:"intermediate_size"`
	}
	require.NoError(t, json.Unmarshal(b, &cfg))
	assert.Equal(t, 512, cfg.Intermediate)
}

func TestSynthNamesShapesAndConfig(t *testing.T) {
	dir := t.TempDir()
	out, msg := synthTo(t, dir, "-layers", "2", "-hidden", "128", "-vocab", "300", "-dtype", "f16")
	const H, I, V = 128, 512, 300 // I: 8·128/3 rounded up to a multiple of 256
	want := map[string][]int{
		"model.embed_tokens.weight": {V, H},
		"model.norm.weight":         {H},
		"lm_head.weight":            {V, H},
	}
	for l := range 2 {
		p := fmt.Sprintf("model.layers.%d.", l)
		for _, m := range []string{"q", "k", "v", "o"} {
			want[p+"self_attn."+m+"_proj.weight"] = []int{H, H}
		}
		want[p+"mlp.gate_proj.weight"] = []int{I, H}
		want[p+"mlp.up_proj.weight"] = []int{I, H}
		want[p+"mlp.down_proj.weight"] = []int{H, I}
		want[p+"input_layernorm.weight"] = []int{H}
		want[p+"post_attention_layernorm.weight"] = []int{H}
	}
	f, err := safetensors.Open(out)
	require.NoError(t, err)
	defer f.Close()
	got := map[string][]int{}
	var params int64
	for _, ti := range f.Tensors() {
		assert.Equal(t, safetensors.F16, ti.DType, ti.Name)
		got[ti.Name] = ti.Shape
		params += ti.NumElements()
	}
	assert.Equal(t, want, got)
	assert.Equal(t, int64(2*V*H+2*(4*H*H+3*I*H+2*H)+H), params)
	assert.Contains(t, f.Metadata()["tcast.synth"], "seed=0")
	assert.Equal(t, "pt", f.Metadata()["format"])
	assert.Contains(t, msg, fmt.Sprintf("%d tensors, %d bytes", len(want), 2*params))
	assert.Regexp(t, `in \d+\.\d\d s \(\d+ MB/s\)\n$`, msg)
	assert.Equal(t, 1, strings.Count(msg, "\n"))

	var cfg map[string]any
	js, err := os.ReadFile(filepath.Join(dir, "config.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &cfg))
	assert.Equal(t, []any{"LlamaForCausalLM"}, cfg["architectures"])
	for k, v := range map[string]float64{"hidden_size": H, "intermediate_size": I, "num_hidden_layers": 2,
		"vocab_size": V, "num_attention_heads": 2, "head_dim": 64} {
		assert.Equal(t, v, cfg[k], k)
	}
	assert.Equal(t, "float16", cfg["torch_dtype"])
	assert.Equal(t, "llama", cfg["model_type"])
}

// t4CDF is the distribution function of Student's t with 4 degrees of
// freedom (closed form, checked against a numerical integral of the density
// 3/8·(1+t²/4)^(−5/2)).
func t4CDF(t float64) float64 {
	a := 1 + t*t/4
	return 0.5 + 3.0/8*(t/math.Sqrt(a))*(1-t*t/(12*a))
}

// ksDistance is the Kolmogorov–Smirnov distance of the samples from cdf.
func ksDistance(x []float64, cdf func(float64) float64) float64 {
	sort.Float64s(x)
	var d float64
	n := float64(len(x))
	for i, v := range x {
		f := cdf(v)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}

func TestSynthStudentT(t *testing.T) {
	// The tabulated quantile against the closed form, over the whole range.
	g := t4Table()
	src := rand.NewPCG(7, 8)
	var worst float64
	for range 200000 {
		x := uint32(src.Uint64())
		got := float64(student4(g, x))
		u := x & 0x7fffffff
		want := t4Quantile((float64(u) + 0.5) * 0x1p-31)
		if x>>31 != 0 {
			want = -want
		}
		if want != 0 {
			worst = max(worst, math.Abs(got-want)/math.Abs(want))
		}
	}
	assert.Less(t, worst, 3e-4, "interpolation error")
	// The quantile inverts the distribution function: F(G(q)) = (1+q)/2.
	for _, q := range []float64{0, 1e-6, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9} {
		assert.InDelta(t, (1+q)/2, t4CDF(t4Quantile(q)), 1e-12, "q=%g", q)
	}
	// The samples follow the t distribution (KS distance; 1.63/sqrt(n) is the
	// 1% critical value).
	xs := make([]float64, 200000)
	for i := range xs {
		xs[i] = float64(student4(g, uint32(src.Uint64())))
	}
	assert.Less(t, ksDistance(xs, t4CDF), 1.63/math.Sqrt(float64(len(xs))))
}

func TestSynthValues(t *testing.T) {
	out, _ := synthTo(t, t.TempDir(), "-layers", "1", "-hidden", "256", "-vocab", "64", "-dtype", "f32", "-seed", "3")
	f, err := safetensors.Open(out)
	require.NoError(t, err)
	defer f.Close()

	// Norm weights are near 1.
	norm, err := f.Float32s("model.layers.0.input_layernorm.weight")
	require.NoError(t, err)
	for _, v := range norm {
		require.InDelta(t, 1, v, 0.5)
	}

	// A matrix: exactly two outlier columns, ×20; the rest Student-t(4) over sqrt(fan_in).
	const rows, cols = 768, 256 // gate_proj [I, H]: I = 8·256/3 rounded up to a multiple of 256
	w, err := f.Float32s("model.layers.0.mlp.gate_proj.weight")
	require.NoError(t, err)
	require.Len(t, w, rows*cols)
	colRMS := make([]float64, cols)
	for i, v := range w {
		colRMS[i%cols] += float64(v) * float64(v) / rows
	}
	order := make([]int, cols)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return colRMS[order[a]] > colRMS[order[b]] })
	outliers := order[:2]
	// t4 has variance 2, so a column's mean square is about 2/fan_in, and 400 times that for outliers.
	base := 2.0 / cols
	for _, c := range outliers {
		assert.Greater(t, colRMS[c], 100*base, "outlier column %d", c)
	}
	assert.Less(t, colRMS[order[2]], 5*base)
	var xs []float64
	for i, v := range w {
		if c := i % cols; c != outliers[0] && c != outliers[1] {
			xs = append(xs, float64(v)*math.Sqrt(cols))
		}
	}
	assert.Less(t, ksDistance(xs, t4CDF), 1.63/math.Sqrt(float64(len(xs))))
}

func TestSynthDeterministic(t *testing.T) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return b
	}
	flags := []string{"-layers", "2", "-hidden", "64", "-vocab", "5000", "-seed", "42"} // embed spans several chunks
	a, _ := synthTo(t, t.TempDir(), flags...)
	b, _ := synthTo(t, t.TempDir(), flags...)
	assert.True(t, bytes.Equal(read(a), read(b)), "same seed, same bytes")
	assert.Equal(t, read(filepath.Join(filepath.Dir(a), "config.json")), read(filepath.Join(filepath.Dir(b), "config.json")))

	// The output does not depend on the number of CPUs.
	prev := runtime.GOMAXPROCS(1)
	c, _ := synthTo(t, t.TempDir(), flags...)
	runtime.GOMAXPROCS(prev)
	assert.True(t, bytes.Equal(read(a), read(c)), "GOMAXPROCS=1 gives the same bytes")

	d, _ := synthTo(t, t.TempDir(), "-layers", "2", "-hidden", "64", "-vocab", "5000", "-seed", "43")
	fa, err := safetensors.Open(a)
	require.NoError(t, err)
	defer fa.Close()
	fd, err := safetensors.Open(d)
	require.NoError(t, err)
	defer fd.Close()
	for _, ti := range fa.Tensors() {
		x, err := fa.Bytes(ti.Name)
		require.NoError(t, err)
		y, err := fd.Bytes(ti.Name)
		require.NoError(t, err)
		assert.False(t, bytes.Equal(x, y), "seed 43 changes %s", ti.Name)
	}

	// A layer's tensors do not depend on the number of layers.
	e, _ := synthTo(t, t.TempDir(), "-layers", "1", "-hidden", "64", "-vocab", "5000", "-seed", "42")
	fe, err := safetensors.Open(e)
	require.NoError(t, err)
	defer fe.Close()
	x, _ := fa.Bytes("model.layers.0.mlp.down_proj.weight")
	y, _ := fe.Bytes("model.layers.0.mlp.down_proj.weight")
	assert.Equal(t, x, y)
}

func TestSynthForce(t *testing.T) {
	dir := t.TempDir()
	out, _ := synthTo(t, dir, "-layers", "1", "-hidden", "64", "-vocab", "16")
	first, err := os.ReadFile(out)
	require.NoError(t, err)

	// An existing output is no mistake in the command line (exit status 1,
	// as every command refuses one): atomicfile.ErrExists.
	err = runSynth([]string{"-o", out, "-layers", "1", "-hidden", "64", "-vocab", "16", "-seed", "9"}, io.Discard, io.Discard)
	require.ErrorIs(t, err, atomicfile.ErrExists)
	assert.Contains(t, err.Error(), out)
	assert.Equal(t, out+" already exists; pass -force to replace it, or choose another output",
		message("synth", err), "the command says how to replace it")
	again, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, first, again, "refused without -force: file untouched")

	require.NoError(t, runSynth([]string{"-o", out, "-layers", "1", "-hidden", "64", "-vocab", "16", "-seed", "9", "-force"}, io.Discard, io.Discard))
	again, err = os.ReadFile(out)
	require.NoError(t, err)
	assert.NotEqual(t, first, again, "-force overwrites")

	// An existing config.json beside a new file is refused too.
	other := filepath.Join(dir, "other.safetensors")
	err = runSynth([]string{"-o", other, "-layers", "1", "-hidden", "64"}, io.Discard, io.Discard)
	require.ErrorIs(t, err, atomicfile.ErrExists)
	assert.Contains(t, err.Error(), filepath.Join(dir, "config.json"))
	_, err = os.Stat(other)
	assert.True(t, errors.Is(err, os.ErrNotExist))

	// No temporary files are left behind.
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	assert.Equal(t, []string{"config.json", "model.safetensors"}, names)
}

func TestSynthBadFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.safetensors")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-layers", "1", "-hidden", "64"}, "-o FILE is required"},
		{[]string{"-o", out, "-hidden", "64"}, "-layers 0"},
		{[]string{"-o", out, "-layers", "-1", "-hidden", "64"}, "-layers -1"},
		{[]string{"-o", out, "-layers", "1"}, "-hidden 0"},
		{[]string{"-o", out, "-layers", "1", "-hidden", "96"}, "multiple of 64"},
		{[]string{"-o", out, "-layers", "1", "-hidden", "32"}, "multiple of 64"},
		{[]string{"-o", out, "-layers", "1", "-hidden", "64", "-vocab", "0"}, "-vocab 0"},
		{[]string{"-o", out, "-layers", "1", "-hidden", "64", "-vocab", "2000000"}, "-vocab 2000000"},
		{[]string{"-o", out, "-layers", "1", "-hidden", "64", "-dtype", "f8"}, `-dtype "f8"`},
		{[]string{"-o", out, "-layers", "1", "-hidden", "64", "extra"}, `unexpected argument "extra"`},
		{[]string{"-o", out, "-layers", "x"}, "-layers"},
		{[]string{"-o", dir, "-layers", "1", "-hidden", "64", "-force"}, "name ending in .safetensors"},
		{[]string{"-o", filepath.Join(dir, "model.npy"), "-layers", "1", "-hidden", "64"}, "name ending in .safetensors"},
		{[]string{"-o", out, "-layers", "1", "-hidden", "64", "-arch", "qwen2"}, `-arch "qwen2"`},
		{[]string{"-o", out, "-layers", "1", "-hidden", "64", "-arch", "llama", "-vocab", "299"}, "-vocab 300 or more"},
		{[]string{"-o", out, "-layers", "1", "-hidden", "64", "-intermediate", "100"}, "-intermediate 100"},
		{[]string{"-o", out, "-layers", "1", "-hidden", "64", "-intermediate", "-64"}, "-intermediate -64"},
	} {
		err := runSynth(c.args, io.Discard, io.Discard)
		var ue *usageError
		if assert.True(t, errors.As(err, &ue), "%v: %v", c.args, err) {
			assert.Contains(t, err.Error(), c.want, "%v", c.args)
		}
	}
	_, err := os.Stat(out)
	assert.True(t, errors.Is(err, os.ErrNotExist), "nothing written")
}

func TestSynthHalfRounding(t *testing.T) {
	// synth rounds with dtype's codecs and the ieee options: float16 against
	// x448/float16, bfloat16 against hand-derived ties and overflow.
	f16, bf := dtype.MustParse("float16"), dtype.MustParse("bfloat16")
	check := func(v float32) {
		t.Helper()
		h := []uint16{0}
		dtype.EncodeSlice(f16, h, []float32{v}, ieee)
		if math.IsNaN(float64(v)) { // x448 keeps the payload; any NaN will do
			require.True(t, h[0]&0x7c00 == 0x7c00 && h[0]&0x3ff != 0, "f16 of %#08x: %#04x", math.Float32bits(v), h[0])
			return
		}
		require.Equal(t, float16.Fromfloat32(v).Bits(), h[0], "f16 of %g (%#08x)", v, math.Float32bits(v))
	}
	for _, v := range []float32{0, 1, -1, 65504, 65519.99, 65520, -65520, 1e9, 0x1p-14, 0x1p-24, 0x1p-25,
		0x1.8p-25, 0x1.fffp-15, 0x1.ffcp-15, 1 + 0x1p-11, 1 + 0x3p-11, 1 + 0x1p-8, 1 + 0x3p-8, 3e-8, 6e-8,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		check(v)
		check(-v)
	}
	src := rand.NewPCG(1, 1)
	for range 1 << 16 {
		check(math.Float32frombits(uint32(src.Uint64())))
	}
	// Hand-derived bf16 ties: 1+2⁻⁸ is halfway between 1 (0x3f80) and 0x3f81 → even 0x3f80;
	// 1+3·2⁻⁸ is halfway between 0x3f81 and 0x3f82 → even 0x3f82; the largest
	// float32 rounds up past bfloat16's largest finite 0x7f7f to +Inf 0x7f80.
	b := make([]uint16, 3)
	dtype.EncodeSlice(bf, b, []float32{1 + 0x1p-8, 1 + 0x3p-8, math.MaxFloat32}, ieee)
	assert.Equal(t, []uint16{0x3f80, 0x3f82, 0x7f80}, b)
}

// BenchmarkSynth measures tcast synth end to end (file written and synced)
// on a checkpoint of about 200 MB of bf16 (-layers 8 -hidden 1024 -vocab 32000).
func BenchmarkSynth(b *testing.B) {
	dir := b.TempDir()
	out := filepath.Join(dir, "m.safetensors")
	args := []string{"-o", out, "-layers", "8", "-hidden", "1024", "-force"}
	ts := synthTensors(8, 1024, synthIntermediate(1024), 1024, 32000, 0, false)
	var n int64
	for _, t := range ts {
		n += int64(t.rows*t.cols) * 2
	}
	b.SetBytes(n)
	for b.Loop() {
		if err := runSynth(args, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSynthInspectHelp(t *testing.T) {
	for _, c := range []struct {
		run  func([]string, io.Writer, io.Writer) error
		want []string
	}{
		{runSynth, []string{"usage: tcast synth -o FILE", "-layers", "-hidden", "-dtype", "-seed", "-vocab", "-force"}},
		{runInspect, []string{"usage: tcast inspect [-json] [-stats=false] CHECKPOINT", "-json", "-stats"}},
	} {
		var out bytes.Buffer
		err := c.run([]string{"-h"}, &out, io.Discard)
		assert.ErrorIs(t, err, flag.ErrHelp)
		for _, w := range c.want {
			assert.Contains(t, out.String(), w)
		}
	}
}

func TestSynthArchLlama(t *testing.T) {
	dir := t.TempDir()
	out, msg := synthTo(t, dir, "-arch", "llama", "-layers", "2", "-hidden", "256", "-vocab", "1000", "-dtype", "f32")
	assert.Contains(t, msg, "tokenizer.json (")
	f, err := safetensors.Open(out)
	require.NoError(t, err)
	defer f.Close()
	// 4 heads of 64, 2 key/value heads: k and v project to 128.
	shapes := map[string][]int{}
	for _, ti := range f.Tensors() {
		shapes[ti.Name] = ti.Shape
	}
	assert.Equal(t, []int{256, 256}, shapes["model.layers.1.self_attn.q_proj.weight"])
	assert.Equal(t, []int{128, 256}, shapes["model.layers.1.self_attn.k_proj.weight"])
	assert.Equal(t, []int{128, 256}, shapes["model.layers.1.self_attn.v_proj.weight"])
	assert.Equal(t, []int{256, 256}, shapes["model.layers.1.self_attn.o_proj.weight"])
	assert.Equal(t, []int{1000, 256}, shapes["model.embed_tokens.weight"])
	assert.Contains(t, f.Metadata()["tcast.synth"], "arch=llama")
	// Matrix entries are Gaussian over sqrt(fan_in), with no outlier column
	// (KS distance to the normal distribution; 1.63/sqrt(n) is the 1%
	// critical value).
	w, err := f.Float32s("model.layers.0.mlp.up_proj.weight")
	require.NoError(t, err)
	xs := make([]float64, len(w))
	for i, v := range w {
		xs[i] = float64(v) * math.Sqrt(256)
	}
	normal := func(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }
	assert.Less(t, ksDistance(xs, normal), 1.63/math.Sqrt(float64(len(xs))))
	colMax := 0.0
	for c := range 256 {
		var ms float64
		for r := range len(w) / 256 {
			ms += float64(w[r*256+c]) * float64(w[r*256+c])
		}
		colMax = max(colMax, ms/float64(len(w)/256))
	}
	assert.Less(t, colMax, 2.0/256, "no outlier column: every column's mean square is near 1/fan_in")

	var cfg map[string]any
	js, err := os.ReadFile(filepath.Join(dir, "config.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &cfg))
	assert.Equal(t, 4.0, cfg["num_attention_heads"])
	assert.Equal(t, 2.0, cfg["num_key_value_heads"])
	assert.Equal(t, 1000.0, cfg["vocab_size"])

	var tok struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Type   string         `json:"type"`
			Vocab  map[string]int `json:"vocab"`
			Merges []string       `json:"merges"`
		} `json:"model"`
	}
	js, err = os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &tok))
	assert.Equal(t, "BPE", tok.Model.Type)
	// The 256 byte tokens, by GPT-2's byte-level alphabet: "!" stands for
	// itself, the space for "Ġ" (U+0120), the newline for "Ċ" (U+010A).
	assert.Equal(t, int('!'), tok.Model.Vocab["!"])
	assert.Equal(t, int(' '), tok.Model.Vocab["Ġ"])
	assert.Equal(t, int('\n'), tok.Model.Vocab["Ċ"])
	// Every merge joins two tokens into a token made by no earlier merge, and
	// takes the next id.
	require.GreaterOrEqual(t, len(tok.Model.Merges), 41)
	for i, m := range tok.Model.Merges {
		l, r, ok := strings.Cut(m, " ")
		require.True(t, ok, m)
		assert.Less(t, tok.Model.Vocab[l], 256+i, m)
		assert.Less(t, tok.Model.Vocab[r], 256+i, m)
		assert.Contains(t, tok.Model.Vocab, l, m)
		assert.Contains(t, tok.Model.Vocab, r, m)
		assert.Equal(t, 256+i, tok.Model.Vocab[l+r], m)
	}
	n := 256 + len(tok.Model.Merges)
	assert.Len(t, tok.Model.Vocab, n)
	require.Len(t, tok.AddedTokens, 3)
	for i, want := range []string{"<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"} {
		assert.Equal(t, n+i, tok.AddedTokens[i].ID)
		assert.Equal(t, want, tok.AddedTokens[i].Content)
		assert.True(t, tok.AddedTokens[i].Special)
	}
	assert.Equal(t, float64(n), cfg["bos_token_id"])
	assert.Equal(t, float64(n+1), cfg["eos_token_id"])
	assert.Contains(t, string(js), `"<|begin_of_text|>"`, "written as Hugging Face does, not \\u003c-escaped")

	var tc map[string]any
	js, err = os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &tc))
	assert.Equal(t, "<|begin_of_text|>", tc["bos_token"])
	assert.Equal(t, "<|end_of_text|>", tc["eos_token"])
	assert.Equal(t, true, tc["add_bos_token"])

	// A smaller vocabulary learns fewer merges; the same flags give the same files.
	dir2 := t.TempDir()
	synthTo(t, dir2, "-arch", "llama", "-layers", "1", "-hidden", "64", "-vocab", "300")
	a, err := os.ReadFile(filepath.Join(dir2, "tokenizer.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(a, &tok))
	assert.Len(t, tok.Model.Merges, 41)
	dir3 := t.TempDir()
	synthTo(t, dir3, "-arch", "llama", "-layers", "1", "-hidden", "64", "-vocab", "300")
	b, err := os.ReadFile(filepath.Join(dir3, "tokenizer.json"))
	require.NoError(t, err)
	assert.Equal(t, a, b)

	// The tokenizer files count for -force.
	require.NoError(t, os.Remove(filepath.Join(dir3, "config.json")))
	require.NoError(t, os.Remove(filepath.Join(dir3, "model.safetensors")))
	err = runSynth([]string{"-o", filepath.Join(dir3, "model.safetensors"), "-arch", "llama", "-layers", "1", "-hidden", "64", "-vocab", "300"}, io.Discard, io.Discard)
	require.ErrorIs(t, err, atomicfile.ErrExists)
	assert.Contains(t, err.Error(), "tokenizer")
}

// Finding 7 of the new-user trial: with the default -intermediate, every
// matrix of a synth model takes a 128-element group and a Hadamard
// rotation (704 for -hidden 256, the old default, is no multiple of 128).
func TestSynthDefaultFitsGroups(t *testing.T) {
	dir := t.TempDir()
	src, _ := synthTo(t, filepath.Join(dir, "m"), "-arch", "llama", "-layers", "1", "-hidden", "256", "-vocab", "512")
	code, stdout, stderr := tcast("convert", filepath.Dir(src), "-dtype", "int4_g128", "-json", "-o", filepath.Join(dir, "i4"))
	require.Equal(t, 0, code, stderr)
	var res struct {
		Tensors []struct {
			Name     string `json:"name"`
			DataType string `json:"datatype"`
			Shape    []int  `json:"shape"`
		} `json:"tensors"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	for _, r := range res.Tensors {
		if strings.HasSuffix(r.Name, "mlp.down_proj.weight") {
			assert.Equal(t, []int{256, 768}, r.Shape)
			assert.Equal(t, "int4_g128", r.DataType, "down_proj is cast")
		}
	}
	code, _, stderr = tcast("convert", filepath.Dir(src), "-dtype", "mxfp4", "-rotate", "hadamard:128", "-o", filepath.Join(dir, "rot"))
	assert.Equal(t, 0, code, stderr)
}
