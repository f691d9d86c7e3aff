package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
)

// The output-quality harness: the trained Llama of testdata/trained (see
// train.py there), its F16 GGUF as the reference, and each GGUF mix made by
// tcast convert and, with the same types, by ggml's own quantizers
// (ggml_quantize.py), run by llama.cpp over a text the model was not
// trained on; the quality of a file is the KL divergence of its next-token
// distributions from the reference's (as llama-perplexity
// --kl-divergence measures it).

// trainedModel is the directory of the trained model.
const trainedModel = "testdata/trained"

// qualityText is the evaluation text, and qualityCtx the chunk length of
// its evaluation (the second half of each chunk is scored).
const (
	qualityText = "testdata/trained/eval.txt"
	qualityCtx  = 128
)

// logitsFile holds the logits llama_logits.mjs wrote: positions × vocab.
type logitsFile struct {
	positions, vocab int
	v                []float32
}

// row returns the logits of position p.
func (l *logitsFile) row(p int) []float32 { return l.v[p*l.vocab : (p+1)*l.vocab] }

// evalLogits runs llama.cpp on the GGUF file path over qualityText and
// reads the logits it wrote.
func evalLogits(t *testing.T, node, mods, path string) *logitsFile {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := path + ".logits"
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "llama_logits.mjs"), path, qualityText, out,
		fmt.Sprint(qualityCtx))
	cmd.Env = append(os.Environ(), "TCAST_LLAMA_JS="+mods)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	js, err := cmd.Output()
	require.NoError(t, err, "llama_logits.mjs %s: %s", path, stderr.String())
	var res struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(js, &res), "llama_logits.mjs %s", path)
	require.Empty(t, res.Error, "llama_logits.mjs %s", path)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(b), 8)
	l := &logitsFile{positions: int(binary.LittleEndian.Uint32(b)), vocab: int(binary.LittleEndian.Uint32(b[4:]))}
	require.Equal(t, 8+4*l.positions*l.vocab, len(b), "%s: size", out)
	l.v = make([]float32, l.positions*l.vocab)
	for i := range l.v {
		l.v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8+4*i:]))
	}
	require.NoError(t, os.Remove(out))
	return l
}

// logSoftmax returns the log-probabilities of logits x in float64.
func logSoftmax(x []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	ls := m + math.Log(s)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v) - ls
	}
	return out
}

// divergence is the KL divergence of a model's next-token distributions
// from the reference's, position by position.
type divergence struct {
	kl      []float64 // KL(ref ‖ model) of each position, in nats
	sameTop int       // positions whose most likely token is the reference's
}

// klDivergence measures q against the reference ref.
func klDivergence(t *testing.T, ref, q *logitsFile) divergence {
	t.Helper()
	require.Equal(t, ref.positions, q.positions)
	require.Equal(t, ref.vocab, q.vocab)
	d := divergence{kl: make([]float64, ref.positions)}
	for p := range ref.positions {
		lp, lq := logSoftmax(ref.row(p)), logSoftmax(q.row(p))
		var kl float64
		for i, a := range lp {
			kl += math.Exp(a) * (a - lq[i])
		}
		d.kl[p] = math.Max(kl, 0)
		if argmax(ref.row(p)) == argmax(q.row(p)) {
			d.sameTop++
		}
	}
	return d
}

// argmax returns the index of the largest value of x.
func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// mean returns the mean of d's divergences.
func (d divergence) mean() float64 {
	var s float64
	for _, v := range d.kl {
		s += v
	}
	return s / float64(len(d.kl))
}

// p99 returns the 99th percentile of d's divergences.
func (d divergence) p99() float64 {
	s := slices.Sorted(slices.Values(d.kl))
	return s[min(len(s)-1, int(math.Ceil(0.99*float64(len(s))))-1)]
}

// top returns the fraction of positions whose most likely token is the
// reference's.
func (d divergence) top() float64 { return float64(d.sameTop) / float64(len(d.kl)) }

