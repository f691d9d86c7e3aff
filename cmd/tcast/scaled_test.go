package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	ournpy "github.com/tensorcast-go/tensorcast/checkpoint/npy"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// testInput returns n deterministic values spread over several binades, with
// zeros, and a NaN and an infinity when special is set.
func testInput(n int, special bool) []float32 {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(12)-6))
		if i%17 == 3 {
			x[i] = 0
		}
	}
	if special && n > 40 {
		x[5] = float32(math.NaN())
		x[40] = float32(math.Inf(-1))
	}
	return x
}

// castTo casts x of the given shape into a new directory and returns it
// (with -allow-nonfinite: the inputs hold NaN and Inf on purpose).
func castTo(t *testing.T, shape []int, x []float32, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "x.npy")
	writeNpy(t, in, shape, x)
	out := filepath.Join(dir, "cast")
	code, _, stderr := tcast(append([]string{"cast", "-allow-nonfinite", "-o", out, in}, args...)...)
	require.Equal(t, 0, code, stderr)
	return out
}

func readInfo(t *testing.T, dir string) map[string]any {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(dir, "info.json"))
	require.NoError(t, err)
	var info map[string]any
	require.NoError(t, json.Unmarshal(js, &info))
	return info
}

// partsByName returns info.json's part descriptions by name.
func partsByName(info map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, p := range info["parts"].([]any) {
		m := p.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

func TestCastMXFP4Parts(t *testing.T) {
	// One block of 32 whose elements are E2M1 values times 8: amax 48 = 1.5·2^5,
	// E2M1's emax is 2, so the OCP floor rule gives the scale 2^3 (E8M0 code
	// 127+3 = 130) and every element is exact.
	negZero := float32(math.Copysign(0, -1))
	v := []float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, negZero, -0.5, -1, -1.5, -2, -3, -4, -6}
	wantCodes := []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	x := make([]float32, 32)
	for i := range x {
		x[i] = 8 * v[i%16]
	}
	out := castTo(t, []int{1, 32}, x, "-dtype", "mxfp4")
	codes, _ := readWithNpyio[uint8](t, filepath.Join(out, "codes.npy"))
	assert.Equal(t, append(wantCodes, wantCodes...), codes)
	deq, _ := readWithNpyio[float32](t, filepath.Join(out, "dequant.npy"))
	assert.Equal(t, x, deq)
	sc, shape := readWithNpyio[uint8](t, filepath.Join(out, "scale.npy"))
	assert.Equal(t, []int{1, 1}, shape)
	assert.Equal(t, []uint8{130}, sc)
	packed, shape := readWithNpyio[uint8](t, filepath.Join(out, "packed.npy"))
	assert.Equal(t, []int{16}, shape)
	assert.Equal(t, []uint8{0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe}, packed[:8])

	info := readInfo(t, out)
	dt := info["datatype"].(map[string]any)
	assert.Equal(t, "mxfp4e2", dt["name"])
	assert.Equal(t, "float4_e2m1fn_float8_e8m0fnu_t32", dt["code"])
	assert.Equal(t, 4.25, dt["bits_per_value"])
	assert.Equal(t, 4.25, info["bits_per_value"], "32·4 + 8 bits over 32 values")
	assert.Equal(t, 1.0, info["axis"])
	assert.Equal(t, "floor", info["scale_mode"])
	assert.Equal(t, "compressed", info["form"])
	parts := partsByName(info)
	assert.Equal(t, map[string]any{"name": "data", "shape": []any{1.0, 32.0}, "storage": "packed4",
		"format": "float4_e2m1fn", "bits": 4.0, "bytes": 16.0, "file": "packed.npy", "file_dtype": "uint8"}, parts["data"])
	assert.Equal(t, map[string]any{"name": "scale", "shape": []any{1.0, 1.0}, "storage": "packed8",
		"format": "float8_e8m0fnu", "bits": 8.0, "bytes": 1.0, "file": "scale.npy", "file_dtype": "uint8"}, parts["scale"])
	entries, _ := os.ReadDir(out)
	assert.Len(t, entries, 5)
}

func TestCastNVFP4TensorScale(t *testing.T) {
	// amax 6·448 gives the tensor scale 1.0 (float32 0x3f800000), and the first
	// block's UE4M3 scale 448 (code 0x7e); the second block's amax 6 gives 1 (0x38).
	x := make([]float32, 32)
	x[0] = 6 * 448
	x[16] = 6
	out := castTo(t, []int{32}, x, "-dtype", "nvfp4")
	ts, shape := readWithNpyio[float32](t, filepath.Join(out, "tensor_scale.npy"))
	assert.Equal(t, []int{1}, shape)
	assert.Equal(t, []float32{1}, ts)
	tsc, _ := readWithNpyio[uint32](t, filepath.Join(out, "tensor_scale_codes.npy"))
	assert.Equal(t, []uint32{0x3f800000}, tsc)
	sc, _ := readWithNpyio[uint8](t, filepath.Join(out, "scale.npy"))
	assert.Equal(t, []uint8{0x7e, 0x38}, sc)
	info := readInfo(t, out)
	assert.InDelta(t, (32*4+2*8+32)/32.0, info["bits_per_value"], 1e-12)
	p := partsByName(info)["tensor_scale"]
	assert.Equal(t, "uint32", p["storage"])
	assert.Equal(t, "tensor_scale_codes.npy", p["codes_file"])
	assert.Equal(t, "float32", p["file_dtype"])
}

func TestCastZeroPointsAndWideScales(t *testing.T) {
	// uint4_g32: float16 scale and int8 zero point per 32. A block spanning
	// [-1, 2] has the scale 3/15 = 0.2 in float16 and the zero point
	// round(0 − (−1)/0.2) = 5 codes; stored as int8 it reads back as 5.
	x := make([]float32, 64)
	for i := range x {
		x[i] = -1 + 3*float32(i%32)/31
	}
	x[32] = -30 // second block: [-30, 2] → zero point round(30/(32/15)) = 14
	out := castTo(t, []int{2, 32}, x, "-dtype", "uint4_g32")
	scale, shape := readWithNpyio[float32](t, filepath.Join(out, "scale.npy"))
	assert.Equal(t, []int{2, 1}, shape)
	assert.Equal(t, float16.Fromfloat32(0.2).Float32(), scale[0])
	codes, _ := readWithNpyio[uint16](t, filepath.Join(out, "scale_codes.npy"))
	assert.Equal(t, float16.Fromfloat32(0.2).Bits(), codes[0])
	assert.Equal(t, float16.Fromfloat32(32.0/15).Bits(), codes[1])
	zero, _ := readWithNpyio[int8](t, filepath.Join(out, "zero.npy"))
	assert.Equal(t, []int8{5, 14}, zero)
	assert.Equal(t, "int8", partsByName(readInfo(t, out))["zero"]["file_dtype"])

	// uint4_f12i432: a 4-bit zero point in int8 (sign-extended) and a 12-bit
	// scale; int4_f32: a 9-bit e5m3 scale.
	out = castTo(t, []int{64}, testInput(64, false), "-dtype", "uint4_f12i432")
	z, _ := readWithNpyio[int8](t, filepath.Join(out, "zero.npy"))
	for _, v := range z {
		assert.True(t, v >= -8 && v <= 7, "int4 zero point %d", v)
	}
	_, _ = readWithNpyio[uint16](t, filepath.Join(out, "scale_codes.npy"))
	out = castTo(t, []int{64}, testInput(64, false), "-dtype", "int4_f32")
	p := partsByName(readInfo(t, out))["scale"]
	assert.Equal(t, "e5m3", p["format"])
	assert.Equal(t, 9.0, p["bits"])
	assert.Equal(t, "uint16", p["storage"])
}

func TestCastMetaAndMask(t *testing.T) {
	out := castTo(t, []int{2, 48}, testInput(96, false), "-dtype", "mx6")
	meta, shape := readWithNpyio[uint8](t, filepath.Join(out, "meta.npy"))
	assert.Equal(t, []int{2, 24}, shape, "one 1-bit offset per subtile of 2")
	for _, m := range meta {
		assert.LessOrEqual(t, m, uint8(1))
	}
	p := partsByName(readInfo(t, out))["meta"]
	assert.Equal(t, "packed1", p["storage"])
	assert.Nil(t, p["format"])

	dir := t.TempDir()
	keep := make([]bool, 64)
	for i := range keep {
		keep[i] = i%3 != 0
	}
	x := testInput(64, false)
	x[0] = 1e6 // dropped: it must not set the scale
	mask := filepath.Join(dir, "keep.npy")
	writeNpy(t, mask, []int{2, 32}, keep)
	out = castTo(t, []int{2, 32}, x, "-dtype", "mxfp4", "-keep", mask)
	m, err := ournpy.ReadFile(filepath.Join(out, "mask.npy"))
	require.NoError(t, err)
	assert.Equal(t, ournpy.Bool, m.DType)
	assert.Equal(t, []int{2, 32}, m.Shape)
	for i, k := range keep {
		assert.Equal(t, k, m.Data[i] == 1, "flag %d", i)
	}
	deq, _ := readWithNpyio[float32](t, filepath.Join(out, "dequant.npy"))
	assert.Equal(t, float32(0), deq[0], "dropped elements are stored as zero")
	info := readInfo(t, out)
	assert.Equal(t, 5.25, info["bits_per_value"], "4 + 8/32 + 1 mask bit")
	assert.Equal(t, mask, info["keep"])

	// A uint8 mask that broadcasts ([2, 1]: keep row 1, drop row 0) gives the
	// same parts as the full bool mask it stands for.
	col := filepath.Join(dir, "col.npy")
	writeNpy(t, col, []int{2, 1}, []uint8{0, 3})
	full := filepath.Join(dir, "full.npy")
	rows := make([]bool, 64)
	for i := 32; i < 64; i++ {
		rows[i] = true
	}
	writeNpy(t, full, []int{2, 32}, rows)
	a := castTo(t, []int{2, 32}, x, "-dtype", "mxfp4", "-keep", col)
	b := castTo(t, []int{2, 32}, x, "-dtype", "mxfp4", "-keep", full)
	for _, f := range []string{"codes.npy", "scale.npy", "mask.npy", "dequant.npy"} {
		wa, err := os.ReadFile(filepath.Join(a, f))
		require.NoError(t, err)
		wb, err := os.ReadFile(filepath.Join(b, f))
		require.NoError(t, err)
		assert.Equal(t, wb, wa, f)
	}
}

func TestDecompressMatchesDequant(t *testing.T) {
	dir := t.TempDir()
	mask := filepath.Join(dir, "keep.npy")
	keep := make([]bool, 256)
	for i := range keep {
		keep[i] = i%5 != 2
	}
	writeNpy(t, mask, []int{4, 64}, keep)
	cases := []struct {
		name    string
		shape   []int
		special bool
		args    []string
	}{
		{"mxfp4", []int{4, 64}, true, []string{"-dtype", "mxfp4"}},
		{"mxfp4 axis 0", []int{64, 3}, false, []string{"-dtype", "mxfp4", "-axis", "0"}},
		{"mxfp4 3-D axis 1", []int{2, 40, 3}, true, []string{"-dtype", "mxfp4", "-axis", "-2"}},
		{"mxfp4 0-d", []int{}, false, []string{"-dtype", "mxfp4"}},
		{"mxfp4 keep", []int{4, 64}, false, []string{"-dtype", "mxfp4", "-keep", mask}},
		{"mxfp6e2", []int{3, 40}, true, []string{"-dtype", "mxfp6e2"}},
		{"mxfp8e4 stochastic", []int{3, 40}, false, []string{"-dtype", "mxfp8e4", "-round", "stochastic", "-seed", "3", "-scale-mode", "even"}},
		{"nvfp4", []int{2, 48}, true, []string{"-dtype", "nvfp4"}},
		{"mxint8", []int{2, 64}, true, []string{"-dtype", "mxint8", "-full-range"}},
		{"mx6", []int{2, 48}, false, []string{"-dtype", "mx6"}},
		{"mx6 axis 0", []int{48, 2}, false, []string{"-dtype", "mx6", "-axis", "0"}},
		{"uint4_g32", []int{3, 64}, true, []string{"-dtype", "uint4_g32"}},
		{"uint4_g32 keep", []int{4, 64}, false, []string{"-dtype", "uint4_g32", "-keep", mask}},
		{"uint4_f12i432", []int{2, 64}, false, []string{"-dtype", "uint4_f12i432"}},
		{"uint16_ff", []int{2, 10}, false, []string{"-dtype", "uint16_ff"}},
		{"int4_f32", []int{2, 64}, true, []string{"-dtype", "int4_f32"}},
		{"int8_channel axis 0", []int{6, 5}, false, []string{"-dtype", "int8_channel", "-axis", "0"}},
		{"fp8e4_block128", []int{130, 200}, true, []string{"-dtype", "fp8e4_block128"}},
		{"fp8e4_block128 axis 0", []int{130, 200}, false, []string{"-dtype", "fp8e4_block128", "-axis", "0"}},
		{"code spelling", []int{2, 64}, false, []string{"-dtype", "e2m1_e8m0_t32"}},
		{"e4m3fn", []int{5, 7}, true, []string{"-dtype", "e4m3fn"}},
		{"bfloat16 ieee", []int{50}, true, []string{"-dtype", "bfloat16", "-overflow", "ieee"}},
		{"float32", []int{50}, true, []string{"-dtype", "float32"}},
		{"int8 unscaled", []int{50}, true, []string{"-dtype", "int8", "-full-range"}},
		{"e8m0 unscaled", []int{3, 3}, false, []string{"-dtype", "e8m0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 1
			for _, d := range c.shape {
				n *= d
			}
			out := castTo(t, c.shape, testInput(n, c.special), c.args...)
			got := filepath.Join(t.TempDir(), "y.npy")
			// Flags after the positional DIR.
			code, stdout, stderr := tcast("decompress", out, "-o", got)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, got)
			want, err := os.ReadFile(filepath.Join(out, "dequant.npy"))
			require.NoError(t, err)
			b, err := os.ReadFile(got)
			require.NoError(t, err)
			assert.Equal(t, want, b, "decompress output equals dequant.npy bit for bit")
		})
	}
}

