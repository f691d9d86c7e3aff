package tcast

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"testing"

	"github.com/tensorcast-go/tensorcast/mask"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// searchTypes are the datatypes the scale-search tests cover: every family
// of candidates (E8M0, UE4M3 under a tensor scale, float16 and float32
// scales, 1-D and 2-D tiles, integer and float elements).
var searchTypes = []string{"mxfp4", "mxfp6e2", "mxfp8e4", "mxint8", "nvfp4", "int4_g128", "int8_g32",
	"int4_channel", "fp8e4_block128", "fp8e4_channel", "fp8e5_tensor"}

// irisTensors reads the float values of every tensor of
// testdata/iris.bf16.safetensors (BF16, widened exactly), with their
// shapes, sorted by name.
func irisTensors(t testing.TB) (names []string, shapes [][]int, vals [][]float32) {
	t.Helper()
	raw, err := os.ReadFile("../testdata/iris.bf16.safetensors")
	require.NoError(t, err)
	n := binary.LittleEndian.Uint64(raw)
	var hdr map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw[8:8+n], &hdr))
	body := raw[8+n:]
	for name := range hdr {
		if name != "__metadata__" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		var e struct {
			Dtype   string `json:"dtype"`
			Shape   []int  `json:"shape"`
			Offsets [2]int `json:"data_offsets"`
		}
		require.NoError(t, json.Unmarshal(hdr[name], &e))
		require.Equal(t, "BF16", e.Dtype, name)
		b := body[e.Offsets[0]:e.Offsets[1]]
		v := make([]float32, len(b)/2)
		for i := range v {
			v[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
		shapes = append(shapes, e.Shape)
		vals = append(vals, v)
	}
	return names, shapes, vals
}

// blockErrs returns, for each block of a cast of x (shape, dt, o) whose
// values are fully finite, the squared error of the virtual values y,
// weighted by w (nil: 1) per column; for a block holding a NaN or an Inf it
// returns NaN.
func blockErrs(t *testing.T, x, y []float32, shape []int, dt *DataType, o Options, w []float32) []float64 {
	t.Helper()
	c, err := newCaster(x, shape, dt, o)
	require.NoError(t, err)
	cols := shape[len(shape)-1]
	var errs []float64
	c.lay.forEach(func(b block) {
		var s float64
		for i := 0; i < b.len0; i++ {
			for j := 0; j < b.len1; j++ {
				e := b.base + i*b.stride0 + j*b.stride1
				if isNonFinite(x[e]) {
					s = math.NaN()
				}
				d := float64(x[e]) - float64(y[e])
				d *= d
				if w != nil {
					d *= float64(w[e%cols])
				}
				s += d
			}
		}
		errs = append(errs, s)
	})
	return errs
}

// searchInputs are the inputs of the property test: name, shape, values.
type searchInput struct {
	name  string
	shape []int
	x     []float32
}

func searchInputs(t *testing.T) []searchInput {
	r := rand.New(rand.NewPCG(14, 1))
	const rows, cols = 256, 256
	gauss := make([]float32, rows*cols)
	heavy := make([]float32, rows*cols)
	edge := make([]float32, rows*cols)
	for i := range gauss {
		gauss[i] = float32(r.NormFloat64())
		// Student-t with 2 degrees of freedom: heavy tails.
		z := r.NormFloat64()
		chi := r.NormFloat64()*r.NormFloat64() + r.NormFloat64()*r.NormFloat64()
		heavy[i] = float32(z / math.Sqrt(math.Abs(chi)/2+1e-12))
		edge[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20))
	}
	// All-zero rows, NaN and Inf sprinkled in some rows, tiny and huge
	// magnitudes, exact powers of two.
	for j := 0; j < cols; j++ {
		edge[3*cols+j] = 0
		edge[5*cols+j] = float32(math.Ldexp(1, j%8-3))
	}
	edge[7*cols+5] = float32(math.NaN())
	edge[9*cols+100] = float32(math.Inf(1))
	edge[11*cols+200] = float32(math.Inf(-1))
	edge[13*cols+17] = 3e38
	edge[15*cols+17] = 1e-40
	in := []searchInput{
		{"gauss", []int{rows, cols}, gauss},
		{"heavy", []int{rows, cols}, heavy},
		{"edge", []int{rows, cols}, edge},
		{"zeros", []int{rows, cols}, make([]float32, rows*cols)},
	}
	names, shapes, vals := irisTensors(t)
	for i, name := range names {
		if len(shapes[i]) >= 2 && len(vals[i]) >= 1024 {
			in = append(in, searchInput{"iris/" + name, shapes[i], vals[i]})
		}
	}
	return in
}