// pairedSE is the standard error of the mean of a's divergences less b's,
// position by position.
func pairedSE(a, b divergence) float64 {
	n := float64(len(a.kl))
	var s, s2 float64
	for i := range a.kl {
		x := a.kl[i] - b.kl[i]
		s += x
		s2 += x * x
	}
	m := s / n
	return math.Sqrt(math.Max(s2/n-m*m, 0) / (n - 1))
}

// ggmlPython returns python3 (with numpy) and libggml-base.so, or skips:
// the output-quality test quantizes with ggml's own code through them.
func ggmlPython(t *testing.T) (python, lib string) {
	t.Helper()
	lib = os.Getenv("TCAST_GGML_LIB")
	if lib == "" {
		t.Skip("optional tool missing: TCAST_GGML_LIB is not set (libggml-base.so of @node-llama-cpp/linux-x64@3.22.1, " +
			"as .ci/run sets it)")
	}
	return numpyPython(t), lib
}

// ggmlRequantize writes to out the GGUF file ours with every quantized
// tensor quantized again, from the same values (those of the F16 file
// src), by ggml's quantizer of the same type, with the importance vector
// llama-quantize would pass when im is not nil.
func ggmlRequantize(t *testing.T, python, lib, ours, src, out string, im *imatrix.Imatrix) {
	t.Helper()
	q, err := gguf.Open(ours)
	require.NoError(t, err)
	defer q.Close()
	ref, err := gguf.Open(src)
	require.NoError(t, err)
	defer ref.Close()
	type entry struct {
		Name       string `json:"name"`
		Type       string `json:"type"`
		Rows       int    `json:"rows"`
		Cols       int    `json:"cols"`
		Importance bool   `json:"importance"`
	}
	var manifest []entry
	var arrays []npy.Named
	for _, ti := range q.Tensors {
		if !quantizedType(ti.Type) {
			continue
		}
		x, err := ref.Float32s(ti.Name)
		require.NoError(t, err, ti.Name)
		shape := ti.Shape()
		cols := shape[len(shape)-1]
		e := entry{Name: ti.Name, Type: ti.Type.String(), Rows: len(x) / cols, Cols: cols}
		i := len(manifest)
		arrays = append(arrays, f32Array(fmt.Sprintf("x%d", i), []int{e.Rows, cols}, x))
		if im != nil && im.Has(ti.Name) {
			v, err := im.Vector(ti.Name, cols, 1)
			if err == nil {
				e.Importance = true
				arrays = append(arrays, f32Array(fmt.Sprintf("imp%d", i), []int{cols}, v))
			}
		}
		manifest = append(manifest, e)
	}
	js, err := json.Marshal(manifest)
	require.NoError(t, err)
	arrays = append(arrays, npy.Named{Name: "manifest",
		Array: &npy.Array{Header: npy.Header{DType: npy.Uint8, Shape: []int{len(js)}}, Data: js}})
	in, blocksPath := out+".in.npz", out+".blocks.npz"
	require.NoError(t, npy.WriteNPZ(in, arrays))
	cmd := exec.Command(python, filepath.Join("testdata", "ggml_quantize.py"), in, blocksPath)
	cmd.Env = append(os.Environ(), "TCAST_GGML_LIB="+lib)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "ggml_quantize.py: %s", b)
	blocks, err := npy.ReadNPZ(blocksPath)
	require.NoError(t, err)
	byName := map[string][]byte{}
	for i, e := range manifest {
		require.Equal(t, fmt.Sprintf("b%d", i), blocks[i].Name)
		byName[e.Name] = blocks[i].Data
	}
	var w gguf.Writer
	for _, kv := range q.KV {
		require.NoError(t, w.AddKV(kv.Key, kv.Value))
	}
	for _, ti := range q.Tensors {
		data, ok := byName[ti.Name]
		if !ok {
			data, err = q.TensorBytes(ti.Name)
			require.NoError(t, err)
		}
		require.NoError(t, w.AddTensor(ti.Name, ti.Type, ti.Shape(), data), ti.Name)
	}
	require.NoError(t, w.WriteFile(out))
	require.NoError(t, os.Remove(in))
	require.NoError(t, os.Remove(blocksPath))
}

