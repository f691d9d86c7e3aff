package tcast

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/codebook"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
)

// codebookTypes are the registered codebook datatypes.
var codebookTypes = []string{
	"mxfi4", "mxfp4m", "mxfp4e", "mxfp4f4", "mx9cb", "mx6cb", "mx4cb", "nf4", "bnb_fp4",
	"icb44fi4_e32", "icb44fi3_f32", "icb44fi2_e32", "icb44fi2_f32", "icb44fi2_e32s16", "icb44fi2_f32s16",
	"icb44fi2_e32s8", "icb44fi2_f32s8", "icb44fi2_e32s4", "icb44fi2_f32s4", "icb44fi4_f32s4", "icb44fi3_e32s8",
}

func TestCodebookRegistry(t *testing.T) {
	for _, n := range codebookTypes {
		dt, err := Lookup(n)
		require.NoError(t, err, n)
		require.NotNil(t, dt.Codebook(), n)
		assert.NotEmpty(t, dt.Note(), n)
		// The code names the same datatype.
		again, err := Lookup(dt.Code())
		require.NoError(t, err, dt.Code())
		assert.Equal(t, dt.Code(), again.Code())
		assert.Equal(t, dt.Codebook().Name(), again.Codebook().Name())
		assert.Equal(t, dt.BitsPerValue(), again.BitsPerValue())
	}
	assert.Equal(t, "cb41fi_e2m2fnuz_float8_e8m0fnu_t32s4", MustLookup("mxfi4").Code())
	assert.Equal(t, "icb44fi_e2m3fnuz_float8_e8m0fnu_t32s8", MustLookup("icb44fi2_e32s8").Code())
	assert.Equal(t, "icb44fi_e4m3fn_e5m3_t32s4", MustLookup("icb44fi4_f32s4").Code())
	assert.Equal(t, "nf4_float32_t64", MustLookup("nf4").Code())
	assert.Equal(t, "uint4", MustLookup("nf4").Elem().Name())
	assert.Equal(t, "uint8", MustLookup("mx9cb").Elem().Name())
	// The element is the codebook; Elem is the format of its indices.
	assert.Equal(t, "nf4", MustLookup("nf4").Element())
	assert.Equal(t, "icb44fi_e2m3fnuz", MustLookup("icb44fi2_e32s8").Element())
	assert.Equal(t, "cb41fi_e2m2fnuz", MustLookup("mxfi4").Element())
	assert.Equal(t, "float4_e2m1fn", MustLookup("mxfp4").Element())
	// e2m1 stays the number format in codes.
	assert.Nil(t, MustLookup("e2m1_e8m0_t32").Codebook())
}

// TestCodebookBitsPerValue: index bits + (scale bits + meta bits per
// subtile × subtiles) / tile — TensorCast's figures (golden G13: icb44fi2_e32
// 4.375, …s8 4.75, …s4 5.25; the triton types 4.5).
func TestCodebookBitsPerValue(t *testing.T) {
	for name, w := range map[string]float64{
		"icb44fi2_e32": 4.375, "icb44fi2_e32s16": 4.5, "icb44fi2_e32s8": 4.75, "icb44fi2_e32s4": 5.25,
		"icb44fi2_f32": 4 + (5+4)/32.0, "icb44fi2_f32s8": 4 + (9+16)/32.0,
		"mxfi4": 4.5, "mxfp4m": 4.5, "mxfp4e": 4.5, "mxfp4f4": 4.5,
		"mx9cb": 9, "mx6cb": 6, "mx4cb": 4, "nf4": 4.5, "bnb_fp4": 4.5,
	} {
		dt := MustLookup(name)
		assert.Equal(t, w, dt.BitsPerValue(), name)
		assert.Equal(t, w, dt.TensorCastBitsPerValue(), name)
	}
	// A tensor counts its parts exactly: nf4 on 64 elements is 64·4 + 32
	// bits, with a keep mask one more bit per element.
	x := make([]float32, 64)
	c, err := Cast(x, []int{64}, MustLookup("nf4"), &Options{Form: Compressed})
	require.NoError(t, err)
	assert.Equal(t, 4.5, c.BitsPerValue())
	keep, err := mask.New([]int{64})
	require.NoError(t, err)
	c, err = Cast(x, []int{64}, MustLookup("nf4"), &Options{Form: Compressed, Keep: keep})
	require.NoError(t, err)
	assert.Equal(t, 5.5, c.BitsPerValue())
	// icb44fi2_e32s8 on 32 elements: 128 index bits, 8 scale bits, 4 meta
	// fields of 4 bits.
	c, err = Cast(make([]float32, 32), []int{32}, MustLookup("icb44fi2_e32s8"), &Options{Form: Compressed})
	require.NoError(t, err)
	assert.Equal(t, 4.75, c.BitsPerValue())
}

