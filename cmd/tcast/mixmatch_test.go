package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/ggufmix"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
)

// mixArch is a small F16 GGUF model of one architecture, laid out as
// llama.cpp's converter writes that architecture's tensors.
type mixArch struct {
	name, arch                   string
	layers, hidden, ffn, vocab   int
	heads, kvHeads, experts      int
	fusedQKV, fusedUp, tied      bool
	sharedExperts, normEpsilonLN bool
	ffnBias                      bool // ffn_gate, ffn_up and ffn_down biases
	// iq picks the model's jobs of the IQ1, IQ2 and IQ3 mixes, whose
	// llama.cpp quantizers are slow (see iqJobs).
	iq iqJobs
}

// iqJobs picks the IQ mixes a model is quantized with.
type iqJobs int

const (
	iqAll      iqJobs = iota // every IQ mix but the iqSiblings
	iqSiblings               // every IQ mix
	iqFew                    // IQ1_M and IQ3_M only
)

// iqSiblingMixes are the mixes with another's rules but for the base type
// (IQ2_XS has IQ2_XXS's, IQ1_S IQ1_M's, IQ2_S IQ2_M's), whose quantizers
// are llama.cpp's slowest: they run on the iqSiblings model only.
var iqSiblingMixes = map[ggufmix.Mix]bool{
	ggufmix.MixIQ2_XS: true, ggufmix.MixIQ1_S: true, ggufmix.MixIQ2_S: true,
}

// iqGrid reports whether m is an IQ1, IQ2 or IQ3 mix, of an IQ grid type.
func iqGrid(m ggufmix.Mix) bool {
	return strings.HasPrefix(m.Base().String(), "IQ") && !strings.HasPrefix(m.String(), "IQ4")
}

// runs reports whether the model is quantized with mix m.
func (a mixArch) runs(m ggufmix.Mix) bool {
	if !iqGrid(m) {
		return true
	}
	switch a.iq {
	case iqFew:
		return m == ggufmix.MixIQ1_M || m == ggufmix.MixIQ3_M
	case iqAll:
		return !iqSiblingMixes[m]
	}
	return true
}

// mixArches are the models the mix rules are checked on: dense with and
// without grouped-query attention and with FFN rows no K-quant divides
// (and FFN biases, which the layer positions do not count), tied
// embeddings (gemma), fused QKV (phi3, falcon, whose rules differ),
// Mixtral's 8 experts, an 8-layer 4-expert model with shared experts
// (qwen2moe: two ffn_down tensors a layer, which the IQ1 and IQ2 mixes
// count one by one) and an 80-layer llama, which llama.cpp classes as 70B
// (quantized with two IQ mixes only: the 70B rule, attention V's Q5_K, is
// the same for the IQ3 mixes and skipped by all IQ1 and IQ2 mixes).
var mixArches = []mixArch{
	{name: "llama-gqa", arch: "llama", layers: 8, hidden: 256, ffn: 512, vocab: 512, heads: 8, kvHeads: 2},
	{name: "llama-704", arch: "llama", layers: 8, hidden: 256, ffn: 704, vocab: 512, heads: 4,
		kvHeads: 4, ffnBias: true, iq: iqSiblings},
	{name: "gemma", arch: "gemma", layers: 4, hidden: 256, ffn: 512, vocab: 512, heads: 4, kvHeads: 1, tied: true},
	{name: "phi3", arch: "phi3", layers: 4, hidden: 256, ffn: 512, vocab: 512, heads: 4, kvHeads: 4,
		fusedQKV: true, fusedUp: true},
	{name: "falcon", arch: "falcon", layers: 4, hidden: 256, ffn: 1024, vocab: 512, heads: 4, kvHeads: 1,
		fusedQKV: true, normEpsilonLN: true},
	{name: "mixtral", arch: "llama", layers: 4, hidden: 256, ffn: 256, vocab: 512, heads: 8, kvHeads: 2,
		experts: 8},
	{name: "qwen2moe", arch: "qwen2moe", layers: 8, hidden: 256, ffn: 256, vocab: 512, heads: 4, kvHeads: 4,
		experts: 4, sharedExperts: true},
	{name: "llama-70b", arch: "llama", layers: 80, hidden: 256, ffn: 256, vocab: 256, heads: 8,
		kvHeads: 1, iq: iqFew},
}