// quantizedType reports whether t is a type whose blocks a quantizer made
// (not F32, F16 or BF16).
func quantizedType(t gguf.Type) bool {
	return t != gguf.TypeF32 && t != gguf.TypeF16 && t != gguf.TypeBF16
}

// f32Array is a named float32 .npy array of the given shape.
func f32Array(name string, shape []int, x []float32) npy.Named {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return npy.Named{Name: name, Array: &npy.Array{Header: npy.Header{DType: npy.Float32, Shape: shape}, Data: b}}
}

// qualityOnly gives TestOutputQuality other mixes than qualityMixes.
var qualityOnly = flag.String("quality-mixes", "", "TestOutputQuality compares these comma-separated `mixes` instead")

// qualityMixes are the mixes the output-quality test compares.
var qualityMixes = []string{"Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q4_K_M", "Q4_K_S", "Q3_K_L", "Q3_K_M",
	"Q3_K_S", "Q2_K", "IQ4_XS", "IQ4_NL", "Q5_1", "Q5_0", "Q4_1", "Q4_0", "IQ3_M", "IQ3_S", "IQ3_XS",
	"IQ3_XXS", "IQ2_M", "IQ2_S", "IQ2_XS", "IQ2_XXS", "IQ1_M", "IQ1_S"}

// qualityNeedsImatrix are the mixes llama-quantize (and ours) make only
// with an importance matrix.
var qualityNeedsImatrix = []string{"IQ3_XS", "IQ3_XXS", "IQ2_M", "IQ2_S", "IQ2_XS", "IQ2_XXS",
	"IQ1_M", "IQ1_S"}

// qualityRow is one line of the output-quality table.
type qualityRow struct {
	mix        string
	imatrix    bool
	ours, ggml divergence
	se         float64     // of the mean of ours less ggml's
	oursE      weightError // of the quantized tensors
	ggmlE      weightError
}

// String is the row as a line of the Markdown table qualityTable writes.
func (r qualityRow) String() string {
	im := "-"
	if r.imatrix {
		im = "yes"
	}
	return fmt.Sprintf("| %s | %s | %.5f / %.5f ± %.5f | %.4f / %.4f | %.4f / %.4f | %.2f / %.2f | %.2f / %.2f |",
		r.mix, im, r.ours.mean(), r.ggml.mean(), r.se, r.ours.p99(), r.ggml.p99(), r.ours.top(), r.ggml.top(),
		r.oursE.sqnr, r.ggmlE.sqnr, r.oursE.weighted, r.ggmlE.weighted)
}

