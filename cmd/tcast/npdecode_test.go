package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"flag"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// npdecodeOut names the directory TestScaleSearchNumPyDecode writes its
// converted checkpoints to, for testdata/npdecode/gen_golden.py.
var npdecodeOut = flag.String("npdecode-out", "",
	"TestScaleSearchNumPyDecode also writes the checkpoints it converts to `DIR` (for testdata/npdecode/gen_golden.py DIR)")

// npdecodeSynth is the checkpoint TestScaleSearchNumPyDecode converts: an
// MLP width of 192 gives fp8e4_block128 partial 128×128 blocks in both
// directions (gate_proj [192,128], down_proj [128,192]), and int4_g128 keeps
// down_proj (192 is no multiple of 128).
var npdecodeSynth = []string{"-layers", "1", "-hidden", "128", "-intermediate", "192", "-vocab", "128", "-seed", "5"}

// npdecodeExclude keeps all but q_proj, gate_proj and down_proj, so that
// the golden archive stays small.
const npdecodeExclude = "k_proj|v_proj|o_proj|up_proj"

// npdecodeCase is one loader layout and datatype of TestScaleSearchNumPyDecode;
// scale names the tensor holding weight w's block scales in that layout.
type npdecodeCase struct {
	name, layout, dtype string
	scale               func(w string) string
}

var npdecodeCases = []npdecodeCase{
	{"ct_nvfp4", "compressed-tensors", "nvfp4", ctScaleName},
	{"ct_int4_g128", "compressed-tensors", "int4_g128", ctScaleName},
	{"ct_fp8e4_block128", "compressed-tensors", "fp8e4_block128", ctScaleName},
	{"modelopt_nvfp4", "modelopt", "nvfp4", ctScaleName},
	{"gptoss_mxfp4", "gpt-oss", "mxfp4", func(w string) string { return strings.TrimSuffix(w, ".weight") + "_scales" }},
	{"tcast_mxfp4", "tcast", "mxfp4", func(w string) string { return w + ".scale" }},
}

func ctScaleName(w string) string { return strings.TrimSuffix(w, ".weight") + ".weight_scale" }

