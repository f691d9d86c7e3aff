package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/mask"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// statsOf returns the statistics inspect gives of v, by their
// definitions (load.Stats): min, max, mean and population deviation of
// the finite values, in float64 in order, and the fraction of zeros.
func statsOf(v []float32) *load.Stats {
	s := &load.Stats{Count: int64(len(v))}
	var finite []float64
	zeros := 0
	for _, x := range v {
		f := float64(x)
		switch {
		case math.IsNaN(f):
			s.NaN++
		case math.IsInf(f, 0):
			s.Inf++
		default:
			finite = append(finite, f)
			if f == 0 {
				zeros++
			}
		}
	}
	if len(v) > 0 {
		s.Zeros = float64(zeros) / float64(len(v))
	}
	if len(finite) == 0 {
		return s
	}
	lo, hi := slices.Min(finite), slices.Max(finite)
	var sum, ss float64
	for _, f := range finite {
		sum += f
	}
	mean := sum / float64(len(finite))
	for _, f := range finite {
		ss += (f - mean) * (f - mean)
	}
	std := math.Sqrt(ss / float64(len(finite)))
	s.Min, s.Max, s.Mean, s.Std = &lo, &hi, &mean, &std
	return s
}

// inspectRun runs tcast inspect and returns its output.
func inspectRun(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, runInspect(args, &out, io.Discard))
	return out.String()
}

// inspectJSON runs tcast inspect -json and decodes the report.
func inspectJSON(t *testing.T, args ...string) *load.Report {
	t.Helper()
	var rep load.Report
	require.NoError(t, json.Unmarshal([]byte(inspectRun(t, append([]string{"-json"}, args...)...)), &rep))
	return &rep
}

func findTensor(t *testing.T, rep *load.Report, name string) load.StoredTensor {
	t.Helper()
	i := slices.IndexFunc(rep.Tensors, func(x load.StoredTensor) bool { return x.Name == name })
	require.GreaterOrEqual(t, i, 0, "tensor %s", name)
	return rep.Tensors[i]
}

func TestInspectSynth(t *testing.T) {
	dir := t.TempDir()
	out, _ := synthTo(t, dir, "-layers", "2", "-hidden", "64", "-vocab", "100", "-dtype", "bf16")

	rep := inspectJSON(t, out)
	assert.Equal(t, out, rep.File)
	assert.Len(t, rep.Tensors, 3+2*9)
	assert.Equal(t, 3+2*9, rep.Totals.Tensors)
	const H, I, V = 64, 256, 100 // I: 8·64/3 rounded up to a multiple of 256
	params := int64(2*V*H + 2*(4*H*H+3*I*H+2*H) + H)
	assert.Equal(t, params, rep.Totals.Parameters)
	assert.Equal(t, 2*params, rep.Totals.Bytes)
	st, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, st.Size(), rep.Totals.FileBytes)
	assert.Equal(t, "pt", rep.Metadata["format"])
	// Natural order: layer 0's tensors before layer 1's, lm_head first.
	assert.Equal(t, "lm_head.weight", rep.Tensors[0].Name)
	assert.Equal(t, "model.layers.0.input_layernorm.weight", rep.Tensors[2].Name)

	// One tensor's statistics, recomputed here from the raw bfloat16 bits.
	name := "model.layers.1.self_attn.k_proj.weight"
	tj := findTensor(t, rep, name)
	assert.Equal(t, "BF16", tj.DType)
	assert.Equal(t, []int{H, H}, tj.Shape)
	assert.Equal(t, int64(2*H*H), tj.Bytes)
	f, err := safetensors.Open(out)
	require.NoError(t, err)
	raw, err := f.Bytes(name)
	require.NoError(t, err)
	lo, hi, sum, zeros := math.Inf(1), math.Inf(-1), 0.0, 0
	for i := 0; i < len(raw); i += 2 {
		v := float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[i:])) << 16))
		lo, hi, sum = min(lo, v), max(hi, v), sum+v
		if v == 0 {
			zeros++
		}
	}
	mean := sum / (H * H)
	var ss float64
	for i := 0; i < len(raw); i += 2 {
		d := float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[i:]))<<16)) - mean
		ss += d * d
	}
	require.NoError(t, f.Close())
	s := tj.Stats
	require.NotNil(t, s)
	assert.Equal(t, int64(H*H), s.Count)
	assert.Equal(t, lo, *s.Min)
	assert.Equal(t, hi, *s.Max)
	assert.InDelta(t, mean, *s.Mean, 1e-12)
	assert.InDelta(t, math.Sqrt(ss/(H*H)), *s.Std, 1e-12)
	assert.Equal(t, float64(zeros)/(H*H), s.Zeros)
	assert.Zero(t, s.NaN+s.Inf)
	norm := findTensor(t, rep, "model.norm.weight").Stats
	assert.InDelta(t, 1, *norm.Mean, 0.05)

	// The text table: a header, one line per tensor, the totals; the directory finds the file.
	text := inspectRun(t, dir)
	assert.Contains(t, text, "name")
	assert.Regexp(t, `\nmodel\.layers\.1\.self_attn\.k_proj\.weight +BF16 +\[64 64\] +8192 +-?[0-9.]+ +[0-9.]+ .*\n`, text)
	assert.NotRegexp(t, ` \n`, text, "no trailing blanks")
	assert.Contains(t, text, "total: 21 tensors, ")
	assert.Equal(t, 1+1+21+2, strings.Count(text, "\n"))

	// -stats=false reads headers only.
	rep = inspectJSON(t, "-stats=false", out)
	for _, x := range rep.Tensors {
		assert.Nil(t, x.Stats)
	}
}