// qualityTable returns the rows as a Markdown table: ours / ggml's in each
// cell, the standard error of the difference of the means beside them.
func qualityTable(rows []qualityRow) string {
	var b strings.Builder
	b.WriteString("| mix | imatrix | mean KLD, ours / ggml ± SE | 99 % KLD | top token | SQNR dB | weighted SQNR dB |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

// weightError is the error of a file's quantized tensors: their SQNR and
// the SQNR weighted as the quantizers weigh it (gguf.Weigh), in dB, over
// all their elements.
type weightError struct{ sqnr, weighted float64 }

// measureWeights compares the quantized tensors of the GGUF file path with
// their values in the F16 file src, weighing errors with the importance
// of im (nil for none).
func measureWeights(t *testing.T, path, src string, im *imatrix.Imatrix) weightError {
	t.Helper()
	return measureTensors(t, path, src, im, func(ti gguf.TensorInfo) bool { return quantizedType(ti.Type) })
}

// measureTensors is measureWeights over the tensors of path that cast
// selects.
func measureTensors(t *testing.T, path, src string, im *imatrix.Imatrix, cast func(gguf.TensorInfo) bool) weightError {
	t.Helper()
	q, err := gguf.Open(path)
	require.NoError(t, err)
	defer q.Close()
	ref, err := gguf.Open(src)
	require.NoError(t, err)
	defer ref.Close()
	var s, e, ws, we float64
	for _, ti := range q.Tensors {
		if !cast(ti) {
			continue
		}
		x, err := ref.Float32s(ti.Name)
		require.NoError(t, err, ti.Name)
		y, err := q.Float32s(ti.Name)
		require.NoError(t, err, ti.Name)
		shape := ti.Shape()
		var imp []float32
		if im != nil && im.Has(ti.Name) {
			imp, err = im.Vector(ti.Name, shape[len(shape)-1], 1)
			require.NoError(t, err, ti.Name)
		}
		w := make([]float32, len(x))
		if gguf.Weigh(ti.Type, w, x, imp) != nil { // F32: the importance alone
			for i := range w {
				w[i] = 1
				if imp != nil {
					w[i] = imp[i%len(imp)]
				}
			}
		}
		for i, v := range x {
			d, xx := float64(y[i]-v), float64(v)*float64(v)
			s, e = s+xx, e+d*d
			ws, we = ws+float64(w[i])*xx, we+float64(w[i])*d*d
		}
	}
	return weightError{sqnr: 10 * math.Log10(s/e), weighted: 10 * math.Log10(ws/we)}
}

// TestOutputQuality converts the trained model to each mix, with and
// without its importance matrix, and compares the KL divergence of what
// llama.cpp computes from our file and from ggml's quantization of the
// same tensors, against the F16 file's.
func TestOutputQuality(t *testing.T) {
	python, lib := ggmlPython(t)
	h := newQualityHarness(t)
	node, mods, dir, f16, ref, imPath, im := h.node, h.mods, h.dir, h.f16, h.ref, h.imPath, h.im
	t.Logf("%d positions scored", ref.positions)
	var rows []qualityRow
	mixes := qualityMixes
	if *qualityOnly != "" {
		mixes = strings.Split(*qualityOnly, ",")
	}
	for _, mix := range mixes {
		for _, withIm := range []bool{false, true} {
			if withIm && mix == "Q8_0" || !withIm && slices.Contains(qualityNeedsImatrix, mix) {
				continue // Q8_0 takes no importance; these IQ mixes need one
			}
			start := time.Now()
			r := qualityRow{mix: mix, imatrix: withIm}
			ours := filepath.Join(dir, strings.ToLower(mix)+map[bool]string{true: "-im"}[withIm]+".gguf")
			args := []string{"convert", trainedModel, "-layout", "gguf", "-dtype", mix, "-o", ours}
			var m *imatrix.Imatrix
			if withIm {
				args, m = append(args, "-imatrix", imPath), im
			}
			code, _, stderr := tcast(args...)
			require.Equal(t, 0, code, "%v: %s", args, stderr)
			theirs := strings.TrimSuffix(ours, ".gguf") + "-ggml.gguf"
			ggmlRequantize(t, python, lib, ours, f16, theirs, m)
			r.ours, r.ggml = klDivergence(t, ref, evalLogits(t, node, mods, ours)), klDivergence(t, ref, evalLogits(t, node, mods, theirs))
			r.se = pairedSE(r.ours, r.ggml)
			r.oursE, r.ggmlE = measureWeights(t, ours, f16, m), measureWeights(t, theirs, f16, m)
			rows = append(rows, r)
			t.Logf("%s (%.0f s)", r, time.Since(start).Seconds())
			for _, p := range []string{ours, theirs} {
				require.NoError(t, os.Remove(p))
			}
		}
	}
	t.Logf("the table:\n%s", qualityTable(rows))
	lower := 0
	for _, r := range rows {
		d := r.ours.mean() - r.ggml.mean()
		if d < -r.se {
			lower++
		}
		if d > r.se {
			t.Errorf("%s (imatrix %v): mean KLD %.6f, ggml's %.6f: higher by %.6f, more than the standard error %.6f",
				r.mix, r.imatrix, r.ours.mean(), r.ggml.mean(), d, r.se)
		}
	}
	t.Logf("lower than ggml's beyond the standard error in %d of %d cases", lower, len(rows))
	if 2*lower < len(rows) {
		t.Errorf("our mean KLD is lower than ggml's beyond the standard error in %d of %d cases, not half", lower, len(rows))
	}
}

// qualityHarness is what the output-quality tests share: llama.cpp's
// runtime, a scratch directory, the trained model's F16 file and its
// logits, and its importance matrix.
type qualityHarness struct {
	node, mods, dir, f16, imPath string
	ref                          *logitsFile
	im                           *imatrix.Imatrix
}

// newQualityHarness converts the trained model to F16 and scores it.
func newQualityHarness(t *testing.T) *qualityHarness {
	t.Helper()
	h := &qualityHarness{dir: t.TempDir(), imPath: filepath.Join(trainedModel, "imatrix.npz")}
	h.node, h.mods = llamaRuntime(t)
	h.f16 = filepath.Join(h.dir, "f16.gguf")
	code, _, stderr := tcast("convert", trainedModel, "-layout", "gguf", "-dtype", "f16", "-o", h.f16)
	require.Equal(t, 0, code, stderr)
	h.ref = evalLogits(t, h.node, h.mods, h.f16)
	var err error
	h.im, err = imatrix.Read(h.imPath)
	require.NoError(t, err)
	return h
}

// scaleSearchCases are the datatypes of the tcast layout whose scale search
// (Options.ScaleSearch) the output-quality harness judges.
var scaleSearchCases = []string{"nvfp4", "mxfp4", "int4_g128"}

// TestOutputQualityScaleSearch judges -scale-search by the model's output:
// the trained model converted to each datatype in the tcast layout, with
// the rule's scales and with the scale search (without and with the
// importance matrix, which weighs the search's error), read back as a
// llama.cpp F32 file (the dequantized values exactly) and run as
// TestOutputQuality runs its files. The search must lower the mean KL
// divergence below the rule's by more than the standard error; the table
// gives each case against the rule's.
func TestOutputQualityScaleSearch(t *testing.T) {
	h := newQualityHarness(t)
	node, mods, dir, f16, ref, imPath, im := h.node, h.mods, h.dir, h.f16, h.ref, h.imPath, h.im
	var b strings.Builder
	b.WriteString("| datatype | scales | mean KLD, this / rule's ± SE | 99 % KLD | top token | SQNR dB | weighted SQNR dB |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, dt := range scaleSearchCases {
		var rule divergence
		for i, c := range []struct {
			name  string
			flags []string
		}{{"rule", nil}, {"search", []string{"-scale-search"}}, {"search + imatrix", []string{"-scale-search", "-imatrix", imPath}}} {
			out := filepath.Join(dir, dt+fmt.Sprint(i))
			args := append([]string{"convert", trainedModel, "-dtype", dt, "-o", out}, c.flags...)
			code, _, stderr := tcast(args...)
			require.Equal(t, 0, code, "%v: %s", args, stderr)
			for _, f := range []string{"config.json", "tokenizer.json", "tokenizer_config.json"} {
				data, err := os.ReadFile(filepath.Join(trainedModel, f))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(out, f), data, 0o644))
			}
			file := out + ".gguf"
			code, _, stderr = tcast("convert", out, "-layout", "gguf", "-dtype", "f32", "-o", file)
			require.Equal(t, 0, code, stderr)
			d := klDivergence(t, ref, evalLogits(t, node, mods, file))
			cast := func(ti gguf.TensorInfo) bool { return len(ti.Shape()) == 2 && ti.Type == gguf.TypeF32 }
			e := measureTensors(t, file, f16, im, cast)
			if i == 0 {
				rule = d
			}
			se := pairedSE(d, rule)
			fmt.Fprintf(&b, "| %s | %s | %.5f / %.5f ± %.5f | %.4f | %.4f | %.2f | %.2f |\n",
				dt, c.name, d.mean(), rule.mean(), se, d.p99(), d.top(), e.sqnr, e.weighted)
			if diff := d.mean() - rule.mean(); i > 0 && diff > -se {
				t.Errorf("%s %s: mean KLD %.6f, the rule's %.6f: not lower by more than the standard error %.6f",
					dt, c.name, d.mean(), rule.mean(), se)
			}
			require.NoError(t, os.RemoveAll(out))
			require.NoError(t, os.Remove(file))
		}
	}
	t.Logf("the table:\n%s", b.String())
}
