package castdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/mask"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// values returns n values spread over a few binades, with zeros.
func values(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.Ldexp(float64(i%13)-6.5, i%7-3))
		if i%17 == 3 {
			x[i] = 0
		}
	}
	return x
}

// writeCast casts n values of shape to a datatype and writes them into a new
// directory, which it returns.
func writeCast(t *testing.T, name string, shape []int, keep []bool) string {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	x := values(n)
	var km *mask.Mask
	if keep != nil {
		var err error
		km, err = mask.FromBools(shape, keep)
		require.NoError(t, err)
	}
	act, err := tc.Cast(x, shape, tc.MustLookup(name), &tc.Options{Form: tc.Actual, Axis: -1, Keep: km})
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "cast")
	require.NoError(t, Write(dir, x, act, WriteOptions{Input: "x.npy", InputDType: "float32"}))
	return dir
}

func writeArray[T npy.Element](t *testing.T, path string, shape []int, data []T) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, npy.WriteSlice(&b, shape, data))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// editInfo rewrites info.json of dir through a generic map.
func editInfo(t *testing.T, dir string, edit func(info map[string]any)) {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(dir, InfoFile))
	require.NoError(t, err)
	var info map[string]any
	require.NoError(t, json.Unmarshal(js, &info))
	edit(info)
	js, err = json.Marshal(info)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, InfoFile), js, 0o644))
}