// tensors lists the model's tensors by GGUF name with their row-major
// shapes.
func (a mixArch) tensors() []ggufmix.Tensor {
	h, kv := a.hidden, a.hidden/a.heads*a.kvHeads
	ts := []ggufmix.Tensor{{Name: "token_embd.weight", Shape: []int{a.vocab, h}},
		{Name: "output_norm.weight", Shape: []int{h}}}
	if !a.tied {
		ts = append(ts, ggufmix.Tensor{Name: "output.weight", Shape: []int{a.vocab, h}})
	}
	for i := range a.layers {
		add := func(n string, shape ...int) {
			ts = append(ts, ggufmix.Tensor{Name: fmt.Sprintf("blk.%d.%s.weight", i, n), Shape: shape})
		}
		add("attn_norm", h)
		if a.fusedQKV {
			add("attn_qkv", h+2*kv, h)
		} else {
			add("attn_q", h, h)
			add("attn_k", kv, h)
			add("attn_v", kv, h)
		}
		add("attn_output", h, h)
		add("ffn_norm", h)
		switch {
		case a.experts > 1:
			add("ffn_gate_inp", a.experts, h)
			add("ffn_gate_exps", a.experts, a.ffn, h)
			add("ffn_up_exps", a.experts, a.ffn, h)
			add("ffn_down_exps", a.experts, h, a.ffn)
			if a.sharedExperts {
				add("ffn_gate_inp_shexp", 1, h)
				add("ffn_gate_shexp", a.ffn, h)
				add("ffn_up_shexp", a.ffn, h)
				add("ffn_down_shexp", h, a.ffn)
			}
		case a.fusedUp:
			add("ffn_up", 2*a.ffn, h)
			add("ffn_down", h, a.ffn)
		case a.arch == "falcon":
			add("ffn_up", a.ffn, h)
			add("ffn_down", h, a.ffn)
		default:
			add("ffn_gate", a.ffn, h)
			add("ffn_up", a.ffn, h)
			add("ffn_down", h, a.ffn)
		}
		if a.ffnBias {
			for _, b := range []ggufmix.Tensor{{Name: "ffn_gate", Shape: []int{a.ffn}},
				{Name: "ffn_up", Shape: []int{a.ffn}}, {Name: "ffn_down", Shape: []int{h}}} {
				n := fmt.Sprintf("blk.%d.%s.bias", i, b.Name)
				ts = append(ts, ggufmix.Tensor{Name: n, Shape: b.Shape})
			}
		}
	}
	return ts
}