func TestInspectFixture(t *testing.T) {
	const fixture = "../../testdata/iris.bf16.safetensors"
	// Counts from testdata/README.md: 189 tensors, 649,764 values, BF16.
	rep := inspectJSON(t, fixture)
	assert.Equal(t, 189, rep.Totals.Tensors)
	assert.Equal(t, int64(649764), rep.Totals.Parameters)
	assert.Equal(t, int64(2*649764), rep.Totals.Bytes)
	assert.Equal(t, map[string]string{"format": "pt", "source": "tfjs"}, rep.Metadata)
	for _, x := range rep.Tensors {
		assert.Equal(t, "BF16", x.DType)
		require.NotNil(t, x.Stats, x.Name)
		assert.Zero(t, x.Stats.NaN+x.Stats.Inf, x.Name)
		assert.LessOrEqual(t, *x.Stats.Min, *x.Stats.Max)
	}
	text := inspectRun(t, fixture)
	assert.Contains(t, text, "total: 189 tensors, 1299528 bytes of data")
	assert.Contains(t, text, "649764 parameters")
}

// writeConverted writes a tcast-layout file holding w (mxfp4, with a keep mask
// of density 3/4 when masked) and an unconverted F32 bias, and returns the
// path, the weight's values and the virtual cast of them.
func writeConverted(t *testing.T, dir string, masked bool) (string, []float32, []bool, *tc.Tensor) {
	t.Helper()
	const rows, cols = 8, 64
	src := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(src.NormFloat64())
	}
	opts := tc.DefaultOptions()
	opts.Form = tc.Actual
	var keep []bool
	if masked {
		keep = make([]bool, len(x))
		for i := range keep {
			keep[i] = i%4 != 1
		}
		km, err := mask.FromBools([]int{rows, cols}, keep)
		require.NoError(t, err)
		opts.Keep = km
	}
	dt := tc.MustLookup("mxfp4")
	act, err := tc.Cast(x, []int{rows, cols}, dt, &opts)
	require.NoError(t, err)
	opts.Form = tc.Virtual
	virt, err := tc.Cast(x, []int{rows, cols}, dt, &opts)
	require.NoError(t, err)

	l, err := layout.Get("tcast")
	require.NoError(t, err)
	meta := map[string]string{"format": "pt"}
	enc, err := l.Encode("blk.w", act, meta)
	require.NoError(t, err)
	var parts []safetensors.Tensor
	for _, e := range enc {
		parts = append(parts, safetensors.Tensor{Name: e.Name, DType: e.DType, Shape: e.Shape, Data: e.Data})
	}
	bias := make([]byte, 4*cols)
	for i := range cols {
		binary.LittleEndian.PutUint32(bias[4*i:], math.Float32bits(float32(i)))
	}
	parts = append(parts, safetensors.Tensor{Name: "blk.b", DType: safetensors.F32, Shape: []int{cols}, Data: bias})
	path := filepath.Join(dir, "conv.safetensors")
	require.NoError(t, safetensors.WriteFile(path, parts, meta))
	return path, x, keep, virt
}