func TestOpenBadDirectory(t *testing.T) {
	src := map[string]string{
		"mx":   writeCast(t, "mxfp4", []int{4, 64}, nil),
		"mx6":  writeCast(t, "mx6", []int{2, 48}, nil),
		"u4":   writeCast(t, "uint4_g32", []int{2, 64}, nil),
		"u4z4": writeCast(t, "uint4_f12i432", []int{2, 64}, nil),
	}
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
	set := func(key string, v any) func(t *testing.T, d string) {
		return func(t *testing.T, d string) { editInfo(t, d, func(i map[string]any) { i[key] = v }) }
	}
	cases := []struct {
		name     string
		src      string
		edit     func(t *testing.T, d string)
		notExist bool   // errors.Is(err, fs.ErrNotExist)
		file     string // the file of the *FormatError's Path, when not notExist
		msg      string
	}{
		{"missing info", "mx", rm(InfoFile), true, "", "info.json"},
		{"malformed info", "mx", func(t *testing.T, d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, InfoFile), []byte(`{"shape": [4,`), 0o644))
		}, false, InfoFile, "malformed"},
		{"unknown datatype", "mx", set("datatype", map[string]any{"name": "x", "code": "e2m2x_e8m0_t32"}), false, InfoFile, "datatype code"},
		{"no datatype", "mx", set("datatype", map[string]any{}), false, InfoFile, "no datatype code"},
		{"no shape", "mx", func(t *testing.T, d string) { editInfo(t, d, func(i map[string]any) { delete(i, "shape") }) }, false, InfoFile, "no shape"},
		{"negative dimension", "mx", set("shape", []int{4, -64}), false, InfoFile, "negative dimension"},
		{"no axis", "mx", func(t *testing.T, d string) { editInfo(t, d, func(i map[string]any) { delete(i, "axis") }) }, false, InfoFile, "no axis"},
		{"axis out of range", "mx", set("axis", 5), false, InfoFile, "axis 5 out of range"},
		{"other form", "mx", set("form", "actual"), false, InfoFile, "form"},
		{"bad scale mode", "mx", set("scale_mode", "up"), false, InfoFile, "up"},
		{"shape disagrees", "mx", set("shape", []int{4, 65}), false, InfoFile, "shape"},
		{"missing part", "mx", func(t *testing.T, d string) {
			editInfo(t, d, func(i map[string]any) { i["parts"] = i["parts"].([]any)[:1] })
		}, false, InfoFile, "mxfp4e2 tensor [4 64]: missing scale part"},
		{"no data part", "mx", func(t *testing.T, d string) {
			editInfo(t, d, func(i map[string]any) { i["parts"] = i["parts"].([]any)[1:] })
		}, false, InfoFile, "no data part"},
		{"part twice", "mx", func(t *testing.T, d string) {
			editInfo(t, d, func(i map[string]any) { i["parts"] = append(i["parts"].([]any), i["parts"].([]any)[1]) })
		}, false, InfoFile, `part "scale" listed twice`},
		{"unknown part", "mx", part("scale", "name", "offsets"), false, InfoFile, `unknown part "offsets"`},
		{"part the datatype lacks", "mx", part("scale", "name", "zero"), false, InfoFile, `part "zero": datatype`},
		{"wrong part format", "mx", part("scale", "format", "float16"), false, InfoFile, `part "scale": format "float16"`},
		{"wrong part bits", "mx6", part("meta", "bits", 2), false, InfoFile, `part "meta": storage "packed1", want "packed2"`},
		{"wrong scale bits", "mx", part("scale", "bits", 4), false, InfoFile, `part "scale": 4-bit entries, want 8`},
		{"wrong storage", "mx", part("scale", "storage", "uint8"), false, InfoFile, `storage "uint8"`},
		{"foreign file name", "mx", part("scale", "file", "../x.npy"), false, InfoFile, "file names"},
		{"missing packed", "mx", rm(PackedFile), true, "", PackedFile},
		{"packed not npy", "mx", func(t *testing.T, d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, PackedFile), []byte("hello"), 0o644))
		}, false, PackedFile, "offset 0"},
		{"short packed", "mx", func(t *testing.T, d string) {
			writeArray(t, filepath.Join(d, PackedFile), []int{127}, make([]uint8, 127))
		}, false, PackedFile, "127 bytes"},
		{"packed 2-D", "mx", func(t *testing.T, d string) {
			writeArray(t, filepath.Join(d, PackedFile), []int{2, 64}, make([]uint8, 128))
		}, false, PackedFile, "1-D"},
		{"missing scale", "mx", rm("scale.npy"), true, "", "scale.npy"},
		{"scale shape", "mx", func(t *testing.T, d string) {
			writeArray(t, filepath.Join(d, "scale.npy"), []int{4, 3}, make([]uint8, 12))
		}, false, "scale.npy", "shape [4 3]"},
		{"scale dtype", "mx", func(t *testing.T, d string) {
			writeArray(t, filepath.Join(d, "scale.npy"), []int{4, 2}, make([]float32, 8))
		}, false, "scale.npy", "float32 array, want uint8"},
		{"meta out of range", "mx6", func(t *testing.T, d string) {
			m := make([]uint8, 48)
			m[7] = 2
			writeArray(t, filepath.Join(d, "meta.npy"), []int{2, 24}, m)
		}, false, "meta.npy", "entry 7"},
		{"missing codes file", "u4", rm("scale_codes.npy"), true, "", "scale_codes.npy"},
		{"no codes file", "u4", part("scale", "codes_file", ""), false, InfoFile, "needs a codes_file"},
		{"code too wide", "u4", func(t *testing.T, d string) {
			writeArray(t, filepath.Join(d, "scale_codes.npy"), []int{2, 2}, []uint16{1, 2, 3, 4})
			writeArray(t, filepath.Join(d, "scale.npy"), []int{2, 2}, []float32{1, 2, 3, 4})
		}, false, "scale.npy", "entry 0"},
		{"scale disagrees with codes", "u4", func(t *testing.T, d string) {
			writeArray(t, filepath.Join(d, "scale.npy"), []int{2, 2}, []float32{1, 2, 3, 4})
		}, false, "scale.npy", "entry 0"},
		{"zero out of range", "u4z4", func(t *testing.T, d string) {
			writeArray(t, filepath.Join(d, "zero.npy"), []int{2, 2}, []int8{1, 2, 3, 8})
		}, false, "zero.npy", "entry 3 (8) does not fit 4-bit int4"},
		{"zero dtype", "u4", func(t *testing.T, d string) {
			writeArray(t, filepath.Join(d, "zero.npy"), []int{2, 2}, []uint8{1, 2, 3, 4})
		}, false, "zero.npy", "uint8 array, want int8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "d")
			require.NoError(t, os.CopyFS(d, os.DirFS(src[c.src])))
			c.edit(t, d)
			dir, err := Open(d)
			if err == nil {
				_, _, err = dir.Float32()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
			if c.notExist {
				assert.ErrorIs(t, err, fs.ErrNotExist)
				return
			}
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, filepath.Join(d, c.file), fe.Path)
			assert.Equal(t, "castdir", fe.Format)
			assert.NotErrorIs(t, err, fileerr.ErrNotFormat, "a part of no .npy array is a damaged directory")
			assert.Contains(t, err.Error(), filepath.Join(d, c.file)+": ")
		})
	}
	_, err := Open(filepath.Join(t.TempDir(), "nope"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "a missing directory")
}