func TestDecompressTo16(t *testing.T) {
	out := castTo(t, []int{2, 32}, testInput(64, false), "-dtype", "mxfp4")
	deq, _ := readWithNpyio[float32](t, filepath.Join(out, "dequant.npy"))
	dir := t.TempDir()
	f16 := filepath.Join(dir, "h.npy")
	code, _, stderr := tcast("decompress", "-to", "f16", "-o", f16, out)
	require.Equal(t, 0, code, stderr)
	a, err := ournpy.ReadFile(f16)
	require.NoError(t, err)
	assert.Equal(t, ournpy.Float16, a.DType)
	assert.Equal(t, []int{2, 32}, a.Shape)
	for i, v := range deq {
		h := uint16(a.Data[2*i]) | uint16(a.Data[2*i+1])<<8
		assert.Equal(t, float16.Fromfloat32(v).Bits(), h, "element %d", i)
	}
	bf := filepath.Join(dir, "b.npy")
	code, _, stderr = tcast("decompress", "-to", "bf16", "-o", bf, out)
	require.Equal(t, 0, code, stderr)
	u, _ := readWithNpyio[uint16](t, bf)
	for i, v := range deq {
		// E2M1 values times a power of two are exact in bfloat16.
		assert.Equal(t, uint16(math.Float32bits(v)>>16), u[i], "element %d", i)
	}
}