// write writes the model as an F16 GGUF file (F32 for 1-D tensors) with
// the hyper-parameters llama.cpp's loader needs.
func (a mixArch) write(t *testing.T, path string) {
	t.Helper()
	var w gguf.Writer
	kv := func(k string, v gguf.Value) { require.NoError(t, w.AddKV(k, v)) }
	u32 := func(k string, n int) { kv(a.arch+"."+k, gguf.Uint32(uint32(n))) }
	kv("general.architecture", gguf.String(a.arch))
	kv("general.name", gguf.String(a.name))
	kv("general.file_type", gguf.Uint32(1))
	u32("block_count", a.layers)
	u32("context_length", 2048)
	u32("embedding_length", a.hidden)
	u32("feed_forward_length", a.ffn)
	u32("attention.head_count", a.heads)
	u32("attention.head_count_kv", a.kvHeads)
	u32("rope.dimension_count", a.hidden/a.heads)
	u32("vocab_size", a.vocab)
	if a.normEpsilonLN {
		kv(a.arch+".attention.layer_norm_epsilon", gguf.Float32(1e-5))
	} else {
		kv(a.arch+".attention.layer_norm_rms_epsilon", gguf.Float32(1e-5))
	}
	if a.experts > 1 {
		u32("expert_count", a.experts)
		u32("expert_used_count", 2)
		u32("expert_feed_forward_length", a.ffn)
	}
	if a.sharedExperts {
		u32("expert_shared_feed_forward_length", a.ffn)
	}
	rng := rand.New(rand.NewPCG(uint64(len(a.name)), uint64(a.layers)))
	for _, ts := range a.tensors() {
		n := 1
		for _, d := range ts.Shape {
			n *= d
		}
		var b bytes.Buffer
		typ := gguf.TypeF16
		for range n {
			v := float32(rng.NormFloat64() * 0.05)
			if len(ts.Shape) == 1 {
				_ = binary.Write(&b, binary.LittleEndian, v)
			} else {
				_ = binary.Write(&b, binary.LittleEndian, float16.Fromfloat32(v).Bits())
			}
		}
		if len(ts.Shape) == 1 {
			typ = gguf.TypeF32
		}
		require.NoError(t, w.AddTensor(ts.Name, typ, ts.Shape, b.Bytes()))
	}
	require.NoError(t, w.WriteFile(path))
}

// libllama returns libllama.so of node-llama-cpp's prebuilt CPU build and
// a Python to call it with, or skips the test.
func libllama(t *testing.T) (python, lib string) {
	t.Helper()
	_, mods := llamaRuntime(t)
	matches, _ := filepath.Glob(filepath.Join(mods, "@node-llama-cpp", "linux-x64", "bins", "linux-x64", "libllama*.so"))
	if len(matches) == 0 {
		t.Skipf("optional tool missing: no libllama*.so under %s/@node-llama-cpp/linux-x64 (.ci/run installs it)", mods)
	}
	python, err := exec.LookPath(os.Getenv("TCAST_PYTHON"))
	if err != nil {
		if python, err = exec.LookPath("python3"); err != nil {
			t.Skip("optional tool missing: python3 (it calls libllama through ctypes)")
		}
	}
	return python, matches[0]
}

// model returns the description of a that ggufmix.Plan takes.
func (a mixArch) model() ggufmix.Model {
	return ggufmix.Model{Arch: a.arch, Layers: a.layers, Heads: a.heads, KVHeads: a.kvHeads,
		Experts: a.experts}
}

// mixJob is one llama_model_quantize call of llama_quantize.py, and the
// tcast convert arguments that should give the same file.
type mixJob struct {
	In    string `json:"in"`
	Out   string `json:"out"`
	Ftype uint32 `json:"ftype"`
	// Threads is llama.cpp's thread count (nthread; 1 when 0).
	Threads int `json:"nthread,omitempty"`
	// The options of llama_quantize.py; see its doc string.
	OutputType      *gguf.Type       `json:"output_tensor_type,omitempty"`
	TokenType       *gguf.Type       `json:"token_embedding_type,omitempty"`
	LeaveOutput     bool             `json:"leave_output,omitempty"`
	OnlyCopy        bool             `json:"only_copy,omitempty"`
	Pure            bool             `json:"pure,omitempty"`
	AllowRequantize bool             `json:"allow_requantize,omitempty"`
	Prune           []int            `json:"prune_layers,omitempty"`
	KV              []map[string]any `json:"kv_overrides,omitempty"`
	TensorTypes     []map[string]any `json:"tensor_types,omitempty"`
	Imatrix         map[string]int   `json:"imatrix,omitempty"`

	name string   // for messages
	args []string // tcast convert's, after IN -layout gguf -o OUT
	keys []string // metadata keys whose values must match too
	// mix and arch are the job's mix and model, for a job of a mix on
	// the F16 model (mixJobs, and the IQ3_XXS flag job).
	mix  ggufmix.Mix
	arch mixArch
}

// typeOf returns a pointer to t, for mixJob's optional types.
func typeOf(t gguf.Type) *gguf.Type { return &t }

