package layout

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/tcast"
)

// TestSpecsMatchEncode checks, for every layout and every registered datatype
// it accepts (and the datatypes a layout names itself, such as GGUF's q8_0),
// that Specs declares exactly the tensors Encode writes (names, dtypes,
// shapes, byte sizes) and metadata keys with values of the final length,
// that Decode reads the weight back, and that Find, given only the stored
// tensors and metadata, names the weight with the same tensors. Weights are
// cast by the layout's Caster when it has one.
func TestSpecsMatchEncode(t *testing.T) {
	shapes := [][]int{{32, 128}, {2, 32, 128}, {4, 256}}
	checked := map[string]int{}
	covered := map[string]bool{}
	for _, ln := range Names() {
		l, err := Get(ln)
		require.NoError(t, err)
		dts := tcast.Registered()
		for _, n := range []string{"e2m1_e8m0_t32n2m4", "int8_float16_t16n2m4"} { // sparse: a mask part
			d, err := tcast.Lookup(n)
			require.NoError(t, err)
			dts = append(dts, d)
		}
		if _, ok := l.(DataTyper); ok {
			for _, n := range []string{"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q8_k", "iq4_nl", "iq4_xs"} {
				if d, err := DataType(l, n); err == nil {
					dts = append(dts, d)
				}
			}
		}
		for _, dt := range dts {
			for _, shape := range shapes {
				rank := len(shape)
				if l.Check(dt, rank-1, rank) != nil {
					continue
				}
				name := "m.w.weight"
				if ln == "gpt-oss" && rank == 3 {
					name = "m.experts.gate_up_proj"
				}
				specs, smeta, err := l.Specs(name, shape, dt, rank-1)
				if err != nil {
					continue // e.g. a group size that does not divide 128
				}
				n := 1
				for _, d := range shape {
					n *= d
				}
				x := ldrRandom(uint64(n), n)
				var c *tcast.Tensor
				if cs, ok := l.(Caster); ok {
					c, err = cs.Cast(x, shape, dt, &tcast.Options{Form: tcast.Actual})
				} else {
					c, err = tcast.Cast(x, shape, dt, &tcast.Options{Form: tcast.Actual})
				}
				require.NoError(t, err, "%s %s", ln, dt.Name())
				meta := map[string]string{}
				ts, err := l.Encode(name, c, meta)
				require.NoError(t, err, "%s %s", ln, dt.Name())
				require.Len(t, ts, len(specs), "%s %s", ln, dt.Name())
				for i, sp := range specs {
					assert.Equal(t, sp, ts[i].Spec, "%s %s tensor %d", ln, dt.Name(), i)
					assert.EqualValues(t, sp.Bytes(l.Container()), len(ts[i].Data), "%s %s %s", ln, dt.Name(), sp.Name)
				}
				require.Len(t, meta, len(smeta), "%s %s metadata", ln, dt.Name())
				for k, v := range smeta {
					assert.Len(t, meta[k], len(v), "%s %s metadata %s", ln, dt.Name(), k)
				}
				if ln == "gguf" && !specs[0].GGML.Quantized() {
					// Plain F32, F16 and BF16 tensors are read back as plain
					// tensors, not as weights of the layout: their bytes are
					// the codes.
					assert.Equal(t, c.Data.Bytes, ts[0].Data, "%s %s", ln, dt.Name())
					_, ok, err := l.Decode(name, newLdrSource(ts, meta))
					assert.False(t, ok)
					assert.NoError(t, err)
					checked[ln]++
					covered[ln+" "+dt.Name()] = true
					continue
				}
				src := newLdrSource(ts, meta)
				back, ok, err := l.Decode(name, src)
				require.NoError(t, err, "%s %s", ln, dt.Name())
				if _, plain := ggufPlainType(dt); ln == "gguf" && plain {
					// F32, F16 and BF16 tensors are read as they are, not as
					// converted weights.
					require.False(t, ok)
					checked[ln]++
					continue
				}
				require.True(t, ok)
				want, err := tcast.Decompress(c)
				require.NoError(t, err)
				got, err := tcast.Decompress(back)
				require.NoError(t, err)
				assert.Equal(t, bitsOf(want), bitsOf(got), "%s %s values", ln, dt.Name())
				found := l.Find(src)
				logical := name
				if ln == "gpt-oss" && len(shape) == 3 {
					logical = weightPrefix(name) // stacked experts have no ".weight"
				}
				var stored []string
				for _, x := range ts {
					stored = append(stored, x.Name)
				}
				slices.Sort(stored)
				got2 := slices.Clone(found[logical])
				slices.Sort(got2)
				assert.Equal(t, stored, got2, "%s %s Find", ln, dt.Name())
				checked[ln]++
				covered[ln+" "+dt.Name()] = true
			}
		}
	}
	for _, ln := range Names() {
		assert.Positive(t, checked[ln], "layout %s checked no datatype", ln)
	}
	for _, c := range []string{"gguf q8_0", "gguf q4_0", "gguf mxfp4e2", "gguf q4_k", "gguf q6_k", "gguf iq4_xs", "gguf q2_k", "gguf float32", "gguf float16", "gguf bfloat16", "fp8-block fp8e4_block128", "fp8-block fp8F32s",
		"tcast e2m1_e8m0_t32n2m4", "tcast int8_float16_t16n2m4"} {
		assert.True(t, covered[c], "%s not checked", c)
	}
}

func bitsOf(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}