// g12 is the input of golden G12 (docs/CODEBOOK.md §4.5).
func g12() []float32 {
	x := []float32{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5, 5.5, 6, 6.5, -7}
	for k := range 12 {
		x = append(x, float32(0.05+0.1*float64(k)))
	}
	return x
}

// TestCodebookG12 casts golden G12 through the registered datatypes: the
// E8M0 scale code is 127 (amax 7, emax 2), subtiles of 8 select tables 5,
// 11, 8, 3, and the values are TensorCast's with their signs. The
// tile-level cast uses i_2 (table 10): 0, .875, 1.875, 2.75, 3.75, 4.5,
// 5.5, 6.5, ties away from zero, −7 saturating to −6.5.
func TestCodebookG12(t *testing.T) {
	x := g12()
	v, err := Cast(x, []int{32}, MustLookup("icb44fi2_e32s8"), nil)
	require.NoError(t, err)
	want := []float32{
		0, .25, .25, .25, .75, .75, .75, .75,
		.75, 1.75, 1.75, 2.5, 3.5, 3.5, 4, 5,
		5.5, 6.5, 6.5, -7.5, 0, 0, 0, 0,
		.5, .5, .5, 1, 1, 1, 1, 1,
	}
	assert.Equal(t, want, v.Values)
	a, err := Cast(x, []int{32}, MustLookup("icb44fi2_e32s8"), &Options{Form: Actual})
	require.NoError(t, err)
	assert.Equal(t, []byte{127}, a.Scale.Bytes)
	assert.Equal(t, []byte{5, 11, 8, 3}, a.Meta.Bytes)
	assert.Equal(t, []int{4}, a.Meta.Shape)
	assert.Equal(t, 4, a.Meta.Bits)
	assert.Equal(t, byte(8|7), a.Data.Bytes[19], "−7.5: code 7 of i_0 with the sign bit")
	c, err := Compress(a)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xB5, 0x38}, c.Meta.Bytes, "fields 5, 11, 8, 3, LSB first")
	assert.Equal(t, byte(a.Data.Bytes[0]|a.Data.Bytes[1]<<4), c.Data.Bytes[0])

	tile, err := Cast(x, []int{32}, MustLookup("icb44fi2_e32"), &Options{Form: Actual})
	require.NoError(t, err)
	assert.Equal(t, []byte{10}, tile.Meta.Bytes)
	got, err := Decompress(tile)
	require.NoError(t, err)
	n, m := float32(0.875), float32(1.875)
	assert.Equal(t, []float32{
		0, 0, 0, 0, n, n, n, n,
		n, m, m, 2.75, 2.75, 3.75, 3.75, 5.5,
		5.5, 6.5, 6.5, -6.5, 0, 0, 0, 0,
		n, n, n, n, n, n, n, n,
	}, got)
}

// TestNF4Block checks nf4 on one hand-built block of 64: absmax 2, so x·0.5
// is encoded: 2 → 1.0 (code 15), −2 → −1.0 (code 0), 0.5 → 0.25 (code 10,
// below the threshold 0.2920), 1.2 → 0.6 (code 13, below 0.6428), 0 → code 7.
func TestNF4Block(t *testing.T) {
	x := make([]float32, 64)
	x[0], x[1], x[2], x[3] = 2, -2, 0.5, 1.2
	a, err := Cast(x, []int{64}, MustLookup("nf4"), &Options{Form: Actual})
	require.NoError(t, err)
	assert.Nil(t, a.Meta, "one table: no meta")
	assert.Equal(t, uint32(0x40000000), binary.LittleEndian.Uint32(a.Scale.Bytes), "float32 absmax 2")
	assert.Equal(t, []byte{15, 0, 10, 13, 7, 7}, a.Data.Bytes[:6])
	c, err := Compress(a)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x0F, 0xDA, 0x77}, c.Data.Bytes[:3], "element 2k in bits 3:0")
	got, err := Decompress(c)
	require.NoError(t, err)
	assert.Equal(t, []float32{2, -2, 0.24611230194568634 * 2, 0.5626170039176941 * 2, 0}, got[:5])
	// An all-zero block: scale 1.0, code 7 (bitsandbytes' CUDA kernel would
	// store absmax 0 and code 0; both decode to zero).
	a, err = Cast(make([]float32, 64), []int{64}, MustLookup("nf4"), &Options{Form: Actual})
	require.NoError(t, err)
	assert.Equal(t, uint32(0x3f800000), binary.LittleEndian.Uint32(a.Scale.Bytes))
	assert.Equal(t, byte(7), a.Data.Bytes[0])
}