// editInfo rewrites a field of DIR/info.json.
func editInfo(t *testing.T, dir string, edit func(info map[string]any)) {
	t.Helper()
	info := readInfo(t, dir)
	edit(info)
	js, err := json.Marshal(info)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "info.json"), js, 0o644))
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

func TestDecompressBadInput(t *testing.T) {
	mx := castTo(t, []int{4, 64}, testInput(256, false), "-dtype", "mxfp4")
	mx6 := castTo(t, []int{2, 48}, testInput(96, false), "-dtype", "mx6")
	u4 := castTo(t, []int{2, 64}, testInput(128, false), "-dtype", "uint4_g32")
	rm := func(name string) func(t *testing.T, d string) {
		return func(t *testing.T, d string) { require.NoError(t, os.Remove(filepath.Join(d, name))) }
	}
	part := func(name, key string, v any) func(t *testing.T, d string) {
		return func(t *testing.T, d string) {
			editInfo(t, d, func(info map[string]any) {
				for _, p := range info["parts"].([]any) {
					if m := p.(map[string]any); m["name"] == name {
						m[key] = v
					}
				}
			})
		}
	}
	cases := []struct {
		name string
		src  string
		edit func(t *testing.T, d string)
		msg  string
	}{
		{"missing dir", "", nil, "does not exist"},
		{"missing info", mx, rm("info.json"), "info.json"},
		{"malformed info", mx, func(t *testing.T, d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, "info.json"), []byte("{\"shape\": [4,"), 0o644))
		}, "info.json: malformed"},
		{"unknown datatype", mx, func(t *testing.T, d string) {
			editInfo(t, d, func(i map[string]any) { i["datatype"] = map[string]any{"name": "x", "code": "e2m2x_e8m0_t32"} })
		}, "info.json: datatype code"},
		{"no shape", mx, func(t *testing.T, d string) { editInfo(t, d, func(i map[string]any) { delete(i, "shape") }) }, "info.json: no shape"},
		{"shape disagrees", mx, func(t *testing.T, d string) {
			editInfo(t, d, func(i map[string]any) { i["shape"] = []int{4, 65} })
		}, "info.json"},
		{"axis out of range", mx, func(t *testing.T, d string) { editInfo(t, d, func(i map[string]any) { i["axis"] = 5 }) }, "info.json"},
		{"bad scale mode", mx, func(t *testing.T, d string) { editInfo(t, d, func(i map[string]any) { i["scale_mode"] = "up" }) }, "info.json"},
		{"missing part", mx, func(t *testing.T, d string) {
			editInfo(t, d, func(i map[string]any) { i["parts"] = i["parts"].([]any)[:1] })
		}, "info.json: tcast: mxfp4e2 tensor [4 64]: missing scale part"},
		{"wrong part format", mx, part("scale", "format", "float16"), "info.json: part \"scale\""},
		{"wrong part bits", mx6, part("meta", "bits", 2), "info.json"},
		{"foreign file name", mx, part("scale", "file", "../x.npy"), "info.json"},
		{"missing packed", mx, rm("packed.npy"), "packed.npy"},
		{"short packed", mx, func(t *testing.T, d string) {
			writeNpy(t, filepath.Join(d, "packed.npy"), []int{127}, make([]uint8, 127))
		}, "packed.npy: 127 bytes"},
		{"missing scale", mx, rm("scale.npy"), "scale.npy"},
		{"scale shape", mx, func(t *testing.T, d string) {
			writeNpy(t, filepath.Join(d, "scale.npy"), []int{4, 3}, make([]uint8, 12))
		}, "scale.npy: shape [4 3]"},
		{"scale dtype", mx, func(t *testing.T, d string) {
			writeNpy(t, filepath.Join(d, "scale.npy"), []int{4, 2}, make([]float32, 8))
		}, "scale.npy: float32 array, want uint8"},
		{"meta out of range", mx6, func(t *testing.T, d string) {
			m := make([]uint8, 48)
			m[7] = 2
			writeNpy(t, filepath.Join(d, "meta.npy"), []int{2, 24}, m)
		}, "meta.npy: entry 7"},
		{"missing codes file", u4, rm("scale_codes.npy"), "scale_codes.npy"},
		{"scale disagrees with codes", u4, func(t *testing.T, d string) {
			writeNpy(t, filepath.Join(d, "scale.npy"), []int{2, 2}, []float32{1, 2, 3, 4})
		}, "scale.npy: entry 0"},
		{"zero out of range", u4, func(t *testing.T, d string) {
			writeNpy(t, filepath.Join(d, "zero.npy"), []int{2, 2}, []uint8{1, 2, 3, 4})
		}, "zero.npy: uint8 array, want int8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "nope")
			if c.src != "" {
				d = copyDir(t, c.src)
				c.edit(t, d)
			}
			out := filepath.Join(t.TempDir(), "y.npy")
			code, stdout, stderr := tcast("decompress", "-o", out, d)
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Contains(t, stderr, c.msg)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "no output file")
			entries, _ := os.ReadDir(filepath.Dir(out))
			assert.Empty(t, entries, "no temporary files")
		})
	}
	for _, args := range [][]string{{"decompress", mx}, {"decompress", "-o", "y.npy"},
		{"decompress", "-o", "y.npy", mx, mx}, {"decompress", "-to", "f64", "-o", "y.npy", mx}} {
		code, _, stderr := tcast(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, stderr, "see tcast help decompress")
	}
}

