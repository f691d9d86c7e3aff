package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/ordered"
)

const synthUsage = "tcast synth -o FILE -layers L -hidden H [-intermediate I] [-dtype bf16|f16|f32] [-seed S] [-vocab V] [-arch llama] [-force]\n\n" +
	"Writes a deterministic Llama-shaped checkpoint (Hugging Face names) to FILE and its config.json beside it:\n" +
	"model.embed_tokens.weight [V,H]; per layer self_attn.{q,k,v,o}_proj [H,H], mlp.{gate,up}_proj [I,H],\n" +
	"mlp.down_proj [H,I], input_layernorm and post_attention_layernorm [H]; model.norm [H]; lm_head [V,H];\n" +
	"I is -intermediate, by default 8H/3 rounded up to a multiple of 256 as in Llama (768 for H=256).\n" +
	"Matrix entries are Student-t (4 degrees of freedom) over sqrt(fan_in), with 2 outlier input\n" +
	"channels (columns) per matrix scaled by 20; norm weights are near 1.\n" +
	"The same flags give the same bytes.\n\n" +
	"-arch llama makes it a complete Llama model that llama.cpp runs once converted (tcast convert -layout gguf):\n" +
	"matrix entries Gaussian over sqrt(fan_in) without outlier columns (so quantization moves the logits\n" +
	"as little as in a trained model), heads of 64 with grouped-query attention (half as many key/value heads, so k_proj and v_proj are\n" +
	"[H/2,H] from H=128 on), and beside FILE a byte-level BPE tokenizer.json (256 byte tokens, merges learned\n" +
	"from a built-in English text, <|begin_of_text|>, <|end_of_text|>, <|eot_id|>; Llama 3's pre-tokenizer)\n" +
	"and tokenizer_config.json; V must hold its tokens (at least 300), the ids past them are unused."

// Limits of the synth flags.
const (
	synthMaxLayers = 1024
	synthMaxHidden = 65536
	synthMaxVocab  = 1 << 20
	// synthChunk is the number of elements one generation job produces (whole
	// rows, at least one). It is fixed, so the output does not depend on the
	// number of CPUs.
	synthChunk = 1 << 20
	// synthOutlierScale multiplies the outlier input channels of a matrix.
	synthOutlierScale = 20
	// synthOutliers is the number of outlier input channels per matrix.
	synthOutliers = 2
)

// synthDTypes maps the -dtype values to the safetensors dtype and the
// config.json torch_dtype.
var synthDTypes = map[string]struct {
	dt    safetensors.DType
	torch string
}{
	"bf16": {safetensors.BF16, "bfloat16"}, "bfloat16": {safetensors.BF16, "bfloat16"},
	"f16": {safetensors.F16, "float16"}, "float16": {safetensors.F16, "float16"},
	"f32": {safetensors.F32, "float32"}, "float32": {safetensors.F32, "float32"},
}

// synthConfig is the config.json written beside a synth checkpoint.
type synthConfig struct {
	Architectures         []string `json:"architectures"`
	ModelType             string   `json:"model_type"`
	HiddenSize            int      `json:"hidden_size"`
	IntermediateSize      int      `json:"intermediate_size"`
	NumHiddenLayers       int      `json:"num_hidden_layers"`
	NumAttentionHeads     int      `json:"num_attention_heads"`
	NumKeyValueHeads      int      `json:"num_key_value_heads"`
	HeadDim               int      `json:"head_dim"`
	BOSTokenID            *int     `json:"bos_token_id,omitempty"`
	EOSTokenID            *int     `json:"eos_token_id,omitempty"`
	VocabSize             int      `json:"vocab_size"`
	MaxPositionEmbeddings int      `json:"max_position_embeddings"`
	HiddenAct             string   `json:"hidden_act"`
	RMSNormEps            float64  `json:"rms_norm_eps"`
	RopeTheta             float64  `json:"rope_theta"`
	TieWordEmbeddings     bool     `json:"tie_word_embeddings"`
	TorchDType            string   `json:"torch_dtype"`
	TcastSynthSeed        uint64   `json:"tcast_synth_seed"`
}