func TestInspectConverted(t *testing.T) {
	path, _, keep, virt := writeConverted(t, t.TempDir(), true)
	rep := inspectJSON(t, path)

	require.Len(t, rep.Converted, 1)
	w := rep.Converted[0]
	assert.Equal(t, "blk.w", w.Name)
	assert.Equal(t, "mxfp4e2", w.DataType)
	assert.Equal(t, []int{8, 64}, w.Shape)
	assert.Equal(t, map[string]string{"data": "blk.w", "scale": "blk.w.scale", "mask": "blk.w.mask"}, w.Parts)
	// The dequantized weight's statistics are those of the virtual cast of the same input.
	want := statsOf(virt.Values)
	require.NotNil(t, w.Stats)
	assert.Equal(t, *want.Min, *w.Stats.Min)
	assert.Equal(t, *want.Max, *w.Stats.Max)
	assert.Equal(t, *want.Mean, *w.Stats.Mean)
	assert.Equal(t, want.Zeros, w.Stats.Zeros)
	assert.GreaterOrEqual(t, w.Stats.Zeros, 0.25, "pruned elements are zero")
	// Density: 3 of every 4 flags kept, counted independently here.
	kept := 0
	for _, k := range keep {
		if k {
			kept++
		}
	}
	require.NotNil(t, w.Density)
	assert.Equal(t, float64(kept)/float64(len(keep)), *w.Density)
	assert.Equal(t, 0.75, *w.Density)

	for part, tensor := range w.Parts {
		x := findTensor(t, rep, tensor)
		require.NotNil(t, x.PartOf, tensor)
		assert.Equal(t, load.PartOf{Weight: "blk.w", DataType: "mxfp4e2", Part: part}, *x.PartOf)
		assert.Nil(t, x.Stats, "parts have no float statistics")
		assert.Equal(t, "U8", x.DType)
	}
	assert.Equal(t, 0.75, *findTensor(t, rep, "blk.w.mask").Density)
	b := findTensor(t, rep, "blk.b")
	assert.Nil(t, b.PartOf)
	assert.Equal(t, 31.5, *b.Stats.Mean)
	assert.Equal(t, 1.0/64, b.Stats.Zeros)
	// Parameters: the weight's 512 logical elements and the bias's 64, not the parts' bytes.
	assert.Equal(t, int64(8*64+64), rep.Totals.Parameters)
	assert.Equal(t, 4, rep.Totals.Tensors)
	assert.Equal(t, 1, rep.Totals.Converted)
	// Our own keys are summarised (layout), not listed as metadata.
	assert.NotContains(t, rep.Metadata, layout.KeyWeightPrefix+"blk.w")
	assert.NotContains(t, rep.Metadata, layout.KeyFormat)
	assert.Equal(t, map[string]string{"format": "pt"}, rep.Metadata)
	assert.Equal(t, "tcast", rep.Layout)

	text := inspectRun(t, path)
	assert.Contains(t, text, "weight blk.w: datatype mxfp4e2, part scale")
	assert.Contains(t, text, "weight blk.w: datatype mxfp4e2, part mask; density 0.75")
	assert.Contains(t, text, "converted weights (statistics of the dequantized values):")
	assert.Contains(t, text, "mask density 0.75")
}

