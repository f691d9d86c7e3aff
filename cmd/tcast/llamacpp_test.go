package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// llamaCase is one GGUF type the llama.cpp runtime test converts the synth
// Llama to.
type llamaCase struct {
	dtype string
	typ   gguf.Type // of blk.1.ffn_gate.weight (a mix gives some weights other types)
	// maxErr bounds the RMS difference of the logits from the f32 file's,
	// relative to the RMS of the f32 logits.
	maxErr float64
	// closerThan, when set, names a row whose logits must be further from
	// the f32 file's than this row's.
	closerThan string
}

// llamaRuntimeCases lists the files the runtime test loads. The first row,
// f32, is the reference; q8_0, q4_0, q4_k_m, q6_k and iq4_nl are
// llama-quantize's mixes of those names (the output head in Q6_K, ffn_down
// and attn_v in more bits in some layers for Q4_K_M; ffn_down's rows of
// 704 fall back from the K-quants to Q5_0 and Q8_0).
// The bounds hold with room on the synth model (measured: f16 0.0015,
// bf16 0.009, q8_0 0.027, q6_k 0.077, q4_k_m 0.26, iq4_nl 0.28, q4_0 0.33;
// llama.cpp also rounds the activations to the weights' type in its dot
// products).
var llamaRuntimeCases = []llamaCase{
	{dtype: "f32", typ: gguf.TypeF32},
	{dtype: "f16", typ: gguf.TypeF16, maxErr: 0.005, closerThan: "bf16"},
	{dtype: "bf16", typ: gguf.TypeBF16, maxErr: 0.02, closerThan: "q8_0"},
	{dtype: "q8_0", typ: gguf.TypeQ8_0, maxErr: 0.06, closerThan: "q6_k"},
	{dtype: "q6_k", typ: gguf.TypeQ6_K, maxErr: 0.15, closerThan: "q4_k_m"},
	{dtype: "q4_k_m", typ: gguf.TypeQ4_K, maxErr: 0.45, closerThan: "q4_0"},
	{dtype: "iq4_nl", typ: gguf.TypeIQ4_NL, maxErr: 0.5, closerThan: "q4_0"},
	{dtype: "q4_0", typ: gguf.TypeQ4_0, maxErr: 0.6},
}

// llamaRefSynth are the synth flags of the runtime test's checkpoint, for
// which testdata/llama_ref.json holds reference logits (made when synth's
// default -intermediate for -hidden 256 was 704, which they name).
var llamaRefSynth = []string{"-arch", "llama", "-layers", "2", "-hidden", "256", "-intermediate", "704",
	"-vocab", "512", "-dtype", "f32", "-seed", "13"}

// llamaRef is testdata/llama_ref.json: the logits of tokens 0..Vocab-1
// after each prompt token, by testdata/llama_ref.py's forward pass (torch,
// Hugging Face's Llama definition, on the safetensors checkpoint).
type llamaRef struct {
	Tokens []int       `json:"tokens"`
	Vocab  int         `json:"vocab"`
	Logits [][]float64 `json:"logits"`
}

// llamaPrompt is the prompt the runtime evaluates.
const llamaPrompt = "The small model reads a line of text, and the runtime writes out the logits."

// llamaEval is the output of testdata/llama_eval.mjs.
type llamaEval struct {
	Error        string      `json:"error"`
	Tokens       []int       `json:"tokens"`
	Detokenized  string      `json:"detokenized"`
	BOS          *int        `json:"bos"`
	EOS          *int        `json:"eos"`
	Logits       [][]float64 `json:"logits"`
	NVocab       int         `json:"n_vocab"`
	Architecture string      `json:"architecture"`
	Log          []struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	} `json:"log"`
}

// llamaRuntime returns node and the node_modules directory of
// node-llama-cpp, or skips the test: TCAST_LLAMA_JS names the directory
// (.ci/run installs the package with `NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm
// install --ignore-scripts --omit=optional node-llama-cpp@3.22.1
// @node-llama-cpp/linux-x64@3.22.1` and sets it), and node must be on PATH.
func llamaRuntime(t *testing.T) (node, mods string) {
	t.Helper()
	mods = os.Getenv("TCAST_LLAMA_JS")
	if mods == "" {
		t.Skip("optional tool missing: TCAST_LLAMA_JS is not set (the npm package node-llama-cpp, llama.cpp's CPU build); " +
			".ci/run installs node-llama-cpp@3.22.1 with @node-llama-cpp/linux-x64@3.22.1 and sets TCAST_LLAMA_JS=DIR/node_modules")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("optional tool missing: node is not on PATH (it runs llama.cpp through node-llama-cpp)")
	}
	return node, mods
}