// synthTensor is one tensor of a synth checkpoint.
type synthTensor struct {
	name     string
	rows     int // 1 for a norm vector
	cols     int // the fan-in of a matrix, H for a norm vector
	norm     bool
	gauss    bool   // Gaussian entries without outliers (-arch llama)
	stream   uint64 // per-tensor stream of the generator, from the name
	outliers [synthOutliers]int
	scale    float32 // 1/sqrt(fan_in) for matrices
}

func (t *synthTensor) shape() []int {
	if t.norm {
		return []int{t.cols}
	}
	return []int{t.rows, t.cols}
}

// synthIntermediate is the MLP width for hidden size h as Llama's
// reference code sizes it: 8h/3 rounded up to a multiple of 256
// (multiple_of = 256), so 5632 for 2048 and 11008 for 4096. Every row of
// down_proj is then a whole number of 128- and 256-element blocks.
func synthIntermediate(h int) int {
	return (8*h + 3*256 - 1) / (3 * 256) * 256
}

// synthTensors lists the tensors of a synth checkpoint in a fixed order; the
// MLP is inter wide, the key and value projections have kv rows. With gauss, matrix entries are
// Gaussian and no column is an outlier.
func synthTensors(layers, hidden, inter, kv, vocab int, seed uint64, gauss bool) []*synthTensor {
	var ts []*synthTensor
	mat := func(name string, rows, cols int) {
		ts = append(ts, &synthTensor{name: name, rows: rows, cols: cols})
	}
	norm := func(name string) {
		ts = append(ts, &synthTensor{name: name, rows: 1, cols: hidden, norm: true})
	}
	mat("model.embed_tokens.weight", vocab, hidden)
	for i := range layers {
		p := "model.layers." + strconv.Itoa(i) + "."
		mat(p+"self_attn.q_proj.weight", hidden, hidden)
		mat(p+"self_attn.k_proj.weight", kv, hidden)
		mat(p+"self_attn.v_proj.weight", kv, hidden)
		mat(p+"self_attn.o_proj.weight", hidden, hidden)
		mat(p+"mlp.gate_proj.weight", inter, hidden)
		mat(p+"mlp.up_proj.weight", inter, hidden)
		mat(p+"mlp.down_proj.weight", hidden, inter)
		norm(p + "input_layernorm.weight")
		norm(p + "post_attention_layernorm.weight")
	}
	norm("model.norm.weight")
	mat("lm_head.weight", vocab, hidden)
	for _, t := range ts {
		t.stream = fnv64a(t.name)
		if t.norm {
			continue
		}
		t.gauss = gauss
		t.scale = float32(1 / math.Sqrt(float64(t.cols)))
		r := rand.New(rand.NewPCG(seed, t.stream))
		t.outliers[0] = r.IntN(t.cols)
		t.outliers[1] = t.outliers[0]
		for t.outliers[1] == t.outliers[0] && t.cols > 1 {
			t.outliers[1] = r.IntN(t.cols)
		}
	}
	return ts
}

func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// splitmix64 is the finalizer of SplitMix64, used to derive chunk streams.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// The Student-t variates (4 degrees of freedom) come from the inverse of
// the distribution function: a 32-bit draw gives a sign bit and q, uniform in
// [0, 1), and |t| = G(q) = F⁻¹((1+q)/2). For ν = 4 the quantile has a closed
// form: with θ = asin(q)/3, G(q) = 2·sqrt(2·sin 2θ·sin θ / cos 3θ) (the usual
// cos(acos(√α)/3)/√α − 1 form, α = 1 − q², rewritten without cancellation).
// G is tabulated at t4TableN points and interpolated linearly; the last
// t4Exact intervals, where G bends towards its pole at q = 1, are computed
// exactly.
const (
	t4Bits   = 12
	t4TableN = 1 << t4Bits
	t4Exact  = 16
)

// t4Quantile returns G(q) for q in [0, 1).
func t4Quantile(q float64) float64 {
	th := math.Asin(q) / 3
	c3 := math.Sqrt(float64((1 - q) * (1 + q)))
	return 2 * math.Sqrt(float64(2*math.Sin(2*th)*math.Sin(th))/c3)
}

var t4Table = sync.OnceValue(func() *[t4TableN + 1]float32 {
	var g [t4TableN + 1]float32
	for i := range t4TableN - t4Exact + 2 {
		g[i] = float32(t4Quantile(float64(i) / t4TableN))
	}
	return &g
})