// TestCodebookSpecialBlocks: a block holding a NaN or an Inf gets the NaN
// scale and decodes to NaN; other blocks are untouched; an all-zero block
// decodes to zeros.
func TestCodebookSpecialBlocks(t *testing.T) {
	for _, name := range []string{"mxfi4", "nf4", "icb44fi2_f32s8"} {
		dt := MustLookup(name)
		tile := dt.Spec().Tiles[0].Size
		x := make([]float32, 3*tile)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		x[1] = float32(math.NaN())
		x[tile+2] = float32(math.Inf(-1))
		for i := 2 * tile; i < 3*tile; i++ {
			x[i] = 0
		}
		v, err := Cast(x, []int{len(x)}, dt, nil)
		require.NoError(t, err, name)
		for i, y := range v.Values {
			if i < 2*tile {
				assert.True(t, math.IsNaN(float64(y)), "%s element %d = %v", name, i, y)
			} else {
				assert.Equal(t, float32(0), y, "%s element %d", name, i)
			}
		}
		c, err := Cast(x, []int{len(x)}, dt, &Options{Form: Compressed})
		require.NoError(t, err)
		got, err := Decompress(c)
		require.NoError(t, err)
		i, ok := sameBits(v.Values, got)
		assert.True(t, ok, "%s element %d", name, i)
	}
}

// TestCodebookRoundTrip: for every codebook datatype, along several axes and
// with a keep mask, Decompress(Compress(Cast(Actual))) equals the virtual
// cast bit for bit, Expand undoes Compress byte for byte, and each block's
// values are those its table and scale give.
func TestCodebookRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, name := range codebookTypes {
		dt := MustLookup(name)
		for ci, c := range []struct {
			shape []int
			axis  int
		}{{[]int{3, 70}, -1}, {[]int{67, 2}, FirstAxis}, {[]int{2, 33, 3}, 1}, {[]int{}, 0}} {
			n, _ := product(c.shape)
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(9)-4))
			}
			opts := Options{Axis: c.axis, Mode: scale.Modes()[ci%len(scale.Modes())]}
			var keep []bool
			if ci == 2 {
				keep = make([]bool, n)
				for i := range keep {
					keep[i] = r.IntN(3) != 0
				}
				opts.Keep = keepMask(t, c.shape, keep)
			}
			v, err := Cast(x, c.shape, dt, &opts)
			require.NoError(t, err, name)
			for i, k := range keep {
				if !k {
					assert.Equal(t, float32(0), v.Values[i], "%s: dropped element %d", name, i)
				}
			}
			opts.Form = Actual
			a, err := Cast(x, c.shape, dt, &opts)
			require.NoError(t, err, name)
			opts.Form = Compressed
			comp, err := Cast(x, c.shape, dt, &opts)
			require.NoError(t, err, name)
			for _, tn := range []*Tensor{a, comp} {
				got, err := Decompress(tn)
				require.NoError(t, err, name)
				i, ok := sameBits(v.Values, got)
				assert.True(t, ok, "%s %v %s: element %d: virtual %v, decompressed %v", name, c.shape, tn.Form, i, v.Values[i], got[i])
			}
			exp, err := Expand(comp)
			require.NoError(t, err)
			require.Equal(t, len(a.Parts()), len(exp.Parts()), name)
			for k, p := range a.Parts() {
				assert.Equal(t, p.Name, exp.Parts()[k].Name)
				assert.Equal(t, p.Bytes, exp.Parts()[k].Bytes, "%s %s part", name, p.Name)
			}
			// Every value is an entry of its table times its block scale.
			if c.axis == -1 && keep == nil {
				checkEntries(t, dt, a, v.Values)
			}
		}
	}
}