func TestCastScaledBadInput(t *testing.T) {
	dir := t.TempDir()
	x2 := filepath.Join(dir, "x2.npy")
	writeNpy(t, x2, []int{2, 32}, testInput(64, false))
	x1 := filepath.Join(dir, "x1.npy")
	writeNpy(t, x1, []int{64}, testInput(64, false))
	badMask := filepath.Join(dir, "m.npy")
	writeNpy(t, badMask, []int{64}, make([]bool, 64))
	floatMask := filepath.Join(dir, "mf.npy")
	writeNpy(t, floatMask, []int{2, 32}, make([]float32, 64))
	cases := []struct {
		name   string
		args   []string
		status int
		msg    string
	}{
		{"axis too large", []string{"-dtype", "mxfp4", "-axis", "2", x2}, 2, "-axis 2 out of range"},
		{"axis too negative", []string{"-dtype", "mxfp4", "-axis", "-3", x2}, 2, "-axis -3"},
		{"unknown scale mode", []string{"-dtype", "mxfp4", "-scale-mode", "up", x2}, 2, "-scale-mode"},
		{"unknown datatype", []string{"-dtype", "mxfp44", x2}, 2, "closest: mxfp4"},
		{"bad datatype code", []string{"-dtype", "uint4_float16_t32", x2}, 2, "needs a zero point"},
		{"ieee overflow scaled", []string{"-dtype", "nvfp4", "-overflow", "ieee", x2}, 2, "always saturate"},
		{"keep unscaled", []string{"-dtype", "e4m3fn", "-keep", badMask, x2}, 2, "-keep"},
		{"keep shape", []string{"-dtype", "mxfp4", "-keep", badMask, x2}, 1, "m.npy: mask has shape [64], which does not broadcast to the input's [2 32]"},
		{"keep dtype", []string{"-dtype", "mxfp4", "-keep", floatMask, x2}, 1, "mf.npy"},
		{"keep missing", []string{"-dtype", "mxfp4", "-keep", filepath.Join(dir, "no.npy"), x2}, 1, "no.npy"},
		{"2-D tile on 1-D input", []string{"-dtype", "fp8e4_block128", x1}, 1, "x1.npy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			code, stdout, stderr := tcast(append([]string{"cast", "-o", out}, c.args...)...)
			assert.Equal(t, c.status, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Contains(t, stderr, c.msg)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "nothing written into DIR")
		})
	}
}