// TestScaleSearchNeverWorse: on every block of every input, the searched
// cast's (importance-weighted) squared error is at most the rule's; blocks
// holding a NaN or an Inf decode exactly as the rule's; the searched
// tensor's Compressed form decompresses, through the unchanged decoder, to
// its virtual values bit for bit.
func TestScaleSearchNeverWorse(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 2))
	for _, in := range searchInputs(t) {
		cols := in.shape[len(in.shape)-1]
		w := make([]float32, cols)
		for i := range w {
			w[i] = float32(r.ExpFloat64())
		}
		for _, name := range searchTypes {
			dt := MustLookup(name)
			for _, imp := range [][]float32{nil, w} {
				rule, err := Cast(in.x, in.shape, dt, &Options{Importance: imp})
				if err != nil {
					continue // a shape the datatype does not take
				}
				o := Options{ScaleSearch: true, Importance: imp}
				got, err := Cast(in.x, in.shape, dt, &o)
				require.NoError(t, err, "%s %s", in.name, name)
				re := blockErrs(t, in.x, rule.Values, in.shape, dt, o, imp)
				se := blockErrs(t, in.x, got.Values, in.shape, dt, o, imp)
				worse, better := 0, 0
				for k := range re {
					switch {
					case math.IsNaN(re[k]):
					case se[k] > re[k]:
						worse++
					case se[k] < re[k]:
						better++
					}
				}
				assert.Zero(t, worse, "%s %s importance=%v: blocks worse than the rule", in.name, name, imp != nil)
				for i, v := range in.x {
					if isNonFinite(v) {
						// The whole block decodes as the rule's: NaN.
						assert.True(t, math.IsNaN(float64(got.Values[i])), "%s %s", in.name, name)
					}
				}
				o.Form = Compressed
				packed, err := Cast(in.x, in.shape, dt, &o)
				require.NoError(t, err)
				dec, err := Decompress(packed)
				require.NoError(t, err)
				require.Equal(t, len(got.Values), len(dec))
				for i := range dec {
					if math.Float32bits(dec[i]) != math.Float32bits(got.Values[i]) {
						t.Fatalf("%s %s: element %d decompresses to %v, virtual %v", in.name, name, i, dec[i], got.Values[i])
					}
				}
			}
		}
	}
}

// TestScaleSearchHandMXFP4: one MXFP4 block of 32 (E2M1 values 0, 0.5, 1,
// 1.5, 2, 3, 4, 6): x[0] = 4.1 and 31 values 0.75. amax 4.1 = 1.025·2², so
// the rule's scale is 2^(2−2) = 1 (E8M0 0x7F): 4.1 → 4 (code 6), 0.75 is
// halfway between 0.5 and 1 and goes to the even 1 (code 2); error
// 0.1² + 31·0.25² = 1.9475. Exponent −1 (0x7E, scale 0.5): 4.1/0.5 = 8.2
// saturates to 6 (code 7, decoding to 3), 0.75/0.5 = 1.5 (code 3) exactly;
// error 1.1² = 1.21. Exponent +1 (0x80, scale 2): 2.05 → 2 (code 4, 4),
// 0.375 → 0.5 (code 1, 1); error 1.9475, a tie the rule keeps. The search
// takes 0x7E; packed two codes a byte, low nibble first.
func TestScaleSearchHandMXFP4(t *testing.T) {
	x := make([]float32, 32)
	for i := range x {
		x[i] = 0.75
	}
	x[0] = 4.1
	dt := MustLookup("mxfp4")
	for _, search := range []bool{false, true} {
		got, err := Cast(x, []int{1, 32}, dt, &Options{Form: Compressed, ScaleSearch: search})
		require.NoError(t, err)
		wantScale, first, rest := byte(0x7F), byte(0x26), byte(0x22)
		if search {
			wantScale, first, rest = 0x7E, 0x37, 0x33
		}
		want := make([]byte, 16)
		for i := range want {
			want[i] = rest
		}
		want[0] = first
		assert.Equal(t, []byte{wantScale}, got.Scale.Bytes, "search=%v", search)
		assert.Equal(t, want, got.Data.Bytes, "search=%v", search)
	}
}

