package convert

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/rotate"
	"github.com/tensorcast-go/tensorcast/sparsity"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// sylvester returns Sylvester's Hadamard matrix of order n divided by √n,
// built by its definition (H₂ₙ = [[Hₙ, Hₙ], [Hₙ, −Hₙ]]), independently of
// package rotate's fast transform.
func sylvester(n int) [][]float64 {
	h := [][]float64{{1}}
	for len(h) < n {
		m := len(h)
		g := make([][]float64, 2*m)
		for i := range g {
			g[i] = make([]float64, 2*m)
			for j := range g[i] {
				v := h[i%m][j%m]
				if i >= m && j >= m {
					v = -v
				}
				g[i][j] = v
			}
		}
		h = g
	}
	s := 1 / math.Sqrt(float64(n))
	for _, row := range h {
		for j := range row {
			row[j] *= s
		}
	}
	return h
}

// TestConvertRotateRoundTrip converts the iris fixture with a Hadamard
// rotation and checks that the output records it, that load's Float32 (what
// tcast decompress and verify read) gives the weights in their own
// orientation, equal to the stored cast times the Hadamard matrix, and
// close to the unrotated source.
func TestConvertRotateRoundTrip(t *testing.T) {
	for _, c := range []struct {
		dt    string
		rot   rotate.Rotation
		block int    // the block the rotation takes
		skip  string // weights whose last axis the block does not divide
	}{
		{"mxfp4", rotate.Rotation{Kind: rotate.Hadamard}, 32, `^unknown_344$`},
		{"int4_g128", rotate.Rotation{Kind: rotate.Hadamard}, 128, `^unknown_344$`},
		// Rotations across two MX blocks; conv2d_{1,3,5,7} and some PReLU slopes have 32 columns.
		{"mxfp4", rotate.Rotation{Kind: rotate.Hadamard, Block: 64}, 64, `^unknown_344$|^conv2d_[1357]/|^p_re_lu`},
	} {
		t.Run(c.dt+"/"+c.rot.String(), func(t *testing.T) {
			out := t.TempDir()
			o := opts(t, c.dt, "tcast")
			o.Rotate = c.rot
			o.Exclude = regexp.MustCompile(c.skip) // unknown_344 has 213 columns: no block divides them
			res, err := Convert(iris, out, o)
			require.NoError(t, err)
			require.NotNil(t, res.Summary.SQNRUnrotated)

			src, err := load.Open(iris)
			require.NoError(t, err)
			defer src.Close()
			conv, err := load.Open(out)
			require.NoError(t, err)
			defer conv.Close()
			var recorded map[string]layout.RotationInfo
			require.NoError(t, json.Unmarshal([]byte(conv.Metadata()[layout.KeyRotated]), &recorded))
			h := sylvester(c.block)
			n := 0
			for _, r := range res.Tensors {
				if r.DataType == "" {
					assert.Empty(t, r.Rotation, r.Name)
					continue
				}
				n++
				want := "hadamard:" + itoa(c.block)
				assert.Equal(t, want, r.Rotation, r.Name)
				require.NotNil(t, r.SQNRUnrotated, r.Name)
				assert.Equal(t, layout.RotationInfo{Rotation: want, Axis: len(r.Shape) - 1, SQNRUnrotated: r.SQNRUnrotated}, recorded[r.Name], r.Name)
				info, err := conv.Info(r.Name)
				require.NoError(t, err)
				assert.Equal(t, want, info.Rotation)

				// The stored cast, rotated back by the matrix product.
				ct, err := conv.Tensor(r.Name)
				require.NoError(t, err)
				rotated, err := tcast.Decompress(ct)
				require.NoError(t, err)
				got, shape, err := conv.Float32(r.Name)
				require.NoError(t, err)
				require.Equal(t, r.Shape, shape)
				for b := 0; b < len(rotated); b += c.block {
					for i := range c.block {
						s, norm := 0.0, 0.0
						for k := range c.block {
							s += h[i][k] * float64(rotated[b+k])
							norm += float64(rotated[b+k]) * float64(rotated[b+k])
						}
						// One float32 rounding plus the float64 transform's error.
						tol := math.Ldexp(math.Abs(s), -24) + math.Ldexp(math.Sqrt(norm), -46)
						require.InDelta(t, s, float64(got[b+i]), tol, "%s value %d", r.Name, b+i)
					}
				}

				// Against the source, before rotation: the report's SQNR.
				x, _, err := src.Float32(r.Name)
				require.NoError(t, err)
				e := measure.Compare(x, got)
				require.NotNil(t, e.SQNR)
				require.NotNil(t, r.SQNR)
				assert.InDelta(t, *r.SQNR, *e.SQNR, 1e-9, r.Name)
				assert.Greater(t, *e.SQNR, 10.0, "%s: a 4-bit cast in the weight's own orientation", r.Name)
				assert.Equal(t, r.MaxAbsErr, e.MaxAbs, r.Name)
			}
			assert.Positive(t, n)

			// verify reads the same, and decompress writes it.
			vr, err := verifyTensors(iris, out)
			require.NoError(t, err)
			for i, v := range vr {
				if v.Converted {
					assert.InDelta(t, *res.Tensors[i].SQNR, *v.SQNR, 1e-9, v.Name)
				}
			}
			plain := filepath.Join(t.TempDir(), "plain.safetensors")
			_, err = Decompress(out, plain, DecompressOptions{})
			require.NoError(t, err)
			dc, err := load.Open(plain)
			require.NoError(t, err)
			defer dc.Close()
			assert.Empty(t, dc.Metadata()[layout.KeyRotated])
			for _, r := range res.Tensors {
				if r.DataType == "" {
					continue
				}
				a, _, err := conv.Float32(r.Name)
				require.NoError(t, err)
				b, _, err := dc.Float32(r.Name)
				require.NoError(t, err)
				sameBits(t, a, b, r.Name)
			}
		})
	}
}

