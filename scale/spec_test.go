package scale_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
)

// Flags of a spec, in a compact form for the tables.
const (
	fTensor = 1 << iota
	fChannel
	fTile
	f2D
	fSubtile
	fSparse
	fMulti
	fExponent
	fZeroFloat
)

// specValidCase is a valid spec with its parse written out by hand: the roles
// (canonical dtype names, "" = nil), the tiles, N:M, the flags and the canonical
// spelling. The first twelve rows are the ScaleSpec parses TensorCast's triton
// code produces (its golden set G15) that are valid under the fixed grammar.
type specValidCase struct {
	in                  string
	scale, zero, tenscl string
	tiles               []scale.Tile
	n, m                int
	flags               int
	canon               string
}

var specValidCases = []specValidCase{
	// TensorCast's ScaleSpec parse results (G15).
	{"float32", "float32", "", "", nil, 0, 0, fTensor, "float32"},
	{"float32_t0", "float32", "", "", []scale.Tile{{}}, 0, 0, fChannel, "float32_t0"},
	{"e8m0_t32", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32}}, 0, 0, fTile | fExponent, "float8_e8m0fnu_t32"},
	{"e8m0_t16s2", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 16, Sub: 2}}, 0, 0,
		fTile | fSubtile | fExponent, "float8_e8m0fnu_t16s2"},
	{"e8m0_t32n2m4", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32}}, 2, 4,
		fTile | fSparse | fExponent, "float8_e8m0fnu_t32n2m4"},
	{"float16_int8_t16n2m4", "float16", "int8", "", []scale.Tile{{Size: 16}}, 2, 4,
		fTile | fSparse, "float16_int8_t16n2m4"},
	{"e8m0_t16s4_t16s4", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 16, Sub: 4}, {Size: 16, Sub: 4}}, 0, 0,
		fTile | f2D | fSubtile | fExponent, "float8_e8m0fnu_t16s4_t16s4"},
	{"e8m0_t32_t32", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32}, {Size: 32}}, 0, 0,
		fTile | f2D | fExponent, "float8_e8m0fnu_t32_t32"},
	{"e8m0_t32_t16n2m4", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32}, {Size: 16}}, 2, 4,
		fTile | f2D | fSparse | fExponent, "float8_e8m0fnu_t32_t16n2m4"},
	{"bfloat16_bfloat16_t0_t32", "bfloat16", "bfloat16", "", []scale.Tile{{}, {Size: 32}}, 0, 0,
		fChannel | fTile | f2D | fZeroFloat, "bfloat16_bfloat16_t0_t32"},
	{"float32_float16_int8_t32", "float16", "int8", "float32", []scale.Tile{{Size: 32}}, 0, 0,
		fTile | fMulti, "multi_float16_int8_float32_t32"},
	// Our reading of multi_: the last number spec is the tensor scale (TensorCast's
	// code makes e4m3 the tensor scale; docs/TENSORCAST.md §6, item 6).
	{"multi_e4m3_float32_t16_t16", "float8_e4m3", "", "float32", []scale.Tile{{Size: 16}, {Size: 16}}, 0, 0,
		fTile | f2D | fMulti, "multi_float8_e4m3_float32_t16_t16"},

	// Subtile offsets (TensorCast v2; MX9 / MX6-style).
	{"e8m0_t16s2o1", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 16, Sub: 2, Offset: 1}}, 0, 0,
		fTile | fSubtile | fExponent, "float8_e8m0fnu_t16s2o1"},
	{"e8m0_t32s8o2", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32, Sub: 8, Offset: 2}}, 0, 0,
		fTile | fSubtile | fExponent, "float8_e8m0fnu_t32s8o2"},
	// NVFP4: unsigned e4m3 block scale per 16 with an fp32 tensor scale.
	{"multi_ue4m3_float32_t16", "ue4m3", "", "float32", []scale.Tile{{Size: 16}}, 0, 0,
		fTile | fMulti, "multi_ue4m3_float32_t16"},
	{"float32_t128_t128", "float32", "", "", []scale.Tile{{Size: 128}, {Size: 128}}, 0, 0,
		fTile | f2D, "float32_t128_t128"},
	// Bare t is a channel tile (TensorCast's doc promises it, its code crashes).
	{"e8m0_t", "float8_e8m0fnu", "", "", []scale.Tile{{}}, 0, 0, fChannel | fExponent, "float8_e8m0fnu_t0"},
	// Tile range 2..1024 (TensorCast triton: 4..256).
	{"e8m0_t2", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 2}}, 0, 0, fTile | fExponent, "float8_e8m0fnu_t2"},
	{"e8m0_t512", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 512}}, 0, 0, fTile | fExponent, "float8_e8m0fnu_t512"},
	{"e8m0_t1024", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 1024}}, 0, 0, fTile | fExponent, "float8_e8m0fnu_t1024"},

	// Names with underscores, case, prefixes, channel subtiles, the multi_ forms.
	{"float8_e8m0fnu_t32", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32}}, 0, 0, fTile | fExponent, "float8_e8m0fnu_t32"},
	{"float8_e4m3fn_float8_e4m3fn_t32", "float8_e4m3fn", "float8_e4m3fn", "", []scale.Tile{{Size: 32}}, 0, 0,
		fTile | fZeroFloat, "float8_e4m3fn_float8_e4m3fn_t32"},
	{"  E8M0_T32  ", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32}}, 0, 0, fTile | fExponent, "float8_e8m0fnu_t32"},
	{"e8m0_ts4", "float8_e8m0fnu", "", "", []scale.Tile{{Sub: 4}}, 0, 0, fChannel | fSubtile | fExponent, "float8_e8m0fnu_t0s4"},
	{"e8m0_t0s8o2", "float8_e8m0fnu", "", "", []scale.Tile{{Sub: 8, Offset: 2}}, 0, 0,
		fChannel | fSubtile | fExponent, "float8_e8m0fnu_t0s8o2"},
	{"e8m0_t32_t0n1m8", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32}, {}}, 1, 8,
		fTile | fChannel | f2D | fSparse | fExponent, "float8_e8m0fnu_t32_t0n1m8"},
	{"e8m0_t64s16o1n3m16", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 64, Sub: 16, Offset: 1}}, 3, 16,
		fTile | fSubtile | fSparse | fExponent, "float8_e8m0fnu_t64s16o1n3m16"},
	{"e8m0_t32s32", "float8_e8m0fnu", "", "", []scale.Tile{{Size: 32, Sub: 32}}, 0, 0,
		fTile | fSubtile | fExponent, "float8_e8m0fnu_t32s32"},
	{"float16_int8", "float16", "int8", "", nil, 0, 0, fTensor, "float16_int8"},
	// Unsigned zero points (ours; TensorCast refuses them): uint8 data with a
	// uint8 zero point per channel or group, as compressed-tensors stores them.
	{"float32_uint8_t0", "float32", "uint8", "", []scale.Tile{{}}, 0, 0, fChannel, "float32_uint8_t0"},
	{"float16_uint8_t64", "float16", "uint8", "", []scale.Tile{{Size: 64}}, 0, 0, fTile, "float16_uint8_t64"},
	{"float16_uint4_t32", "float16", "uint4", "", []scale.Tile{{Size: 32}}, 0, 0, fTile, "float16_uint4_t32"},
	{"float16_float16", "float16", "float16", "", nil, 0, 0, fTensor | fZeroFloat, "float16_float16"},
	{"multi_float16_int8_float32_t32", "float16", "int8", "float32", []scale.Tile{{Size: 32}}, 0, 0,
		fTile | fMulti, "multi_float16_int8_float32_t32"},
	{"multi_e8m0_float32_t32", "float8_e8m0fnu", "", "float32", []scale.Tile{{Size: 32}}, 0, 0,
		fTile | fMulti | fExponent, "multi_float8_e8m0fnu_float32_t32"},
	{"int8_t32", "int8", "", "", []scale.Tile{{Size: 32}}, 0, 0, fTile, "int8_t32"},
}