// evalWithLlama loads a GGUF file with llama.cpp and evaluates the prompt.
func evalWithLlama(t *testing.T, node, mods, path string) llamaEval {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "llama_eval.mjs"), path, llamaPrompt)
	cmd.Env = append(os.Environ(), "TCAST_LLAMA_JS="+mods)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "llama_eval.mjs %s: %s", path, stderr.String())
	var ev llamaEval
	require.NoError(t, json.Unmarshal(out, &ev), "llama_eval.mjs %s", path)
	return ev
}

// llamaWarnings returns what llama.cpp logged at warning level or above.
func llamaWarnings(ev llamaEval) []string {
	var w []string
	for _, l := range ev.Log {
		switch l.Level {
		case "warn", "error", "fatal":
			w = append(w, l.Level+": "+strings.TrimSpace(l.Message))
		}
	}
	return w
}

// logitsError returns the RMS difference of a from ref relative to the RMS
// of ref, over every position and token.
func logitsError(a, ref [][]float64) float64 {
	var d2, r2 float64
	for i := range ref {
		for j := range ref[i] {
			d := a[i][j] - ref[i][j]
			d2 += d * d
			r2 += ref[i][j] * ref[i][j]
		}
	}
	return math.Sqrt(d2 / r2)
}

// llamaFiles converts the runtime test's synth Llama (tcast synth -arch
// llama) to every type of llamaRuntimeCases as llama.cpp's model file, checks
// the files' architecture and types, and returns them by -dtype.
func llamaFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	src, _ := synthTo(t, dir, llamaRefSynth...)
	files := map[string]string{}
	for _, c := range llamaRuntimeCases {
		out := filepath.Join(dir, c.dtype+".gguf")
		code, _, stderr := tcast("convert", src, "-layout", "gguf", "-dtype", c.dtype, "-o", out)
		require.Equal(t, 0, code, "%s: %s", c.dtype, stderr)
		f, err := gguf.Open(out)
		require.NoError(t, err)
		assert.Equal(t, "llama", f.Architecture())
		ti, ok := f.Tensor("blk.1.ffn_gate.weight")
		require.True(t, ok)
		assert.Equal(t, c.typ, ti.Type, c.dtype)
		ti, ok = f.Tensor("blk.1.attn_norm.weight")
		require.True(t, ok)
		assert.Equal(t, gguf.TypeF32, ti.Type, c.dtype)
		f.Close()
		files[c.dtype] = out
	}
	return files
}

// TestLlamaGGUFFiles makes the runtime test's files without running them,
// and checks that the reference logits are for the runtime test's prompt:
// its tokens, read through the synth tokenizer.json, spell it.
func TestLlamaGGUFFiles(t *testing.T) {
	llamaFiles(t)
	js, err := os.ReadFile(filepath.Join("testdata", "llama_ref.json"))
	require.NoError(t, err)
	var ref llamaRef
	require.NoError(t, json.Unmarshal(js, &ref))
	require.Len(t, ref.Logits, len(ref.Tokens))
	tok := synthTokenizer(512)
	var tj struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	require.NoError(t, json.Unmarshal(tok.json, &tj))
	text := map[int]string{}
	for s, id := range tj.Model.Vocab {
		text[id] = s
	}
	byteOf := map[rune]byte{}
	for b, s := range byteLevel() {
		byteOf[[]rune(s)[0]] = byte(b)
	}
	require.Equal(t, tok.bos, ref.Tokens[0], "BOS first")
	var prompt []byte
	for _, id := range ref.Tokens[1:] {
		s, ok := text[id]
		require.True(t, ok, "token %d", id)
		for _, r := range s {
			prompt = append(prompt, byteOf[r])
		}
	}
	assert.Equal(t, llamaPrompt, string(prompt))
}