// checkEntries checks, for a tensor cast along its last axis, that each
// element's value is its code's entry in the table its meta field names,
// times the block's scale.
func checkEntries(t *testing.T, dt *DataType, a *Tensor, values []float32) {
	cb := dt.Codebook()
	lay, err := newLayoutFor(a.Shape, a.Axis, dt)
	require.NoError(t, err)
	dec := newDecoder(dt, a)
	lay.forEach(func(b block) {
		s := dec.scaleOf(a, b.scaleIndex).mul
		for j := range b.len1 {
			i := b.base + j
			m := 0
			if a.Meta != nil {
				m = int(a.Meta.Bytes[lay.metaIndex(b, j/lay.sub)])
			}
			want := cb.Table(m).Value(a.Data.Bytes[i]) * s
			if !(math.IsNaN(float64(want)) && math.IsNaN(float64(values[i]))) {
				require.Equal(t, want, values[i], "%s element %d", dt.Name(), i)
			}
		}
	})
}

func TestCodebookLookupErrors(t *testing.T) {
	for _, code := range []string{
		"cb41fi_e2m2fnuz_e8m0_t32s3", // subtile does not divide
		"icb44fi_e2m3fnuz",           // 16 tables without a tile
		"nf4_e8m0_t32",               // exponent scale, no compute format
		"icb44fi_e2m3fnuz_e8m0_t32_t32",
		"icb44fi_e2m3fnuz_float16_int8_t32",
		"icb44fi_e2m3fnuz_e8m0_t32s8o1",
		"nf4_float32_t64s8",
		"cb42fi_e2m2fnuz_e8m0_t32",
	} {
		_, err := Lookup(code)
		assert.Error(t, err, code)
	}
	dt, err := Lookup("nf4_float16_t128")
	require.NoError(t, err)
	assert.Equal(t, 4+16.0/128, dt.BitsPerValue())
	dt, err = Lookup("cb41fi_e2m2fnuz_e8m0_t32s4")
	require.NoError(t, err)
	assert.Equal(t, MustLookup("mxfi4").BitsPerValue(), dt.BitsPerValue())
	dt, err = Lookup("iq4_nl_float16_t32")
	require.NoError(t, err)
	assert.Equal(t, "iq4_nl", dt.Codebook().Name())
}

// TestCodebookUserTables: a datatype of learned tables with fewer entries
// than their codes allow decodes valid codes and rejects the others.
func TestCodebookUserTables(t *testing.T) {
	a, err := codebook.NewTable("a", []float32{-1, 0, 0.5, 1, 2}, nil)
	require.NoError(t, err)
	b, err := codebook.NewTable("b", []float32{-2, -1, 0, 1}, nil)
	require.NoError(t, err)
	cb, err := codebook.New("ab", 3, []*codebook.Table{a, b}, nil)
	require.NoError(t, err)
	spec, err := scale.Parse("float32_t8s4")
	require.NoError(t, err)
	dt, err := NewCodebook(cb, spec, "")
	require.NoError(t, err)
	assert.Equal(t, "ab_float32_t8s4", dt.Name())
	x := []float32{-1, 0, 0.5, 2, -4, -2, 0, 2}
	act, err := Cast(x, []int{8}, dt, &Options{Form: Actual})
	require.NoError(t, err)
	// Scale = amax / largest entry = 4 / 2 = 2. The first subtile, halved,
	// is −0.5, 0, 0.25, 1: both tables give −1, 0, 0, 1 (ties to the lower
	// entry), so table a, the first, wins. The second, −2, −1, 0, 1, is
	// table b exactly.
	assert.Equal(t, []byte{0, 1}, act.Meta.Bytes)
	assert.Equal(t, []byte{0, 1, 1, 3, 0, 1, 2, 3}, act.Data.Bytes)
	got, err := Decompress(act)
	require.NoError(t, err)
	assert.Equal(t, []float32{-2, 0, 0, 2, -4, -2, 0, 2}, got)
	act.Data.Bytes[0] = 6 // no entry 6 in table a
	_, err = Decompress(act)
	assert.ErrorIs(t, err, codebook.ErrCode)
}