// imatrixMixes are the mixes run with an importance matrix as well: those
// that give types llama-quantize quantizes only with one, and IQ3_XXS,
// whose rules read whether there is one.
var imatrixMixes = map[ggufmix.Mix]bool{
	ggufmix.MixIQ1_S: true, ggufmix.MixIQ1_M: true, ggufmix.MixIQ2_XXS: true,
	ggufmix.MixIQ2_XS: true, ggufmix.MixIQ2_S: true, ggufmix.MixIQ2_M: true,
	ggufmix.MixIQ3_XXS: true, ggufmix.MixIQ3_XS: true,
}

// mixJobs are the jobs of every mix model a runs (in F16 at in), and of
// the imatrixMixes with the importance matrix of ones at imPath (of
// sizes ones).
func mixJobs(a mixArch, in, dir, imPath string, ones map[string]int) []mixJob {
	var jobs []mixJob
	for _, m := range ggufmix.Mixes() {
		if !a.runs(m) {
			continue
		}
		out := filepath.Join(dir, a.name+"-llama-"+m.String())
		threads := 1
		if iqGrid(m) {
			threads = runtime.NumCPU() // llama.cpp's IQ quantizers are slow
		}
		jobs = append(jobs, mixJob{In: in, Out: out + ".gguf", Ftype: m.FileType(), Threads: threads,
			OnlyCopy: m.Copies(), args: []string{"-dtype", m.String()}, mix: m, arch: a})
		if imatrixMixes[m] {
			jobs = append(jobs, mixJob{In: in, Out: out + "-imatrix.gguf", Ftype: m.FileType(),
				Threads: threads, Imatrix: ones, args: []string{"-dtype", m.String(), "-imatrix", imPath},
				mix: m, arch: a})
		}
	}
	return jobs
}

// flagJobs are the jobs of llama-quantize's flags on model a (in F16 at
// in, in Q4_K_M at q4km, its importance matrix of ones at imPath, of
// sizes ones) that tcast's flags of the same names must match.
func flagJobs(a mixArch, in, q4km, dir, imPath string, ones map[string]int) []mixJob {
	out := func(what string) string { return filepath.Join(dir, a.name+"-llama-"+what+".gguf") }
	q4, q5s, q2s := ggufmix.MixQ4_K_M.FileType(), ggufmix.MixQ5_K_S.FileType(), ggufmix.MixQ2_K_S.FileType()
	needsIm := "attn_q|attn_k|ffn_gate|ffn_up" // IQ3_XXS's that need an importance matrix
	return []mixJob{
		{In: in, Out: out("output-type"), Ftype: q4, OutputType: typeOf(gguf.TypeQ8_0),
			args: []string{"-dtype", "Q4_K_M", "--output-tensor-type", "q8_0"}},
		{In: in, Out: out("embd-type"), Ftype: q4, TokenType: typeOf(gguf.TypeQ8_0),
			args: []string{"-dtype", "Q4_K_M", "--token-embedding-type", "Q8_0"}},
		{In: in, Out: out("both-types"), Ftype: q5s, OutputType: typeOf(gguf.TypeQ4_K),
			TokenType: typeOf(gguf.TypeQ6_K),
			TensorTypes: []map[string]any{{"pattern": "attn_q", "type": int(gguf.TypeQ8_0)},
				{"pattern": "token_embd", "type": int(gguf.TypeQ5_0)}},
			args: []string{"-dtype", "Q5_K_S", "-output-tensor-type", "q4_k", "-token-embedding-type", "q6_k",
				"-tensor-type", "attn_q=q8_0", "-tensor-type", "token_embd=q5_0"}},
		{In: in, Out: out("leave-output"), Ftype: q4, LeaveOutput: true,
			args: []string{"-dtype", "Q4_K_M", "--leave-output-tensor"}},
		{In: in, Out: out("prune"), Ftype: q4, Prune: []int{1, 2}, keys: []string{a.arch + ".block_count"},
			args: []string{"-dtype", "Q4_K_M", "--prune-layers", "2,1"}},
		{In: in, Out: out("kv"), Ftype: q4, keys: []string{"general.name", a.arch + ".context_length", "x.f", "x.b"},
			KV: []map[string]any{{"key": "general.name", "type": "str", "value": "renamed"},
				{"key": a.arch + ".context_length", "type": "int", "value": "4096"},
				{"key": "x.f", "type": "float", "value": "0.25"}, {"key": "x.b", "type": "bool", "value": "true"}},
			args: []string{"-dtype", "Q4_K_M", "-override-kv", "general.name=str:renamed",
				"-override-kv", a.arch + ".context_length=int:4096", "-override-kv", "x.f=float:0.25",
				"-override-kv", "x.b=bool:true"}},
		{In: in, Out: out("q2ks-imatrix"), Ftype: q2s, Imatrix: ones,
			args: []string{"-dtype", "Q2_K_S", "-imatrix", imPath}},
		{In: in, Out: out("iq3xxs-no-imatrix"), Ftype: ggufmix.MixIQ3_XXS.FileType(),
			TensorTypes: []map[string]any{{"pattern": needsIm, "type": int(gguf.TypeQ4_K)}},
			args:        []string{"-dtype", "IQ3_XXS", "-tensor-type", needsIm + "=q4_k"},
			mix:         ggufmix.MixIQ3_XXS, arch: a},
		{In: in, Out: out("pure-embd"), Ftype: q4, Pure: true, TokenType: typeOf(gguf.TypeQ8_0),
			args: []string{"-dtype", "Q4_K_M", "-pure", "-token-embedding-type", "q8_0"}},
		{In: q4km, Out: out("requant"), Ftype: q5s, args: []string{"-dtype", "Q5_K_S"}},
		{In: q4km, Out: out("requant-allowed"), Ftype: q5s, AllowRequantize: true,
			args: []string{"-dtype", "Q5_K_S", "--allow-requantize"}},
		{In: q4km, Out: out("requant-same"), Ftype: q4, args: []string{"-dtype", "Q4_K_M"}},
		{In: q4km, Out: out("copy"), Ftype: 0, OnlyCopy: true, args: []string{"-dtype", "COPY"}},
	}
}