// student4 returns a Student-t variate (4 degrees of freedom) from 32
// uniform bits.
func student4(g *[t4TableN + 1]float32, x uint32) float32 {
	u := x & 0x7fffffff
	i := u >> (31 - t4Bits)
	var v float32
	if i < t4TableN-t4Exact {
		frac := float32(u&(1<<(31-t4Bits)-1)) * (1.0 / (1 << (31 - t4Bits)))
		g0 := g[i]
		v = g0 + float32(frac*(g[i+1]-g0)) // the conversion forbids a fused multiply-add
	} else {
		v = float32(t4Quantile((float64(u) + 0.5) * 0x1p-31))
	}
	return math.Float32frombits(math.Float32bits(v) ^ x&0x80000000) // the sign, without a branch
}

// synthJob is one chunk of one tensor: nrows rows from row chunk·rowsPerChunk.
type synthJob struct {
	t            *synthTensor
	chunk        int
	nrows, bytes int
}

// generate fills buf with the chunk's elements encoded as dt.
func (j synthJob) generate(seed uint64, dt safetensors.DType, buf []byte) {
	t := j.t
	src := rand.NewPCG(seed, splitmix64(t.stream+uint64(j.chunk+1)*0x9e3779b97f4a7c15))
	g := t4Table()
	row := make([]float32, t.cols+1) // +1: values come in pairs
	width := dt.BitSize() / 8
	var half *dtype.Format // the 16-bit format, nil for F32
	switch dt {
	case safetensors.F16:
		half = dtype.MustParse("float16")
	case safetensors.BF16:
		half = dtype.MustParse("bfloat16")
	}
	codes := make([]uint16, t.cols)
	mul, add := t.scale, float32(0)
	if t.norm {
		mul, add = 0.02, 1
	}
	normal := rand.New(src)
	for r := range j.nrows {
		if t.gauss {
			for c := range t.cols {
				row[c] = float32(normal.NormFloat64()) * mul
			}
		} else {
			for c := 0; c < t.cols; c += 2 {
				x := src.Uint64()
				row[c] = add + float32(mul*student4(g, uint32(x)))
				row[c+1] = add + float32(mul*student4(g, uint32(x>>32)))
			}
		}
		vals := row[:t.cols]
		if !t.norm && !t.gauss {
			for _, c := range t.outliers {
				vals[c] *= synthOutlierScale
			}
		}
		out := buf[r*t.cols*width : (r+1)*t.cols*width]
		if half == nil {
			for c, v := range vals {
				binary.LittleEndian.PutUint32(out[4*c:], math.Float32bits(v))
			}
			continue
		}
		dtype.EncodeSlice(half, codes, vals, ieee)
		for c, h := range codes {
			binary.LittleEndian.PutUint16(out[2*c:], h)
		}
	}
}

// ieee rounds to nearest even and overflows to ±Inf, as a float32 → float16 or
// bfloat16 conversion does.
var ieee = dtype.Options{Overflow: dtype.OverflowIEEE}

// synthFlags are the flags of tcast synth.
type synthFlags struct {
	out, dtName, arch            string
	layers, hidden, inter, vocab int
	seed                         uint64
	force                        bool
}

func (f *synthFlags) define(fset *flag.FlagSet) {
	fset.StringVar(&f.out, "o", "", "output safetensors `FILE` (config.json is written beside it)")
	fset.IntVar(&f.layers, "layers", 0, "number of transformer layers `L` (1.."+strconv.Itoa(synthMaxLayers)+")")
	fset.IntVar(&f.hidden, "hidden", 0, "hidden size `H`: a multiple of 64, 64.."+strconv.Itoa(synthMaxHidden))
	fset.IntVar(&f.inter, "intermediate", 0, "MLP width `I`: a multiple of 64 up to 4·"+strconv.Itoa(synthMaxHidden)+" (0: 8H/3 rounded up to a multiple of 256, as Llama sizes it: 5632 for H=2048, 11008 for H=4096)")
	fset.StringVar(&f.dtName, "dtype", "bf16", "element `TYPE`: bf16, f16 or f32 (rounded to nearest even from float32)")
	fset.Uint64Var(&f.seed, "seed", 0, "seed `S` of the generator")
	fset.IntVar(&f.vocab, "vocab", 32000, "vocabulary size `V` (1.."+strconv.Itoa(synthMaxVocab)+")")
	fset.StringVar(&f.arch, "arch", "", "`llama`: a complete Llama model with grouped-query attention, tokenizer.json and tokenizer_config.json")
	fset.BoolVar(&f.force, "force", false, "overwrite FILE and its config.json (and tokenizer files) if they exist")
}