// TestScaleSearchNumPyDecode: a checkpoint converted with -scale-search is
// read by the loaders' unchanged decoders. It converts a small synth
// checkpoint without and with -scale-search to each layout of
// npdecodeCases, and compares what our loader (checkpoint/load Float32)
// decodes from each searched weight with NumPy's decode of the same file in
// testdata/npdecode/golden.npz, written by testdata/npdecode/gen_golden.py
// from the layouts' definitions (docs/LAYOUTS.md, docs/FORMAT.md) and the
// loaders' own arithmetic: bit for bit, except compressed-tensors NVFP4
// (below). The archive also holds, from NumPy's decodes, each weight's SQNR
// against the source for the rule's file and the searched file (the search
// is never worse; ours must agree), the SHA-256 of its decode of the rule's
// file (ours must have it, but for compressed-tensors NVFP4), and how many
// block scales differ between the two files, which must be what the files'
// bytes say and not zero for any layout (else the test would compare the
// rule's file twice).
//
// compressed-tensors NVFP4 is the one layout whose loader rounds otherwise:
// compressed-tensors' dequantize computes the block multiplier as
// float32(scale / weight_global_scale), a division by the stored encode
// scale g = float32(1/s_t), while docs/FORMAT.md and our loader compute
// float32(scale × s_t) with the tensor scale s_t itself (exact, from the
// tcast.ct.global_scale metadata). The exact quotient and product differ by
// the rounding of 1/s_t, under 2^-24 relatively, so the two float32
// multipliers are equal or neighbours, and the values e × m (e an E2M1
// value) equal or one float32 apart, two where |e| is 1.5, 3 or 6 (products
// that are rounded): npdecodeClose checks exactly that. Here 2202 of
// down_proj's 24576 values differ, each by one float32 (164 of its 1536
// block multipliers differ), and q_proj and gate_proj agree bit for bit.
// The loaders then convert to their compute dtype (compressed-tensors to
// bfloat16, ModelOpt to the model's); the float32 values before it are
// compared.
//
// With -npdecode-out DIR the checkpoints are also written to DIR (src/,
// CASE/rule/, CASE/search/) for the generator; .ci/run regenerates the
// archive from them and runs this test again, so a change in the converter
// or in the NumPy decoder fails CI.
func TestScaleSearchNumPyDecode(t *testing.T) {
	dir := *npdecodeOut
	if dir == "" {
		dir = t.TempDir()
	}
	src := filepath.Join(dir, "src", "model.safetensors")
	code, _, stderr := tcast(append([]string{"synth", "-o", src, "-force"}, npdecodeSynth...)...)
	require.Equal(t, 0, code, stderr)
	type converted struct {
		rule, search string
		weights      []string // cast in both, sorted
	}
	conv := map[string]converted{}
	for _, c := range npdecodeCases {
		var outs [2]string
		var cast [2][]string
		for i, search := range []bool{false, true} {
			outs[i] = filepath.Join(dir, c.name, map[bool]string{false: "rule", true: "search"}[search])
			args := []string{"convert", filepath.Dir(src), "-layout", c.layout, "-dtype", c.dtype, "-exclude", npdecodeExclude,
				"-workers", "1", "-json", "-force", "-o", outs[i]}
			if search {
				args = append(args, "-scale-search")
			}
			code, stdout, stderr := tcast(args...)
			require.Equal(t, 0, code, "%s: %s", c.name, stderr)
			var res convert.Result
			require.NoError(t, json.Unmarshal([]byte(stdout), &res))
			require.Equal(t, search, res.ScaleSearch)
			for _, r := range res.Tensors {
				if r.DataType != "" {
					cast[i] = append(cast[i], r.Name)
				}
			}
			sort.Strings(cast[i])
		}
		require.Equal(t, cast[0], cast[1], c.name)
		require.NotEmpty(t, cast[1], c.name)
		conv[c.name] = converted{outs[0], outs[1], cast[1]}
	}
	if *npdecodeOut != "" {
		t.Logf("converted checkpoints written to %s", dir)
	}

	arrays, err := npy.ReadNPZ(filepath.Join("testdata", "npdecode", "golden.npz"))
	require.NoError(t, err, "regenerate with testdata/npdecode/gen_golden.py (its docstring says how)")
	golden := map[string]*npy.Array{}
	for _, a := range arrays {
		golden[a.Name] = a.Array
	}
	x, err := load.Open(filepath.Dir(src))
	require.NoError(t, err)
	defer x.Close()
	seen := 0
	for _, c := range npdecodeCases {
		t.Run(c.name, func(t *testing.T) {
			cv := conv[c.name]
			rule, err := load.Open(cv.rule)
			require.NoError(t, err)
			defer rule.Close()
			search, err := load.Open(cv.search)
			require.NoError(t, err)
			defer search.Close()
			rawRule, err := safetensors.Open(filepath.Join(cv.rule, "model.safetensors"))
			require.NoError(t, err)
			defer rawRule.Close()
			rawSearch, err := safetensors.Open(filepath.Join(cv.search, "model.safetensors"))
			require.NoError(t, err)
			defer rawSearch.Close()

			differ := 0
			for _, w := range cv.weights {
				key := c.name + "/" + w
				ref, ok := golden[key]
				require.True(t, ok, "golden.npz has no %s: regenerate it", key)
				seen++
				want, err := ref.Float32s()
				require.NoError(t, err)
				got, shape, err := search.Float32(w)
				require.NoError(t, err)
				require.Equal(t, ref.Shape, shape, key)
				if c.name == "ct_nvfp4" {
					packed, err := rawSearch.Bytes(strings.TrimSuffix(w, ".weight") + ".weight_packed")
					require.NoError(t, err)
					npdecodeClose(t, want, got, packed, key)
				} else {
					npdecodeSame(t, want, got, key)
				}

				// NumPy's SQNR of both files; ours must agree, and our decode of the
				// rule's file must have the SHA-256 of NumPy's.
				sq := golden[key+"/sqnr"]
				require.NotNil(t, sq, key)
				require.Equal(t, npy.Float64, sq.DType, key)
				require.Len(t, sq.Data, 16, key)
				sqnr := []float64{
					math.Float64frombits(le64(sq.Data[0:8])),
					math.Float64frombits(le64(sq.Data[8:16])),
				}
				assert.GreaterOrEqual(t, sqnr[1], sqnr[0], "%s: NumPy's SQNR of the searched file is below the rule's", key)
				xs, _, err := x.Float32(w)
				require.NoError(t, err)
				yr, _, err := rule.Float32(w)
				require.NoError(t, err)
				assert.InDelta(t, sqnr[0], npdecodeSQNR(xs, yr), 1e-6, "%s: rule's SQNR, ours and NumPy's", key)
				if c.name != "ct_nvfp4" { // rounded otherwise, as the searched file
					h := golden[key+"/rulesha256"]
					require.NotNil(t, h, key)
					sum := sha256.Sum256(npdecodeLE(yr))
					assert.Equal(t, h.Data, sum[:], "%s: our decode of the rule's file is not NumPy's", key)
				}
				assert.InDelta(t, sqnr[1], npdecodeSQNR(xs, got), 1e-6, "%s: searched SQNR, ours and NumPy's", key)

				// The block scales that differ between the files, counted from
				// the stored bytes, are the ones NumPy counted.
				sd := golden[key+"/scalediff"]
				require.NotNil(t, sd, key)
				require.Equal(t, npy.Int64, sd.DType, key)
				require.Len(t, sd.Data, 16, key)
				n, total := npdecodeScaleDiff(t, rawRule, rawSearch, c.scale(w))
				assert.Equal(t, []int64{int64(n), int64(total)},
					[]int64{int64(le64(sd.Data[0:8])), int64(le64(sd.Data[8:16]))}, "%s: differing scales", key)
				differ += n
			}
			assert.Positive(t, differ, "%s: the search changed no block scale: the test would compare the rule's file twice", c.name)
			n := 0
			for name := range golden {
				if strings.HasPrefix(name, c.name+"/") && strings.Count(name, "/") == 1 {
					n++
				}
			}
			assert.Equal(t, len(cv.weights), n, "%s: golden.npz decodes other weights than the converter cast: regenerate it", c.name)
		})
	}
	assert.Equal(t, 4*seen, len(golden), "golden.npz holds cases this test does not convert: regenerate it")
}