func TestWriteRefusesAndReplaces(t *testing.T) {
	x := values(64)
	act, err := tc.Cast(x, []int{2, 32}, tc.MustLookup("mxfp4"), &tc.Options{Form: tc.Actual, Axis: -1})
	require.NoError(t, err)
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "b", "cast")
	require.NoError(t, Write(dir, x, act, WriteOptions{}), "missing parents are created")

	err = Write(dir, x, act, WriteOptions{})
	assert.ErrorIs(t, err, atomicfile.ErrExists)
	assert.Contains(t, err.Error(), dir)

	// Force replaces the whole directory: no stale file survives.
	stale := filepath.Join(dir, "stale.npy")
	require.NoError(t, os.WriteFile(stale, nil, 0o644))
	require.NoError(t, Write(dir, x, act, WriteOptions{Force: true}))
	_, err = os.Stat(stale)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	d, err := Open(dir)
	require.NoError(t, err)
	assert.Equal(t, "mxfp4e2", d.DataType.Name())

	// Force never replaces a directory holding the input, nor a file.
	in := filepath.Join(dir, "x.npy")
	require.NoError(t, os.WriteFile(in, nil, 0o644))
	err = Write(dir, x, act, WriteOptions{Force: true, Input: in})
	assert.ErrorContains(t, err, "holds the input")
	_, err = os.Stat(in)
	assert.NoError(t, err)
	file := filepath.Join(parent, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	assert.ErrorContains(t, Write(file, x, act, WriteOptions{Force: true}), "is not a directory")

	// A tensor Write cannot store leaves nothing behind.
	virt, err := tc.Cast(x, []int{2, 32}, tc.MustLookup("mxfp4"), &tc.Options{Axis: -1})
	require.NoError(t, err)
	assert.ErrorContains(t, Write(filepath.Join(parent, "v"), x, virt, WriteOptions{}), "virtual")
	assert.ErrorContains(t, Write(filepath.Join(parent, "v"), x[:3], act, WriteOptions{}), "3 input values")
	assert.Error(t, Write(filepath.Join(parent, "v"), x, nil, WriteOptions{}))
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"a", "file"}, names, "no temporary directories left")
}

func TestUnscaledEdgeShapes(t *testing.T) {
	// A 0-d int8 and an empty e2m1 tensor write and read back.
	for _, c := range []struct {
		format string
		shape  []int
		x      []float32
		want   []float32
	}{
		{"int8", []int{}, []float32{-3.6}, []float32{-4}},
		{"e2m1", []int{0, 3}, []float32{}, []float32{}},
		{"e2m1", []int{3}, []float32{0.25, 5, -7}, []float32{0, 4, -6}},
	} {
		f := dtype.MustParse(c.format)
		act, err := tc.CastFormat(c.x, c.shape, f, dtype.Options{})
		require.NoError(t, err)
		dir := filepath.Join(t.TempDir(), "d")
		require.NoError(t, Write(dir, c.x, act, WriteOptions{AllowNonFinite: true}))
		d, err := Open(dir)
		require.NoError(t, err)
		// int8 is no datatype; e2m1 is the unscaled datatype float4_e2m1fn.
		assert.Equal(t, c.format == "int8", d.DataType == nil)
		assert.Equal(t, f, d.Format)
		v, shape, err := d.Float32()
		require.NoError(t, err)
		assert.Equal(t, c.want, v)
		assert.Equal(t, c.shape, shape)
	}
}