// specErrorCases are specs Parse rejects, with a part of the expected reason.
var specErrorCases = []struct{ in, reason string }{
	{"", "empty spec"},
	{"   ", "empty spec"},
	{"e8m0_t3", `segment "t3": tile size 3 is not 0 or a power of two in 2..1024`},
	{"e8m0_t1", "tile size 1 is not 0 or a power of two in 2..1024"},
	{"e8m0_t2048", "tile size 2048 is not 0 or a power of two in 2..1024"},
	{"e8m0_t99999999999", `number 99999999999 out of range`},
	{"e8m0_t16n2m4_t32", `segment "t16n2m4": sparsity n2m4 is allowed on the last tile segment only`},
	{"e8m0_t0_t0", "both tiles are channel (t0)"},
	{"e8m0_t_t", "both tiles are channel (t0)"},
	{"e8m0_t32s3", `segment "t32s3": subtile size 3 is not a power of two >= 2`},
	{"e8m0_t32s1", "subtile size 1 is not a power of two >= 2"},
	{"e8m0_t32s64", `segment "t32s64": subtile size 64 does not divide tile size 32`},
	{"e8m0_t32o1", `segment "t32o1": subtile offset o1 needs a subtile size s<S>`},
	{"e8m0_t32s4o3", "subtile offset bits 3 is not 1 or 2"},
	{"e8m0_t32s4o0", "subtile offset bits 0 is not 1 or 2"},
	{"e8m0_t32n2m3", `segment "t32n2m3": sparsity M=3 is not 2, 4, 8 or 16`},
	{"e8m0_t32n4m4", "sparsity N=4 is not in 1..3"},
	{"e8m0_t32n0m4", "sparsity N=0 is not in 1..3"},
	{"e8m0_t4n2m8", "sparsity M=8 does not divide tile size 4"},
	{"e8m0_t16s2n1m4", "sparsity M=4 does not divide subtile size 2"},
	{"e8m0_t32_float16", `segment "float16" after a tile segment`},
	{"e8m0_float16_int8_bfloat16_t32", `segment "bfloat16": more than 3 number specs`},
	{"e8m0_t32_t32_t32", "more than 2 tile segments"},
	{"t32", `segment "t32": a tile segment needs a number spec before it`},
	{"multi_t16", "a tile segment needs a number spec before it"},
	{"multi_e8m0_t32", `"multi_" needs at least two number specs`},
	{"multi_", `"multi_" with no number specs`},
	{"e8m0_int8_t32", `scale "float8_e8m0fnu" with a zero point must be a float format, not exponent`},
	{"int8_int8_t32", `scale "int8" with a zero point must be a float format, not int`},
	{"float16_e8m0_t32", `zero point "float8_e8m0fnu" must be a float or int format, not exponent`},
	{"bfloat16_e8m0_t32", `zero point "float8_e8m0fnu" must be`}, // two specs are scale, zero, never tensor scale, scale
	{"float32_float16_int8", `tensor scale "float32" needs at least one tile segment`},
	{"multi_float16_e8m0_t32", `tensor scale "float8_e8m0fnu" must be a float format, not exponent`},
	{"multi_float16_int8_t32", `tensor scale "int8" must be a float format, not int`},
	{"float16_t32s4o1", `subtile offset o1 needs an exponent scale (such as e8m0), not float "float16"`},
	{"e8m9x_t32", `segment "e8m9x": not a number format: unknown format name (closest known: e8m23, e8m7, e8m0)`},
	{"float8_e4m9fn_t32", `segment "float8_e4m9fn": not a number format: unknown format name (closest known: float8_e4m3fn`},
	{"e9m3_t32", `segment "e9m3": not a number format: exponent bits 9 out of range 1..8`},
	{"e8m0__t32", "empty segment 2"},
	{"e8m0_t32_", "empty segment 3"},
	{"_e8m0", "empty segment 1"},
	{"e8m0_ t32", "white space inside the spec"},
	{"e8m0_t32x", `segment "t32x": expected t[<T>][s<S>][o<O>][n<N>m<M>]`},
	{"e8m0_t32o1s4", `segment "t32o1s4": expected t[<T>][s<S>][o<O>][n<N>m<M>]`},
	{"e8m0_t32n2", `segment "t32n2": expected`},
}