// writeOnesImatrix writes an importance matrix of ones for every weight
// of a at path, and returns its entries' sizes, as llama_quantize.py takes
// them.
func writeOnesImatrix(t *testing.T, a mixArch, path string) map[string]int {
	t.Helper()
	sizes := map[string]int{}
	var st imatrix.Stats
	st.ChunkCount, st.ChunkSize = 1, 512
	for _, ts := range a.tensors() {
		if len(ts.Shape) < 2 {
			continue
		}
		cols, experts := ts.Shape[len(ts.Shape)-1], 1
		if len(ts.Shape) == 3 {
			experts = ts.Shape[0]
		}
		sum2 := make([]float32, cols*experts)
		counts := make([]int64, experts)
		for i := range sum2 {
			sum2[i] = 1
		}
		for i := range counts {
			counts[i] = 1
		}
		st.Entries = append(st.Entries, imatrix.Stat{Name: ts.Name, Sum2: sum2, Counts: counts})
		sizes[ts.Name] = len(sum2)
	}
	require.NoError(t, imatrix.WriteFile(path, &st, imatrix.FormatGGUF))
	return sizes
}

// TestMixesMatchLlamaQuantize requantizes F16 GGUFs of several
// architectures with every mix (the ones that need or read an importance
// matrix with one too), and with llama-quantize's flags on some, with
// llama.cpp's own llama_model_quantize (libllama of node-llama-cpp
// 3.22.1, what llama-quantize calls) and with tcast convert, and requires
// the same type for every tensor, the same general.file_type (and the
// metadata keys a flag sets), and an error from both where llama.cpp
// refuses.
func TestMixesMatchLlamaQuantize(t *testing.T) {
	python, lib := libllama(t)
	if testing.Short() {
		t.Skip("-short: quantizes 8 models with 36 mixes twice")
	}
	dir := t.TempDir()
	var jobs []mixJob
	for _, a := range mixArches {
		in := filepath.Join(dir, a.name+".gguf")
		a.write(t, in)
		imPath := filepath.Join(dir, a.name+".imatrix.gguf")
		ones := writeOnesImatrix(t, a, imPath)
		jobs = append(jobs, mixJobs(a, in, dir, imPath, ones)...)
		if a.name == "llama-gqa" || a.name == "gemma" || a.name == "mixtral" {
			q4km := filepath.Join(dir, a.name+"-q4km.gguf")
			code, _, errs := tcast("convert", in, "-layout", "gguf", "-dtype", "Q4_K_M", "-o", q4km)
			require.Equal(t, 0, code, errs)
			jobs = append(jobs, flagJobs(a, in, q4km, dir, imPath, ones)...)
		}
	}
	codes := runLlamaQuantize(t, python, lib, dir, jobs)
	var compared, refused int
	defer func() {
		t.Logf("%d files compared tensor by tensor, %d refused by both", compared, refused)
	}()
	for i, j := range jobs {
		name := filepath.Base(j.In) + " " + strings.Join(j.args, " ")
		ours := strings.Replace(j.Out, "-llama-", "-tcast-", 1)
		code, _, errs := tcast(append([]string{"convert", j.In, "-layout", "gguf", "-o", ours}, j.args...)...)
		if codes[i] != 0 {
			assert.NotEqual(t, 0, code, "%s: llama.cpp refuses, tcast converts", name)
			refused++
			continue
		}
		if !assert.Equal(t, 0, code, "%s: %s", name, errs) {
			continue
		}
		compareTypes(t, name, j.Out, ours, j.keys...)
		compared++
	}
}