// npdecodeSame fails unless want and got hold the same float32 bits (any
// NaN matching any NaN).
func npdecodeSame(t *testing.T, want, got []float32, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i := range want {
		if math.IsNaN(float64(want[i])) && math.IsNaN(float64(got[i])) {
			continue
		}
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s: element %d: NumPy %v (%#08x), ours %v (%#08x)", msg, i,
				want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]))
		}
	}
}

// npdecodeClose is the compressed-tensors NVFP4 comparison (see
// TestScaleSearchNumPyDecode). NumPy's value is float32(e × m'), ours
// float32(e × m), where e is the element's E2M1 value (nibble i of packed, the
// weight_packed bytes) and the block multipliers m' and m are equal or
// neighbouring float32s. For |e| a power of two (0.5, 1, 2, 4) the products
// are exact, so the values are equal or neighbours too; for |e| in 1.5, 3, 6
// the exact products lie 1.5 ulps apart and each is rounded, so the values
// can be two float32s apart (e = 1.5, m = 1, m' = 1 + 2^-23: 1.5 and, a tie
// to even, 1.5 + 2^-22); a zero element gives the same zero. The distance is
// counted in representable float32s (the difference of the bit patterns of
// two values of one sign).
func npdecodeClose(t *testing.T, want, got []float32, packed []byte, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	require.Len(t, packed, (len(want)+1)/2, msg)
	off, most := 0, int64(0)
	for i := range want {
		wb, gb := math.Float32bits(want[i]), math.Float32bits(got[i])
		if wb == gb {
			continue
		}
		off++
		mag := packed[i/2] >> (4 * (i % 2)) & 7
		limit := int64(1) // 0.5, 1, 2, 4
		switch mag {
		case 0:
			limit = 0
		case 3, 5, 7: // 1.5, 3, 6
			limit = 2
		}
		d := int64(wb) - int64(gb)
		if d < 0 {
			d = -d
		}
		require.True(t, wb>>31 == gb>>31 && d <= limit && !math.IsNaN(float64(want[i])),
			"%s: element %d (E2M1 magnitude code %d): NumPy %v (%#08x), ours %v (%#08x), %d float32s apart, at most %d allowed",
			msg, i, mag, want[i], wb, got[i], gb, d, limit)
		most = max(most, d)
	}
	if off > 0 {
		t.Logf("%s: %d of %d values are not NumPy's bits (compressed-tensors divides by the global scale), at most %d float32s apart",
			msg, off, len(want), most)
	}
}

// npdecodeScaleDiff counts the entries of the scale tensor name that differ
// between two files, comparing the stored bytes entry by entry, and returns
// that count and the number of entries.
func npdecodeScaleDiff(t *testing.T, a, b *safetensors.File, name string) (differ, total int) {
	t.Helper()
	ta, ok := a.Tensor(name)
	require.True(t, ok, name)
	tb, ok := b.Tensor(name)
	require.True(t, ok, name)
	require.Equal(t, ta.DType, tb.DType, name)
	require.Equal(t, ta.Shape, tb.Shape, name)
	ba, err := a.Bytes(name)
	require.NoError(t, err)
	bb, err := b.Bytes(name)
	require.NoError(t, err)
	require.Equal(t, len(ba), len(bb), name)
	size := ta.DType.BitSize() / 8
	require.Positive(t, size, name)
	for i := 0; i < len(ba); i += size {
		if !bytes.Equal(ba[i:i+size], bb[i:i+size]) {
			differ++
		}
	}
	return differ, len(ba) / size
}

// npdecodeSQNR is 10·log10(Σx² / Σ(x−y)²) in float64, gen_golden.py's sqnr.
func npdecodeSQNR(x, y []float32) float64 {
	var sig, noise float64
	for i, v := range x {
		d := float64(v) - float64(y[i])
		sig += float64(v) * float64(v)
		noise += d * d
	}
	return 10 * math.Log10(sig/noise)
}

// npdecodeLE is v as little-endian float32 bytes.
func npdecodeLE(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