func TestInspectConvertedUnmasked(t *testing.T) {
	path, _, _, virt := writeConverted(t, t.TempDir(), false)
	rep := inspectJSON(t, path)
	require.Len(t, rep.Converted, 1)
	assert.Nil(t, rep.Converted[0].Density)
	assert.Equal(t, *statsOf(virt.Values).Std, *rep.Converted[0].Stats.Std)
}

func TestInspectSharded(t *testing.T) {
	dir := t.TempDir()
	var ts []safetensors.Tensor
	for i, n := range []string{"a", "b", "c"} {
		data := make([]byte, 4*256)
		for j := range 256 {
			binary.LittleEndian.PutUint32(data[4*j:], math.Float32bits(float32(i)))
		}
		ts = append(ts, safetensors.Tensor{Name: n, DType: safetensors.F32, Shape: []int{16, 16}, Data: data})
	}
	require.NoError(t, safetensors.WriteSharded(dir, 1500, ts, nil))
	for _, arg := range []string{dir, filepath.Join(dir, safetensors.IndexFileName)} {
		rep := inspectJSON(t, arg)
		assert.Equal(t, filepath.Join(dir, safetensors.IndexFileName), rep.File)
		assert.Len(t, rep.Shards, 3)
		assert.Equal(t, int64(3*256), rep.Totals.Parameters)
		for i, x := range rep.Tensors {
			assert.NotEmpty(t, x.Shard)
			assert.Equal(t, float64(i), *x.Stats.Mean)
		}
		assert.Equal(t, 1.0, findTensor(t, rep, "a").Stats.Zeros)
	}
	assert.Contains(t, inspectRun(t, dir), "(3 shards)")
}

func TestInspectNonFinite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nf.safetensors")
	vals := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, 2, -4}
	data := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	allNaN := make([]byte, 2*3)
	for i := range 3 {
		binary.LittleEndian.PutUint16(allNaN[2*i:], 0x7fc0)
	}
	require.NoError(t, safetensors.WriteFile(path, []safetensors.Tensor{
		{Name: "x", DType: safetensors.F32, Shape: []int{2, 3}, Data: data},
		{Name: "n", DType: safetensors.BF16, Shape: []int{3}, Data: allNaN},
		{Name: "i", DType: safetensors.I64, Shape: []int{1}, Data: make([]byte, 8)},
	}, nil))
	rep := inspectJSON(t, path)
	x := findTensor(t, rep, "x").Stats
	assert.Equal(t, int64(1), x.NaN)
	assert.Equal(t, int64(2), x.Inf)
	assert.Equal(t, -4.0, *x.Min)
	assert.Equal(t, 2.0, *x.Max)
	assert.InDelta(t, -2.0/3, *x.Mean, 1e-15)
	assert.InDelta(t, 1.0/6, x.Zeros, 1e-15)
	n := findTensor(t, rep, "n").Stats
	assert.Equal(t, int64(3), n.NaN)
	assert.Nil(t, n.Min)
	assert.Nil(t, n.Mean)
	assert.Nil(t, findTensor(t, rep, "i").Stats, "no statistics for integers")
	text := inspectRun(t, path)
	assert.Regexp(t, `\nn +BF16 +\[3\] +6 +- +- +- +- +0 +3 +0\n`, text)
	assert.Regexp(t, `\ni +I64 +\[1\] +8 +- +- +- +- +- +- +-\n`, text)
}

func TestInspectBadInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.safetensors")
	require.NoError(t, os.WriteFile(garbage, []byte("definitely not a safetensors file"), 0o644))
	missing := filepath.Join(dir, "missing.safetensors")
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	badIndex := filepath.Join(dir, "bad.index.json")
	require.NoError(t, os.WriteFile(badIndex, []byte(`{"weight_map": {"a": "nowhere.safetensors"}}`), 0o644))
	for _, p := range []string{garbage, missing, empty, badIndex} {
		err := runInspect([]string{p}, io.Discard, io.Discard)
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), p)
		var ue *usageError
		assert.False(t, errors.As(err, &ue), "%s: not a usage error", p)
	}

	// A converted weight whose part is missing: the error names the file and the weight.
	path, _, _, _ := writeConverted(t, t.TempDir(), false)
	f, err := safetensors.Open(path)
	require.NoError(t, err)
	var keep []safetensors.Tensor
	for _, ti := range f.Tensors() {
		if ti.Name == "blk.w.scale" {
			continue
		}
		b, err := f.Bytes(ti.Name)
		require.NoError(t, err)
		keep = append(keep, safetensors.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: slices.Clone(b)})
	}
	meta := f.Metadata()
	require.NoError(t, f.Close())
	broken := filepath.Join(dir, "broken.safetensors")
	require.NoError(t, safetensors.WriteFile(broken, keep, meta))
	err = runInspect([]string{broken}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), broken)
	assert.Contains(t, err.Error(), "blk.w")
	require.NoError(t, runInspect([]string{"-stats=false", broken}, io.Discard, io.Discard), "headers alone are fine")

	for _, args := range [][]string{{}, {garbage, garbage}, {"-bogus", garbage}} {
		err := runInspect(args, io.Discard, io.Discard)
		var ue *usageError
		assert.True(t, errors.As(err, &ue), "%v: %v", args, err)
	}
}

// TestInspectOtherLayouts inspects a compressed-tensors NVFP4 conversion: the
// part tensors are attributed to their weights and the weights are decoded.
func TestInspectOtherLayouts(t *testing.T) {
	src, _ := synthTo(t, t.TempDir(), "-layers", "1", "-hidden", "64", "-vocab", "64", "-seed", "5")
	out := filepath.Join(t.TempDir(), "m")
	code, _, stderr := tcast("convert", src, "-layout", "compressed-tensors", "-dtype", "nvfp4", "-o", out)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := tcast("inspect", "-json", out)
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Converted []struct {
			Name     string `json:"name"`
			DataType string `json:"datatype"`
			Shape    []int  `json:"shape"`
		} `json:"converted"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Converted, 7)
	for _, w := range rep.Converted {
		assert.Equal(t, "nvfp4", w.DataType, w.Name)
		assert.Len(t, w.Shape, 2, w.Name)
	}
	code, stdout, _ = tcast("inspect", out)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "part weight_packed")
}

// TestInspectGGUF inspects a GGUF conversion: ggml types, on-disk sizes, and
// statistics of the dequantized blocks.
func TestInspectGGUF(t *testing.T) {
	src, _ := synthTo(t, t.TempDir(), "-layers", "1", "-hidden", "64", "-vocab", "64", "-seed", "6")
	g := filepath.Join(t.TempDir(), "m.gguf")
	code, _, stderr := tcast("convert", src, "-layout", "gguf", "-dtype", "q8_0", "-gguf-generic", "-o", g)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := tcast("inspect", "-json", g)
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Tensors []struct {
			Name  string `json:"name"`
			DType string `json:"dtype"`
			Bytes int64  `json:"bytes"`
			Stats *struct {
				Max float64 `json:"max"`
			} `json:"stats"`
		} `json:"tensors"`
		Layout    string `json:"layout"`
		Converted []struct {
			Name     string `json:"name"`
			DataType string `json:"datatype"`
			Stats    *struct {
				Max float64 `json:"max"`
			} `json:"dequantized"`
		} `json:"converted"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	assert.Equal(t, "gguf", rep.Layout)
	q8 := 0
	for _, tt := range rep.Tensors {
		if tt.DType == "Q8_0" {
			q8++
			assert.Equal(t, int64(0), tt.Bytes%34, "whole Q8_0 blocks: %s", tt.Name)
		}
	}
	assert.Equal(t, 7, q8)
	// The Q8_0 tensors are quantized weights, dequantized for their statistics.
	require.Len(t, rep.Converted, 7)
	for _, w := range rep.Converted {
		assert.Equal(t, "q8_0", w.DataType, w.Name)
		assert.NotNil(t, w.Stats, w.Name)
	}
	// Every metadata key is shown, numbers too (strings quoted): the few
	// keys of this generic file on the first line.
	code, stdout, stderr = tcast("inspect", "-stats=false", g)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, strings.SplitN(stdout, "\n", 2)[0], `general.architecture="tcast", general.name="m", general.quantization_version=2`)
}