func itoa(n int) string {
	return rotate.Rotation{Kind: rotate.Hadamard, Block: n}.String()[len("hadamard:"):]
}

// TestConvertRotateUnrotatedSQNR: the SQNR the report gives for the cast
// without rotation is that of the conversion without -rotate.
func TestConvertRotateUnrotatedSQNR(t *testing.T) {
	o := opts(t, "mxfp4", "tcast")
	o.Exclude = regexp.MustCompile(`^unknown_344$`)
	plain, err := Convert(iris, t.TempDir(), o)
	require.NoError(t, err)
	o.Rotate = rotate.Rotation{Kind: rotate.Hadamard}
	rot, err := Convert(iris, t.TempDir(), o)
	require.NoError(t, err)
	require.Len(t, rot.Tensors, len(plain.Tensors))
	for i, r := range rot.Tensors {
		if r.DataType == "" {
			continue
		}
		require.NotNil(t, r.SQNRUnrotated, r.Name)
		assert.InDelta(t, *plain.Tensors[i].SQNR, *r.SQNRUnrotated, 1e-9, r.Name)
	}
	assert.InDelta(t, *plain.Summary.SQNR, *rot.Summary.SQNRUnrotated, 1e-9)

	// The output records them (for tcast report), as the report gives them.
	c, err := load.Open(rot.Output)
	require.NoError(t, err)
	defer c.Close()
	recorded, err := layout.ReadRotated(c.Metadata())
	require.NoError(t, err)
	n := 0
	for _, r := range rot.Tensors {
		if r.Rotation == "" {
			assert.NotContains(t, recorded, r.Name)
			continue
		}
		n++
		rec := recorded[r.Name]
		assert.True(t, rec.HasUnrotated, r.Name)
		assert.Equal(t, r.SQNRUnrotated, rec.SQNRUnrotated, r.Name)
	}
	assert.Len(t, recorded, n)
}