// TestLlamaCppRuntime loads the files of llamaFiles with llama.cpp (CPU, F32
// KV cache), evaluates a prompt, and checks that llama.cpp logs no warning,
// tokenizes the prompt with our tokenizer as the text it is, computes for
// the F32 file the logits of an independent forward pass of the Hugging Face
// checkpoint (testdata/llama_ref.json), and for the other files logits close
// to the F32 file's.
func TestLlamaCppRuntime(t *testing.T) {
	node, mods := llamaRuntime(t)
	files := llamaFiles(t)
	evals := map[string]llamaEval{}
	errs := map[string]float64{}
	for _, c := range llamaRuntimeCases {
		ev := evalWithLlama(t, node, mods, files[c.dtype])
		require.Empty(t, ev.Error, "%s: llama.cpp failed; its log: %v", c.dtype, ev.Log)
		assert.Empty(t, llamaWarnings(ev), "%s: llama.cpp warns", c.dtype)
		assert.Equal(t, "llama", ev.Architecture)
		assert.Equal(t, 512, ev.NVocab)
		require.NotNil(t, ev.BOS)
		assert.Equal(t, *ev.BOS, ev.Tokens[0], "the BOS token comes first")
		assert.Equal(t, llamaPrompt, ev.Detokenized, "%s: the prompt's tokens are its text", c.dtype)
		assert.Less(t, len(ev.Tokens), len(llamaPrompt)/2, "merges join bytes into fewer tokens")
		require.Len(t, ev.Logits, len(ev.Tokens))
		for i, row := range ev.Logits {
			require.Len(t, row, ev.NVocab, "%s position %d", c.dtype, i)
			for j, v := range row {
				require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s logit %d at position %d is %v", c.dtype, j, i, v)
			}
		}
		evals[c.dtype] = ev
		if c.dtype == "f32" {
			continue
		}
		ref := evals["f32"]
		assert.Equal(t, ref.Tokens, ev.Tokens, c.dtype)
		e := logitsError(ev.Logits, ref.Logits)
		errs[c.dtype] = e
		t.Logf("%s: logits' RMS error relative to F32's: %.5f", c.dtype, e)
		assert.Less(t, e, c.maxErr, c.dtype)
	}
	for _, c := range llamaRuntimeCases {
		if c.closerThan != "" {
			assert.Less(t, errs[c.dtype], errs[c.closerThan], "%s is closer to F32 than %s", c.dtype, c.closerThan)
		}
	}

	// The F32 file computes what the Hugging Face model does: the names, the
	// query and key permutation, RoPE and grouped-query attention all agree
	// with an independent forward pass (a wrong permutation or head order
	// moves the logits by about their own size).
	js, err := os.ReadFile(filepath.Join("testdata", "llama_ref.json"))
	require.NoError(t, err)
	var ref llamaRef
	require.NoError(t, json.Unmarshal(js, &ref))
	f32 := evals["f32"]
	require.Equal(t, ref.Tokens, f32.Tokens, "llama.cpp tokenizes the prompt as when testdata/llama_ref.json was made")
	part := make([][]float64, len(f32.Logits))
	for i, row := range f32.Logits {
		part[i] = row[:ref.Vocab]
	}
	e := logitsError(part, ref.Logits)
	t.Logf("f32: logits' RMS error relative to the reference forward pass: %.5f", e)
	assert.Less(t, e, 0.005)
}

// relabel copies the synth Llama checkpoint of src's directory into a new
// directory as another architecture: config.json's model_type changed and
// tensors added (F32, the given values).
func relabel(t *testing.T, src, modelType string, add map[string][]float32, shapes map[string][]int) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{"tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(src), n))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), b, 0o644))
	}
	var cfg map[string]any
	b, err := os.ReadFile(filepath.Join(filepath.Dir(src), "config.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &cfg))
	cfg["model_type"] = modelType
	b, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644))
	f, err := safetensors.Open(src)
	require.NoError(t, err)
	defer f.Close()
	var ts []safetensors.Tensor
	for _, ti := range f.Tensors() {
		data, err := f.Bytes(ti.Name)
		require.NoError(t, err)
		ts = append(ts, safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: data})
	}
	for name, v := range add {
		data := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
		}
		ts = append(ts, safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shapes[name], Data: data})
	}
	out := filepath.Join(dir, "model.safetensors")
	require.NoError(t, safetensors.WriteFile(out, ts, nil))
	return out
}