func TestDatatypes(t *testing.T) {
	code, stdout, _ := tcast("datatypes", "-all")
	require.Equal(t, 0, code)
	for _, s := range []string{"mxfp4e2", "mxfp4,mxfp4e2w", "nvfp4", "float4_e2m1fn_multi_ue4m3_float32_t16", "int4_g128", "4.125"} {
		assert.Contains(t, stdout, s)
	}
	assert.Equal(t, len(tc.Registered())+1, strings.Count(stdout, "\n"), "a line per datatype and the header")
	// Without -all, the common ones by the names people use, and how to see the rest.
	code, stdout, _ = tcast("datatypes")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	assert.Equal(t, len(commonDataTypes)+3, len(lines), stdout)
	assert.Regexp(t, `(?m)^mxfp4 +mxfp4e2,mxfp4e2w +float4_e2m1fn_float8_e8m0fnu_t32 +4\.25 *$`, stdout)
	assert.Contains(t, stdout, fmt.Sprintf("%d common datatypes of %d: tcast datatypes -all lists every one", len(commonDataTypes), len(tc.Registered())))
	code, stdout, _ = tcast("datatypes", "mxfp4", "-json", "e2m1_e8m0_t32")
	require.Equal(t, 0, code)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Len(t, got, 2)
	assert.Equal(t, "mxfp4e2", got[0]["name"])
	assert.Equal(t, []any{"mxfp4", "mxfp4e2w"}, got[0]["aliases"])
	assert.Equal(t, 4.25, got[0]["bits_per_value"])
	assert.Equal(t, "float4_e2m1fn_float8_e8m0fnu_t32", got[1]["code"])
	assert.Equal(t, "float4_e2m1fn", got[0]["element"])
	assert.NotContains(t, got[0], "index")
	// A codebook datatype's element is its codebook; its codes are uint4
	// indices into the tables.
	code, stdout, _ = tcast("datatypes", "-json", "nf4", "icb44fi2_e32s8")
	require.Equal(t, 0, code)
	got = nil
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Len(t, got, 2)
	assert.Equal(t, "nf4", got[0]["element"])
	assert.Equal(t, "uint4", got[0]["index"])
	assert.Equal(t, "icb44fi_e2m3fnuz", got[1]["element"])
	assert.Equal(t, "uint4", got[1]["index"])
	code, _, stderr := tcast("datatypes", "nvfp5")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "closest")
	code, stdout, _ = tcast("help", "cast")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "tcast datatypes")
	assert.Contains(t, stdout, "-scale-mode")
	code, stdout, _ = tcast("help", "decompress")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "bf16")
	code, stdout, _ = tcast("help")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "decompress")
	assert.Contains(t, stdout, "datatypes")
}