func specFormat(t *testing.T, name string) *dtype.Format {
	t.Helper()
	if name == "" {
		return nil
	}
	f, err := dtype.Parse(name)
	require.NoError(t, err)
	return f
}

func specFlags(s *scale.Spec) int {
	flags := 0
	for bit, on := range map[int]bool{
		fTensor: s.IsTensor(), fChannel: s.IsChannel(), fTile: s.IsTile(), f2D: s.Is2D(),
		fSubtile: s.IsSubtile(), fSparse: s.IsSparse(), fMulti: s.IsMultiscale(),
		fExponent: s.IsExponent(), fZeroFloat: s.IsZeroFloat(),
	} {
		if on {
			flags |= bit
		}
	}
	return flags
}

func TestParseSpecValid(t *testing.T) {
	for _, c := range specValidCases {
		t.Run(c.in, func(t *testing.T) {
			s, err := scale.Parse(c.in)
			require.NoError(t, err)
			assert.Same(t, specFormat(t, c.scale), s.Scale, "Scale")
			assert.Same(t, specFormat(t, c.zero), s.Zero, "Zero")
			assert.Same(t, specFormat(t, c.tenscl), s.TensorScale, "TensorScale")
			assert.Equal(t, c.tiles, s.Tiles, "Tiles")
			assert.Equal(t, [2]int{c.n, c.m}, [2]int{s.SparseN, s.SparseM}, "N:M")
			assert.Equal(t, c.flags, specFlags(s), "flags")
			assert.Equal(t, c.canon, s.String(), "String")
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	for _, c := range specErrorCases {
		t.Run(c.in, func(t *testing.T) {
			s, err := scale.Parse(c.in)
			require.Error(t, err, "parsed as %v", s)
			assert.Nil(t, s)
			var pe *scale.ParseError
			require.True(t, errors.As(err, &pe), "error type %T", err)
			assert.Equal(t, c.in, pe.Spec)
			assert.Contains(t, pe.Reason, c.reason)
			assert.Equal(t, `scale: bad spec "`+c.in+`": `+pe.Reason, err.Error())
		})
	}
}

func TestParseSpecErrorMessage(t *testing.T) {
	_, err := scale.Parse("e8m0_t3")
	require.EqualError(t, err, `scale: bad spec "e8m0_t3": segment "t3": tile size 3 is not 0 or a power of two in 2..1024`)
}

func TestSpecRoundTrip(t *testing.T) {
	for _, c := range specValidCases {
		t.Run(c.in, func(t *testing.T) {
			s := scale.MustParse(c.in)
			back, err := scale.Parse(s.String())
			require.NoError(t, err)
			assert.Equal(t, s, back)
			assert.Equal(t, s.String(), back.String())
		})
	}
}

func TestMustParseSpec(t *testing.T) {
	assert.Equal(t, "float8_e8m0fnu_t32", scale.MustParse("e8m0_t32").String())
	assert.Panics(t, func() { scale.MustParse("e8m0_t3") })
}

func TestSpecStringBuilt(t *testing.T) {
	// A Spec built by hand prints in canonical form and parses back to itself.
	s := &scale.Spec{
		Scale:       dtype.MustParse("ue4m3"),
		TensorScale: dtype.MustParse("float32"),
		Tiles:       []scale.Tile{{Size: 16}},
	}
	require.Equal(t, "multi_ue4m3_float32_t16", s.String())
	assert.Equal(t, s, scale.MustParse(s.String()))
}