func TestPartAndFiles(t *testing.T) {
	keep := make([]bool, 64)
	for i := range keep {
		keep[i] = i%4 != 0
	}
	dir := writeCast(t, "mxfp4", []int{2, 32}, keep)
	d, err := Open(dir)
	require.NoError(t, err)
	m, err := d.Part("mask")
	require.NoError(t, err)
	// Flags 0,1,1,1 repeated, LSB first: 0b1110 per nibble.
	assert.Equal(t, bytes.Repeat([]byte{0xee}, 8), m.Bytes)
	assert.True(t, m.Packed)
	z, err := d.Part("zero")
	assert.NoError(t, err)
	assert.Nil(t, z)
	assert.Equal(t, []string{CodesFile, DequantFile, PackedFile, "scale.npy", "mask.npy", InfoFile}, d.Files())
	assert.Equal(t, "mxfp4e2", d.Name())
	assert.True(t, Is(dir))
	assert.False(t, Is(filepath.Join(dir, PackedFile)))
	assert.False(t, Is(filepath.Dir(dir)))
	for _, f := range d.Files() {
		_, err := os.Stat(filepath.Join(dir, f))
		assert.NoError(t, err, f)
	}
}

func TestFormatErrorUnwrap(t *testing.T) {
	inner := errors.New("inner")
	e := fileErr("d", "f.npy", inner, "")
	assert.Equal(t, "castdir: "+filepath.Join("d", "f.npy")+": inner", e.Error())
	assert.ErrorIs(t, e, inner)
}

// TestCodebookInfo: the info.json of a codebook datatype describes its
// codebook as the element (NF4's 16 entries, from bitsandbytes' table:
// −1 first, 0 at code 7, 1 last; the icb44fi family's 16 tables on
// e2m3fnuz), its codes as uint4 indices, and reads back; a number format
// keeps its own description.
func TestCodebookInfo(t *testing.T) {
	read := func(dir string) (Info, map[string]any) {
		js, err := os.ReadFile(filepath.Join(dir, InfoFile))
		require.NoError(t, err)
		var in Info
		require.NoError(t, json.Unmarshal(js, &in))
		var raw map[string]any
		require.NoError(t, json.Unmarshal(js, &raw))
		return in, raw["format"].(map[string]any)
	}
	nf4 := writeCast(t, "nf4", []int{2, 64}, nil)
	in, raw := read(nf4)
	require.NotNil(t, in.Format.Codebook)
	assert.Nil(t, in.Format.Number)
	cb := in.Format.Codebook
	assert.Equal(t, "nf4", cb.Name)
	assert.Equal(t, "codebook", cb.Kind)
	assert.Equal(t, 4, cb.Bits)
	assert.Equal(t, "uint4", cb.Index)
	assert.Equal(t, 0, cb.MetaBits)
	assert.Equal(t, float32(1), cb.MaxAbs)
	require.Len(t, cb.Tables, 1)
	require.Len(t, cb.Tables[0], 16)
	assert.Equal(t, float32(-1), cb.Tables[0][0])
	assert.Equal(t, float32(0), cb.Tables[0][7])
	assert.Equal(t, float32(1), cb.Tables[0][15])
	assert.Equal(t, "codebook", raw["kind"])
	assert.NotContains(t, raw, "emax", "no number-format fields")
	d, err := Open(nf4)
	require.NoError(t, err)
	assert.Equal(t, "nf4", d.DataType.Name())

	in, _ = read(writeCast(t, "icb44fi2_e32s8", []int{2, 64}, nil))
	require.NotNil(t, in.Format.Codebook)
	assert.Equal(t, "icb44fi_e2m3fnuz", in.Format.Codebook.Name)
	assert.Equal(t, "e2m3fnuz", in.Format.Codebook.Compute)
	assert.Equal(t, 4, in.Format.Codebook.MetaBits)
	assert.Len(t, in.Format.Codebook.Tables, 16)

	dir := writeCast(t, "mxfp4", []int{2, 64}, nil)
	in, raw = read(dir)
	require.NotNil(t, in.Format.Number)
	assert.Nil(t, in.Format.Codebook)
	assert.Equal(t, "float4_e2m1fn", in.Format.Number.Name)
	assert.Equal(t, "float", raw["kind"])
	_, err = Open(dir)
	require.NoError(t, err)
}