// runLlamaQuantize runs the jobs with llama_quantize.py and returns their
// return codes.
func runLlamaQuantize(t *testing.T, python, lib, dir string, jobs []mixJob) []int {
	t.Helper()
	jobsPath := filepath.Join(dir, "jobs.json")
	b, err := json.Marshal(jobs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(jobsPath, b, 0o644))
	cmd := exec.Command(python, filepath.Join("testdata", "llama_quantize.py"), lib, jobsPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "llama_quantize.py: %s", tail(stderr.String(), 4000))
	var codes []int
	require.NoError(t, json.Unmarshal(out, &codes))
	require.Len(t, codes, len(jobs))
	return codes
}

// compareTypes requires the tensors of two GGUF files to have the same
// names and types, and the files the same general.file_type and values of
// keys.
func compareTypes(t *testing.T, name, want, got string, keys ...string) {
	t.Helper()
	w, err := gguf.Open(want)
	require.NoError(t, err, name)
	defer w.Close()
	g, err := gguf.Open(got)
	require.NoError(t, err, name)
	defer g.Close()
	assert.Empty(t, typeDiffs(tensorTypes(w), tensorTypes(g)), "%s: tensor types, "+
		"llama-quantize's and ours", name)
	for _, k := range append([]string{"general.file_type"}, keys...) {
		wv, _ := w.Get(k)
		gv, _ := g.Get(k)
		assert.Equal(t, wv.String(), gv.String(), "%s: %s", name, k)
	}
}

// tensorTypes returns the type of each tensor of f by name.
func tensorTypes(f *gguf.File) map[string]string {
	types := map[string]string{}
	for _, ti := range f.Tensors {
		types[ti.Name] = ti.Type.String()
	}
	return types
}

// typeDiffs lists, sorted, the tensors whose types (by name) differ
// between llama-quantize's want and our got, the first eight of them.
func typeDiffs(want, got map[string]string) []string {
	var diffs []string
	for n, typ := range want {
		if got[n] != typ {
			diffs = append(diffs, fmt.Sprintf("%s: %s, ours %s", n, typ, got[n]))
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			diffs = append(diffs, n+": not in llama-quantize's file")
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 8 {
		diffs = append(diffs[:8], fmt.Sprintf("and %d more", len(diffs)-8))
	}
	return diffs
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