func TestInspectCastDir(t *testing.T) {
	dir := t.TempDir()
	mask := filepath.Join(dir, "keep.npy")
	keep := make([]bool, 256)
	for i := range keep {
		keep[i] = i%5 != 2 // 51 of 256 dropped
	}
	writeNpy(t, mask, []int{4, 64}, keep)
	out := castTo(t, []int{4, 64}, testInput(256, false), "-dtype", "mxfp4", "-keep", mask)

	rep := inspectJSON(t, out)
	assert.Equal(t, out, rep.File)
	require.Len(t, rep.Converted, 1)
	w := rep.Converted[0]
	assert.Equal(t, "mxfp4e2", w.DataType)
	assert.Equal(t, "float4_e2m1fn_float8_e8m0fnu_t32", w.Code)
	assert.Equal(t, []int{4, 64}, w.Shape)
	assert.Equal(t, 1, w.Axis)
	assert.Equal(t, "floor", w.ScaleMode)
	assert.Equal(t, 4+8.0/32+1, w.BitsPerValue, "4-bit elements, an 8-bit scale per 32, a mask bit")
	assert.Equal(t, map[string]string{"data": "packed.npy", "scale": "scale.npy", "mask": "mask.npy"}, w.Parts)
	require.NotNil(t, w.Density)
	assert.InDelta(t, 205.0/256, *w.Density, 1e-12)

	// Parts: 256 4-bit codes in 128 bytes, 4×2 byte scales, 256 mask bits in 32 bytes.
	data := findTensor(t, rep, "packed.npy")
	assert.Equal(t, "packed4", data.DType)
	assert.Equal(t, int64(128), data.Bytes)
	assert.Equal(t, &load.PartOf{Weight: w.Name, DataType: "mxfp4e2", Part: "data"}, data.PartOf)
	sc := findTensor(t, rep, "scale.npy")
	assert.Equal(t, []int{4, 2}, sc.Shape)
	assert.Equal(t, int64(8), sc.Bytes)
	assert.InDelta(t, 205.0/256, *findTensor(t, rep, "mask.npy").Density, 1e-12)
	assert.Equal(t, load.Totals{Tensors: 3, Bytes: 128 + 8 + 32, FileBytes: rep.Totals.FileBytes, Parameters: 256, Converted: 1}, rep.Totals)
	var files int64
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	for _, e := range entries {
		fi, err := e.Info()
		require.NoError(t, err)
		files += fi.Size()
	}
	assert.Equal(t, files, rep.Totals.FileBytes)

	// The statistics are those of dequant.npy, read with another reader.
	deq, _ := readWithNpyio[float32](t, filepath.Join(out, "dequant.npy"))
	require.NotNil(t, w.Stats)
	assert.Equal(t, statsOf(deq), w.Stats)
	assert.Equal(t, "float32", rep.Metadata["input_dtype"])
	assert.Equal(t, mask, rep.Metadata["keep"])

	text := inspectRun(t, out)
	assert.Contains(t, text, "converted weights")
	assert.Contains(t, text, "mask density 0.8008")
	assert.Contains(t, text, "total: 3 tensors, 168 bytes of data")

	// -stats=false reads info.json and the mask only.
	require.NoError(t, os.Remove(filepath.Join(out, "packed.npy")))
	rep = inspectJSON(t, "-stats=false", out)
	assert.Nil(t, rep.Converted[0].Stats)
	var buf bytes.Buffer
	err = runInspect([]string{out}, &buf, io.Discard)
	assert.ErrorContains(t, err, "packed.npy")
}