// check checks the flags' values.
func (f *synthFlags) check(pos []string) error {
	_, ok := synthDTypes[f.dtName]
	switch {
	case len(pos) != 0:
		return usagef("unexpected argument %q: the output is given with -o FILE", pos[0])
	case f.out == "":
		return usagef("-o FILE is required")
	case !strings.HasSuffix(f.out, ".safetensors"):
		return usagef("-o %s: synth writes a safetensors file; give a name ending in .safetensors", f.out)
	case f.layers < 1 || f.layers > synthMaxLayers:
		return usagef("-layers %d: want 1..%d", f.layers, synthMaxLayers)
	case f.hidden < 64 || f.hidden > synthMaxHidden || f.hidden%64 != 0:
		return usagef("-hidden %d: want a multiple of 64 in 64..%d", f.hidden, synthMaxHidden)
	case f.inter < 0 || f.inter > 4*synthMaxHidden || f.inter%64 != 0:
		return usagef("-intermediate %d: want a multiple of 64 up to %d (or 0 for the default)", f.inter, 4*synthMaxHidden)
	case f.vocab < 1 || f.vocab > synthMaxVocab:
		return usagef("-vocab %d: want 1..%d", f.vocab, synthMaxVocab)
	case !ok:
		return usagef("-dtype %q: want bf16, f16 or f32", f.dtName)
	case f.arch != "" && f.arch != "llama":
		return usagef("-arch %q: want llama (or no -arch)", f.arch)
	}
	if f.inter == 0 {
		f.inter = synthIntermediate(f.hidden)
	}
	return nil
}