// readRef reads a reference of testdata.
func readRef(t *testing.T, name string) llamaRef {
	t.Helper()
	js, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var ref llamaRef
	require.NoError(t, json.Unmarshal(js, &ref))
	return ref
}

// TestLlamaCppArchitectures runs the synth Llama's weights as llama.cpp's
// qwen2, qwen3, gemma and (as llama) mistral models. Qwen2 and Mistral
// compute what Llama does (llama.cpp rotates Qwen2's heads without the
// permutation, in NeoX order), so their logits must match the same
// reference forward pass; Gemma (its embedding scaled by sqrt(H), GELU,
// norms by 1 + weight, the embedding as the head) must match Gemma's
// (testdata/llama_ref_gemma.json), which checks the norms' shift and the
// tied head; qwen3 (with query and key norms added) computes another
// function, and must load and run without a warning.
func TestLlamaCppArchitectures(t *testing.T) {
	node, mods := llamaRuntime(t)
	dir := t.TempDir()
	src, _ := synthTo(t, dir, llamaRefSynth...)
	llama := readRef(t, "llama_ref.json")

	ones := make([]float32, 64)
	for i := range ones {
		ones[i] = 1
	}
	qk := map[string][]float32{}
	shapes := map[string][]int{}
	for l := range 2 {
		for _, n := range []string{"q_norm", "k_norm"} {
			name := "model.layers." + strconv.Itoa(l) + ".self_attn." + n + ".weight"
			qk[name], shapes[name] = ones, []int{64}
		}
	}
	for _, c := range []struct {
		modelType, arch string
		add             map[string][]float32
		ref             string // the reference it matches, "" for none
	}{
		{"qwen2", "qwen2", nil, "llama_ref.json"},
		{"qwen3", "qwen3", qk, ""},
		{"gemma", "gemma", nil, "llama_ref_gemma.json"},
		{"mistral", "llama", nil, "llama_ref.json"},
	} {
		in := relabel(t, src, c.modelType, c.add, shapes)
		out := filepath.Join(t.TempDir(), c.modelType+".gguf")
		code, _, stderr := tcast("convert", in, "-layout", "gguf", "-dtype", "f32", "-o", out)
		require.Equal(t, 0, code, "%s: %s", c.modelType, stderr)
		ev := evalWithLlama(t, node, mods, out)
		require.Empty(t, ev.Error, "%s: llama.cpp failed; its log: %v", c.modelType, ev.Log)
		assert.Empty(t, llamaWarnings(ev), "%s: llama.cpp warns", c.modelType)
		assert.Equal(t, c.arch, ev.Architecture)
		assert.Equal(t, llamaPrompt, ev.Detokenized, c.modelType)
		require.Equal(t, llama.Tokens, ev.Tokens, c.modelType)
		ref := llama
		if c.ref != "" {
			ref = readRef(t, c.ref)
		}
		part := make([][]float64, len(ev.Logits))
		for i, row := range ev.Logits {
			for j, v := range row {
				require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s logit %d at position %d", c.modelType, j, i)
			}
			part[i] = row[:ref.Vocab]
		}
		e := logitsError(part, ref.Logits)
		t.Logf("%s: logits' RMS error relative to the reference forward pass: %.5f", c.modelType, e)
		if c.ref != "" {
			assert.Less(t, e, 0.005, c.modelType)
		} else {
			assert.Greater(t, e, 0.05, "%s computes another function than Llama", c.modelType)
		}
	}
}