// TestScaleSearchHandNVFP4: two NVFP4 blocks of 16. Block 0 is 2688 and
// zeros, so the tensor scale is 2688/(6·448) = 1 and block 0's scale 448
// (UE4M3 0x7E) with no error (the search keeps it: nothing beats 0). Block 1
// is 6 and fifteen 4.5. The rule: s_b = 6/6 = 1 (0x38); 6 → code 7, 4.5 is
// halfway between 4 and 6 and goes to the even 4 (code 6); error
// 15·0.5² = 3.75. The neighbours: 0x39 = 1.125 gives 6/1.125 = 5.33 → 6
// (6.75) and 4.5/1.125 = 4 exactly, error 0.75² = 0.5625; 0x37 = 0.9375
// gives 4.5/0.9375 = 4.8 → 4 (3.75), error above 15·0.5². The 4/6 scale
// 6/4 = 1.5 (0x3C) maps 6 to 4 (code 6) and 4.5 to 3 (code 5): error 0.
func TestScaleSearchHandNVFP4(t *testing.T) {
	x := make([]float32, 32)
	x[0] = 2688
	x[16] = 6
	for i := 17; i < 32; i++ {
		x[i] = 4.5
	}
	dt := MustLookup("nvfp4")
	for _, search := range []bool{false, true} {
		got, err := Cast(x, []int{1, 32}, dt, &Options{Form: Compressed, ScaleSearch: search})
		require.NoError(t, err)
		assert.Equal(t, []byte{0, 0, 0x80, 0x3F}, got.TensorScale.Bytes) // float32 1.0
		s1, first, rest := byte(0x38), byte(0x67), byte(0x66)
		if search {
			s1, first, rest = 0x3C, 0x56, 0x55
		}
		want := make([]byte, 16)
		want[0] = 0x07 // 2688/448 = 6
		for i := 8; i < 16; i++ {
			want[i] = rest
		}
		want[8] = first
		assert.Equal(t, []byte{0x7E, s1}, got.Scale.Bytes, "search=%v", search)
		assert.Equal(t, want, got.Data.Bytes, "search=%v", search)
	}
}

// TestScaleSearchImportanceErrors: a scale search checks the importance
// vector as the codebook casts do.
func TestScaleSearchImportanceErrors(t *testing.T) {
	x := make([]float32, 64)
	for _, imp := range [][]float32{{1, 2, 3}, make([]float32, 31), append(make([]float32, 31), -1), append(make([]float32, 31), float32(math.NaN()))} {
		_, err := Cast(x, []int{2, 32}, MustLookup("mxfp4"), &Options{ScaleSearch: true, Importance: imp})
		assert.Error(t, err, "%v", imp)
	}
	_, err := Cast(x, []int{2, 32}, MustLookup("mxfp4"), &Options{ScaleSearch: true, Importance: make([]float32, 32)})
	assert.NoError(t, err)
	// A datatype the search leaves alone (zero points) ignores the
	// importance it would not weigh, as it ignores the option.
	_, err = Cast(x, []int{2, 32}, MustLookup("uint4_g32"), &Options{ScaleSearch: true, Importance: []float32{1, 2, 3}})
	assert.NoError(t, err)
}

// TestScaleSearchIrisSQNR logs the SQNR of the rule and of the search on
// the iris fixture per datatype (go test -run IrisSQNR -v) and checks the
// search is never below the rule.
func TestScaleSearchIrisSQNR(t *testing.T) {
	names, shapes, vals := irisTensors(t)
	for _, name := range []string{"mxfp4", "nvfp4", "int4_g128", "fp8e4_block128", "mxfp8e4", "int8_g32"} {
		dt := MustLookup(name)
		var sig, nRule, nSearch float64
		for i := range names {
			if len(shapes[i]) < 2 {
				continue
			}
			rule, err := Cast(vals[i], shapes[i], dt, nil)
			if err != nil {
				continue
			}
			got, err := Cast(vals[i], shapes[i], dt, &Options{ScaleSearch: true})
			require.NoError(t, err)
			for k, v := range vals[i] {
				sig += float64(v) * float64(v)
				d := float64(v) - float64(rule.Values[k])
				nRule += d * d
				d = float64(v) - float64(got.Values[k])
				nSearch += d * d
			}
		}
		db := func(n float64) float64 { return 10 * math.Log10(sig/n) }
		t.Logf("%-15s rule %.3f dB  search %.3f dB  gain %+.3f dB (noise %.1f%% less)", name, db(nRule), db(nSearch),
			db(nSearch)-db(nRule), 100*(1-nSearch/nRule))
		assert.LessOrEqual(t, nSearch, nRule, name)
	}
}