// TestConvertRotateRecordsUnrotatedByHand converts rows of 32 fives to
// MXFP4 with hadamard:32, in two shards. Without rotation each block's
// E8M0 scale is 2^(⌊log2 5⌋ − 2) = 1 and 5, halfway between E2M1's 4 and 6,
// rounds to even, 4: the SQNR is 10·log10(5²/1²). Rotated, a row is
// (5√32, 0, …, 0): its scale is 2^(⌊log2 28.28⌋ − 2) = 4, 28.28/4 = 7.07
// saturates to 6, so 24 is stored, and (the matrix being orthonormal) the
// row's squared error is (5√32 − 24)², its signal 32·5². A weight of zeros
// has no SQNR either way: its record holds null. Every shard records the
// same.
func TestConvertRotateRecordsUnrotatedByHand(t *testing.T) {
	dir := t.TempDir()
	five := make([]byte, 4*2*32)
	for i := 0; i < len(five); i += 4 {
		binary.LittleEndian.PutUint32(five[i:], math.Float32bits(5))
	}
	src := filepath.Join(dir, "src.safetensors")
	require.NoError(t, safetensors.WriteFile(src, []safetensors.Tensor{
		{Name: "a.weight", DType: safetensors.F32, Shape: []int{2, 32}, Data: five},
		{Name: "z.weight", DType: safetensors.F32, Shape: []int{2, 32}, Data: make([]byte, 4*2*32)},
	}, nil))
	o := opts(t, "mxfp4", "tcast")
	o.Rotate = rotate.Rotation{Kind: rotate.Hadamard}
	o.ShardSize = 40 // 34 bytes of MXFP4 per weight: a shard each
	out := filepath.Join(dir, "out")
	require.NoError(t, os.Mkdir(out, 0o777))
	res, err := Convert(src, out, o)
	require.NoError(t, err)

	without := 10 * math.Log10(25)
	with := 10 * math.Log10(32*25/math.Pow(5*math.Sqrt(32)-24, 2)) // 16.39 dB
	require.Len(t, res.Tensors, 2)
	a, z := res.Tensors[0], res.Tensors[1]
	require.Equal(t, "a.weight", a.Name)
	assert.Equal(t, "hadamard:32", a.Rotation)
	require.NotNil(t, a.SQNR)
	require.NotNil(t, a.SQNRUnrotated)
	assert.InDelta(t, with, *a.SQNR, 1e-4) // float32 roundings of the transforms
	assert.InDelta(t, without, *a.SQNRUnrotated, 1e-12)
	assert.Equal(t, "hadamard:32", z.Rotation)
	assert.Nil(t, z.SQNR)
	assert.Nil(t, z.SQNRUnrotated)

	shards, err := filepath.Glob(filepath.Join(out, "*.safetensors"))
	require.NoError(t, err)
	require.Len(t, shards, 2)
	for _, sh := range shards {
		f, err := safetensors.Open(sh)
		require.NoError(t, err)
		recorded, err := layout.ReadRotated(f.Metadata())
		require.NoError(t, f.Close())
		require.NoError(t, err, sh)
		require.Len(t, recorded, 2, sh)
		ra, rz := recorded["a.weight"], recorded["z.weight"]
		assert.Equal(t, layout.Rotated{Rotation: rotate.Rotation{Kind: rotate.Hadamard, Block: 32}, Axis: 1,
			SQNRUnrotated: a.SQNRUnrotated, HasUnrotated: true}, ra, sh)
		assert.InDelta(t, without, *ra.SQNRUnrotated, 1e-12, sh)
		assert.Equal(t, layout.Rotated{Rotation: rotate.Rotation{Kind: rotate.Hadamard, Block: 32}, Axis: 1, HasUnrotated: true}, rz, sh)
	}
}

// TestConvertRotateRefused: layouts whose loaders cannot undo a rotation,
// options that do not go with it, and weights whose axis no block divides
// are refused, naming -rotate and what to do.
func TestConvertRotateRefused(t *testing.T) {
	h := rotate.Rotation{Kind: rotate.Hadamard}
	for _, c := range []struct{ dt, lay string }{
		{"mxfp4", "gguf"}, {"mxfp4", "gpt-oss"}, {"nvfp4", "compressed-tensors"}, {"nvfp4", "modelopt"}, {"fp8e4_block128", "fp8-block"},
	} {
		o := opts(t, c.dt, c.lay)
		o.Rotate = h
		_, err := Convert(iris, filepath.Join(t.TempDir(), "out"), o)
		require.Error(t, err, c.lay)
		assert.ErrorIs(t, err, ErrRotateUnrecorded, c.lay)
		var oe *OptionError
		require.True(t, errors.As(err, &oe), c.lay)
		assert.Equal(t, "Rotate", oe.Option)
		assert.Contains(t, err.Error(), "the "+c.lay+" layout", c.lay)
		assert.Contains(t, err.Error(), "set Options.Layout to tcast", c.lay)
	}

	// unknown_344 is [2 2 128 213]: 213 is odd.
	o := opts(t, "mxfp4", "tcast")
	o.Rotate = h
	_, err := Convert(iris, t.TempDir(), o)
	var le *rotate.LengthError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, 213, le.Length)
	for _, s := range []string{"Options.Rotate: hadamard:32", "unknown_344", "213", "set Options.Exclude to ^unknown_344$"} {
		assert.Contains(t, err.Error(), s)
	}

	// A length that a smaller block divides: the block is named.
	o.Rotate = rotate.Rotation{Kind: rotate.Hadamard, Block: 128}
	o.Exclude = regexp.MustCompile(`^unknown_344$`)
	_, err = Convert(iris, t.TempDir(), o)
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Contains(t, err.Error(), "conv2d/Conv2D_weights [3 3 3 64]: axis 3 holds 64 values, not a multiple of the block of 128; set Options.Rotate to hadamard:64, or set Options.Exclude to ^conv2d/Conv2D_weights$")

	// Options that score the unrotated weight's columns.
	o = opts(t, "mxfp4", "tcast")
	o.Rotate = h
	o.Pruning = func(string, []int) (sparsity.Options, error) { return sparsity.Options{}, nil }
	_, err = Convert(iris, t.TempDir(), o)
	require.True(t, errors.As(err, new(*OptionError)), "%v", err)
	assert.Contains(t, err.Error(), "Options.Rotate does not go with Options.Pruning: pruning scores")
}