// spmTokenizer builds a SentencePiece-style tokenizer.json (BPE with byte
// fallback, as Llama 2's): <unk>, <s>, </s>, the 256 byte tokens, the
// characters of synthCorpus, and merges learned from it with words
// prefixed by "▁", as many as fit vocab. It returns the file and the merges
// in rank order.
func spmTokenizer(t *testing.T, vocab int) ([]byte, [][2]string) {
	t.Helper()
	ids := map[string]int{"<unk>": 0, "<s>": 1, "</s>": 2}
	for b := range 256 {
		ids[fmt.Sprintf("<0x%02X>", b)] = 3 + b
	}
	next := 259
	words := map[string]int{}
	for _, w := range strings.Fields(synthCorpus) {
		words["▁"+w]++
	}
	var ws []bpeWord
	for _, w := range sortedKeys(words) {
		var syms []string
		for _, r := range w {
			s := string(r)
			if _, ok := ids[s]; !ok {
				ids[s] = next
				next++
			}
			syms = append(syms, s)
		}
		ws = append(ws, bpeWord{syms, words[w]})
	}
	// Each merge's token gets the next id, until the vocabulary is full.
	merges := learnMerges(ws, func(m [][2]string) bool {
		if len(m) > 0 {
			last := m[len(m)-1][0] + m[len(m)-1][1]
			if _, ok := ids[last]; !ok {
				ids[last] = next
				next++
			}
		}
		return next < vocab
	})
	pairs := make([][]string, len(merges))
	for i, m := range merges {
		pairs[i] = []string{m[0], m[1]}
	}
	tj := map[string]any{
		"version": "1.0",
		"added_tokens": []any{
			map[string]any{"id": 0, "content": "<unk>", "special": true},
			map[string]any{"id": 1, "content": "<s>", "special": true},
			map[string]any{"id": 2, "content": "</s>", "special": true},
		},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"}}},
		"pre_tokenizer": nil,
		"decoder": map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
			map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0}}},
		"model": map[string]any{"type": "BPE", "byte_fallback": true, "fuse_unk": true, "unk_token": "<unk>",
			"vocab": ids, "merges": pairs},
	}
	b, err := json.Marshal(tj)
	require.NoError(t, err)
	return b, merges
}

// spmEncode tokenizes text as SentencePiece's BPE does: "▁" before it and
// for every space, characters as symbols (bytes as <0xNN> when not in the
// vocabulary), then the adjacent pair of lowest merge rank joined, leftmost
// first, until no pair merges.
func spmEncode(text string, ids map[string]int, merges [][2]string) []int {
	rank := map[[2]string]int{}
	for i, m := range merges {
		if _, ok := rank[m]; !ok {
			rank[m] = i
		}
	}
	var syms []string
	for _, r := range "▁" + strings.ReplaceAll(text, " ", "▁") {
		syms = append(syms, string(r))
	}
	for {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := rank[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		syms = append(syms[:at], append([]string{syms[at] + syms[at+1]}, syms[at+2:]...)...)
	}
	var out []int
	for _, s := range syms {
		if id, ok := ids[s]; ok {
			out = append(out, id)
			continue
		}
		for _, b := range []byte(s) {
			out = append(out, ids[fmt.Sprintf("<0x%02X>", b)])
		}
	}
	return out
}

// TestLlamaCppSentencePiece runs the synth Llama with a SentencePiece-style
// tokenizer (converted to llama.cpp's llama tokenizer: scores from the merge
// ranks, byte tokens, a space prefix): llama.cpp loads it without a
// warning, tokenizes the prompt as SentencePiece's BPE does (which only the
// scores' order decides), and gives the text back.
func TestLlamaCppSentencePiece(t *testing.T) {
	node, mods := llamaRuntime(t)
	src, _ := synthTo(t, t.TempDir(), llamaRefSynth...)
	dir := filepath.Dir(src)
	tj, merges := spmTokenizer(t, 512)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer_config.json"),
		[]byte(`{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": true}`), 0o644))
	out := filepath.Join(t.TempDir(), "spm.gguf")
	code, _, stderr := tcast("convert", dir, "-layout", "gguf", "-dtype", "q8_0", "-o", out)
	require.Equal(t, 0, code, stderr)
	ev := evalWithLlama(t, node, mods, out)
	require.Empty(t, ev.Error, "llama.cpp failed; its log: %v", ev.Log)
	assert.Empty(t, llamaWarnings(ev), "llama.cpp warns")
	assert.Equal(t, llamaPrompt, strings.TrimPrefix(ev.Detokenized, " "))
	var parsed struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	require.NoError(t, json.Unmarshal(tj, &parsed))
	want := append([]int{1}, spmEncode(llamaPrompt, parsed.Model.Vocab, merges)...)
	assert.Equal(t, want, ev.Tokens, "BOS, then SentencePiece's BPE")
	assert.Less(t, len(ev.Tokens), len(llamaPrompt)/2, "merges join characters into fewer tokens")
	require.Len(t, ev.Logits, len(ev.Tokens))
}