// checkOutputs refuses outputs that exist (without -force) or a directory
// named as the weights' file, and makes the output's directory.
func (f *synthFlags) checkOutputs(files []string) error {
	if !f.force {
		for _, p := range files {
			if _, err := os.Lstat(p); err == nil {
				return atomicfile.Exists(p)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	if fi, err := os.Stat(f.out); err == nil && fi.IsDir() {
		return usagef("%s is a directory; -o wants a file name", f.out)
	}
	return os.MkdirAll(filepath.Dir(f.out), 0o755)
}

func runSynth(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("synth", flag.ContinueOnError)
	var f synthFlags
	f.define(fset)
	pos, err := parseArgs(fset, synthUsage, args, stdout)
	if err != nil {
		return err
	}
	if err := f.check(pos); err != nil {
		return err
	}
	heads := f.hidden / 64
	kvHeads := heads
	var tok *synthTok
	dir := filepath.Dir(f.out)
	files := []string{f.out, filepath.Join(dir, "config.json")}
	if f.arch == "llama" {
		if heads%2 == 0 {
			kvHeads = heads / 2
		}
		tok = synthTokenizer(f.vocab)
		if tok.size > f.vocab {
			return usagef("-vocab %d: -arch llama's tokenizer has %d tokens; give -vocab %d or more", f.vocab, tok.size, tok.size)
		}
		files = append(files, filepath.Join(dir, "tokenizer.json"), filepath.Join(dir, "tokenizer_config.json"))
	}
	if err := f.checkOutputs(files); err != nil {
		return err
	}
	start := time.Now()
	ts := synthTensors(f.layers, f.hidden, f.inter, kvHeads*64, f.vocab, f.seed, tok != nil)
	nbytes, params, err := f.writeTensors(ts, tok != nil)
	if err != nil {
		return err
	}
	if err := f.writeConfig(heads, kvHeads, tok); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	extra := "config.json"
	if tok != nil {
		extra += fmt.Sprintf(", tokenizer.json (%d tokens, %d merges), tokenizer_config.json", tok.size, tok.merges)
	}
	fmt.Fprintf(stdout, "%s: %d tensors, %d bytes of %s data (%d parameters), %s, in %.2f s (%.0f MB/s)\n",
		f.out, len(ts), nbytes, synthDTypes[f.dtName].dt, params, extra, secs, float64(nbytes)/1e6/max(secs, 1e-9))
	return nil
}

// writeTensors generates and writes the tensors ts, and returns their bytes
// and parameters.
func (f *synthFlags) writeTensors(ts []*synthTensor, llama bool) (nbytes, params int64, err error) {
	dtInfo := synthDTypes[f.dtName]
	dt := dtInfo.dt
	width := dt.BitSize() / 8
	specs := make([]safetensors.TensorSpec, len(ts))
	var jobs []synthJob
	for i, t := range ts {
		specs[i] = safetensors.TensorSpec{Name: t.name, DType: dt, Shape: t.shape()}
		rowsPer := max(1, synthChunk/t.cols)
		for c, r0 := 0, 0; r0 < t.rows; c, r0 = c+1, r0+rowsPer {
			n := min(rowsPer, t.rows-r0)
			jobs = append(jobs, synthJob{t: t, chunk: c, nrows: n, bytes: n * t.cols * width})
		}
		params += int64(t.rows) * int64(t.cols)
	}
	meta := map[string]string{
		"format": "pt",
		layout.KeySynth: fmt.Sprintf("layers=%d hidden=%d intermediate=%d vocab=%d dtype=%s seed=%d",
			f.layers, f.hidden, f.inter, f.vocab, dtInfo.torch, f.seed) + map[bool]string{true: " arch=llama"}[llama],
	}
	w, err := safetensors.Create(f.out, specs, meta)
	if err != nil {
		return 0, 0, err
	}
	if err := synthWrite(w, jobs, f.seed, dt); err != nil {
		w.Abort()
		return 0, 0, fmt.Errorf("%s: %w", f.out, err)
	}
	return params * int64(width), params, w.Close()
}

// writeConfig writes config.json and, for -arch llama, the tokenizer files
// beside the weights.
func (f *synthFlags) writeConfig(heads, kvHeads int, tok *synthTok) error {
	dir := filepath.Dir(f.out)
	cfg := synthConfig{
		Architectures: []string{"LlamaForCausalLM"}, ModelType: "llama",
		HiddenSize: f.hidden, IntermediateSize: f.inter, NumHiddenLayers: f.layers,
		NumAttentionHeads: heads, NumKeyValueHeads: kvHeads, HeadDim: 64, VocabSize: f.vocab,
		MaxPositionEmbeddings: 2048, HiddenAct: "silu", RMSNormEps: 1e-5, RopeTheta: 10000,
		TorchDType: synthDTypes[f.dtName].torch, TcastSynthSeed: f.seed,
	}
	if tok != nil {
		cfg.BOSTokenID, cfg.EOSTokenID = &tok.bos, &tok.eos
		for name, b := range map[string][]byte{"tokenizer.json": tok.json, "tokenizer_config.json": tok.config} {
			if err := atomicfile.WriteFile(filepath.Join(dir, name), b); err != nil {
				return err
			}
		}
	}
	js, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "config.json"), append(js, '\n'))
}

// synthWrite generates the jobs on every CPU and writes their bytes in job
// order (each tensor's chunks in order, as Writer.Write appends), holding at
// most a few chunks per CPU in memory.
func synthWrite(w *safetensors.Writer, jobs []synthJob, seed uint64, dt safetensors.DType) error {
	workers := runtime.GOMAXPROCS(0)
	bufs := make([][]byte, len(jobs))
	pool := sync.Pool{}
	return ordered.Run(len(jobs), workers, 2*workers+1, func(i int) error {
		j := jobs[i]
		if p, ok := pool.Get().(*[]byte); ok && cap(*p) >= j.bytes {
			bufs[i] = (*p)[:j.bytes]
		} else {
			bufs[i] = make([]byte, j.bytes)
		}
		j.generate(seed, dt, bufs[i])
		return nil
	}, func(i int) error {
		b := bufs[i]
		bufs[i] = nil
		err := w.Write(jobs[i].t.name, b)
		pool.Put(&b)
		return err
	})
}