var updateOff = flag.Bool("update-scalesearch-off", false, "rewrite testdata/scalesearch_off.json (run on the commit before the scale search)")

// offDigests returns, per registered datatype, the SHA-256 of the bytes of
// every part of the Compressed cast and of the virtual values of a fixed
// input, cast with opts, or the error's text.
func offDigests(t *testing.T, opts *Options) map[string]string {
	r := rand.New(rand.NewPCG(14, 3))
	shape := []int{64, 256}
	x := make([]float32, 64*256)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(12)-6))
	}
	x[5], x[300], x[1000] = float32(math.NaN()), float32(math.Inf(1)), 0
	for i := 512; i < 768; i++ {
		x[i] = 0
	}
	out := map[string]string{}
	for _, name := range reg().names { // every name and alias, sorted
		dt := MustLookup(name)
		h := sha256.New()
		o := Options{}
		if opts != nil {
			o = *opts
		}
		o.Form = Compressed
		p, err := Cast(x, shape, dt, &o)
		if err != nil {
			out[name] = "error: " + err.Error()
			continue
		}
		for _, part := range p.Parts() {
			h.Write(part.Bytes)
		}
		o.Form = Virtual
		v, err := Cast(x, shape, dt, &o)
		require.NoError(t, err, name)
		for _, f := range v.Values {
			binary.Write(h, binary.LittleEndian, math.Float32bits(f))
		}
		out[name] = hex.EncodeToString(h.Sum(nil))
	}
	return out
}

// TestScaleSearchOffUnchanged: with the zero value of ScaleSearch (nil
// options, and Options{} with it false) every registered datatype casts to
// the bytes and values it cast to before the scale search existed; the
// digests in testdata/scalesearch_off.json were written by this test with
// -update-scalesearch-off on the commit before it (i13-int, 689a9f6).
func TestScaleSearchOffUnchanged(t *testing.T) {
	const file = "testdata/scalesearch_off.json"
	got := offDigests(t, nil)
	if *updateOff {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(file, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var want map[string]string
	require.NoError(t, json.Unmarshal(b, &want))
	assert.Equal(t, want, got)
	assert.Equal(t, want, offDigests(t, &Options{ScaleSearch: false}))
}

// TestScaleSearchPaths: a searched cast gives the same tensor streamed
// (castContiguous) as block by block, with and without a keep mask and
// importance, and dropped elements stay zero.
func TestScaleSearchPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 4))
	shape := []int{16, 256}
	x := make([]float32, 16*256)
	w := make([]float32, 256)
	keep := make([]bool, len(x))
	for i := range x {
		x[i] = float32(r.NormFloat64())
		keep[i] = r.IntN(4) != 0
	}
	for i := range w {
		w[i] = float32(r.ExpFloat64())
	}
	km, err := mask.FromBools(shape, keep)
	require.NoError(t, err)
	for _, name := range searchTypes {
		dt := MustLookup(name)
		for _, o := range []Options{{ScaleSearch: true}, {ScaleSearch: true, Importance: w}, {ScaleSearch: true, Keep: km}} {
			o.Form = Actual
			a, err := castPath(x, shape, dt, &o, true, true)
			require.NoError(t, err)
			b, err := castPath(x, shape, dt, &o, true, false)
			require.NoError(t, err)
			for i, p := range a.Parts() {
				assert.Equal(t, p.Bytes, b.Parts()[i].Bytes, "%s %s", name, p.Name)
			}
			if o.Keep != nil {
				v, err := Decompress(a)
				require.NoError(t, err)
				for i, k := range keep {
					if !k {
						require.Zero(t, v[i], "%s element %d", name, i)
					}
				}
			}
		}
	}
}