// BenchmarkCodebookCast times Cast to Actual of 2^16 values (bytes of the
// float32 input) for a few codebook datatypes.
func BenchmarkCodebookCast(b *testing.B) { benchCodebookCast(b, true) }

// BenchmarkCodebookCastBlocks is BenchmarkCodebookCast block by block
// (castCodebookBlocks), in the Virtual form.
func BenchmarkCodebookCastBlocks(b *testing.B) { benchCodebookCast(b, false) }

func benchCodebookCast(b *testing.B, stream bool) {
	form := Actual
	if !stream {
		form = Virtual
	}
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 1<<16)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, name := range []string{"nf4", "mxfi4", "icb44fi2_e32s8", "mx9cb"} {
		dt := MustLookup(name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				_, err := castPath(x, []int{256, 256}, dt, &Options{Form: form}, true, stream)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCodebookRowsEqualBlocks compares the row-by-row cast of codebook
// datatypes (kernels over a row of blocks at once) with the block-by-block
// path: rows that are no whole number of tiles, all-zero, NaN and Inf
// blocks, tiny and huge values (scales that round to zero or overflow), a
// keep mask (dropped elements stored as 0, rows starting off a mask byte),
// in every form; and Decompress row by row with block by block.
func TestCodebookRowsEqualBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, name := range codebookTypes {
		dt := MustLookup(name)
		for si, shape := range [][]int{{5, 200}, {3, 77}, {130}, {2, 3, 64}} {
			n, _ := product(shape)
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(13)-6))
			}
			clear(x[min(64, n-1):min(128, n)])
			x[r.IntN(n)] = float32(math.NaN())
			x[r.IntN(n)] = float32(math.Inf(-1))
			x[r.IntN(n)] = 3e38
			x[r.IntN(n)] = 1e-40
			x[r.IntN(n)] = float32(math.Copysign(0, -1))
			for _, form := range []Form{Virtual, Actual, Compressed} {
				opts := DefaultOptions()
				opts.Form = form
				opts.Mode = scale.Modes()[si%len(scale.Modes())]
				if si == 1 || si == 3 {
					keep := make([]bool, n)
					for i := range keep {
						keep[i] = r.IntN(4) != 0
					}
					opts.Keep = keepMask(t, shape, keep)
				}
				fast, err := castPath(x, shape, dt, &opts, true, true)
				require.NoError(t, err, name)
				slow, err := castPath(x, shape, dt, &opts, true, false)
				require.NoError(t, err, name)
				if i, ok := sameBits(fast.Values, slow.Values); !ok {
					t.Fatalf("%s %v: element %d: rows %v, blocks %v", name, shape, i, fast.Values[i], slow.Values[i])
				}
				fp, sp := fast.Parts(), slow.Parts()
				require.Equal(t, len(sp), len(fp), name)
				for i := range fp {
					require.Equal(t, sp[i].Name, fp[i].Name)
					require.Equal(t, sp[i].Bytes, fp[i].Bytes, "%s %v %v %s part", name, shape, form, fp[i].Name)
				}
				if form != Virtual {
					// Decompress (row by row) equals the block-by-block path.
					got, err := Decompress(fast)
					require.NoError(t, err, name)
					lay, err := newLayoutFor(fast.Shape, fast.Axis, dt)
					require.NoError(t, err)
					want, err := decompressCodebookBlocks(fast, withParts(fast, Actual, unpack), lay)
					require.NoError(t, err, name)
					if i, ok := sameBits(want, got); !ok {
						t.Fatalf("%s %v: decompressed element %d: rows %v, blocks %v", name, shape, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestFloat32ScaleDecode: the decoder reads float32 scale codes as their
// bits, NaNs quieted, as the float32 format decodes them.
func TestFloat32ScaleDecode(t *testing.T) {
	dt := MustLookup("nf4")
	d := newDecoder(dt, &Tensor{})
	require.True(t, d.f32Scale)
	f := dt.Spec().Scale
	r := rand.New(rand.NewPCG(31, 32))
	codes := []uint32{0, 0x80000000, 1, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7f800001, 0x7fc00000, 0xffffffff, 0x3f800000}
	for range 10000 {
		codes = append(codes, r.Uint32())
	}
	for _, c := range codes {
		require.Equal(t, math.Float32bits(f.Decode(c)), math.Float32bits(d.scale(c)), "code %#x", c)
	}
}
