package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/rotate"
)

// TestRotatedStreamEqualsWhole: rotated weights that the pipeline streams
// (rotated chunk by chunk) give the same output files, byte for byte, as
// the whole-weight cast (the path rotated weights took before streaming),
// on any number of workers, and the same report (sums added in another
// order: SQNRs within 1e-9 dB).
func TestRotatedStreamEqualsWhole(t *testing.T) {
	cases := []struct {
		dt      string
		rot     rotate.Rotation
		streams bool // some rotated weight streams
	}{
		{"mxfp4", rotate.Rotation{Kind: rotate.Hadamard}, true},
		{"int4_g128", rotate.Rotation{Kind: rotate.Hadamard}, false},
		{"nvfp4", rotate.Rotation{Kind: rotate.Hadamard}, true}, // the amax of rotated values
		{"mxfp8e4", rotate.Rotation{Kind: rotate.Hadamard, Block: 64}, true},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s %s", c.dt, c.rot)
		o := opts(t, c.dt, "tcast")
		o.Rotate = c.rot
		o.Exclude = regexp.MustCompile(`^unknown_344$|^conv2d_[1357]/|^p_re_lu`)

		src, err := load.Open(iris)
		require.NoError(t, err)
		p, err := newPlan(src, &o)
		require.NoError(t, err, name)
		streamed := 0
		for _, d := range p.tensors {
			if !d.rot.IsZero() && p.streamOf(d) != nil {
				streamed++
			}
		}
		src.Close()
		if c.streams {
			assert.Greater(t, streamed, 0, name)
		}

		convert := func(whole bool, workers int) (map[string][]byte, *Result) {
			forceWhole = whole
			defer func() { forceWhole = false }()
			dir := t.TempDir()
			o.Workers = workers
			res, err := Convert(iris, dir, o)
			require.NoError(t, err, name)
			files := map[string][]byte{}
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range ents {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				require.NoError(t, err)
				files[e.Name()] = b
			}
			return files, res
		}
		wantFiles, want := convert(true, 2)
		for _, workers := range []int{1, 3} {
			msg := fmt.Sprintf("%s on %d workers", name, workers)
			gotFiles, got := convert(false, workers)
			require.Len(t, gotFiles, len(wantFiles), msg)
			for f, w := range wantFiles {
				g, ok := gotFiles[f]
				require.True(t, ok, "%s: no %s", msg, f)
				require.Equal(t, len(w), len(g), "%s: %s", msg, f)
				if i := firstDiff(w, g); i >= 0 {
					t.Fatalf("%s: %s: byte %d differs", msg, f, i)
				}
			}
			require.Len(t, got.Tensors, len(want.Tensors), msg)
			for i, w := range want.Tensors {
				g := got.Tensors[i]
				m := msg + " " + w.Name
				assert.Equal(t, w.Rotation, g.Rotation, m)
				assert.Equal(t, w.MaxAbsErr, g.MaxAbsErr, m)
				assert.Equal(t, w.Lost, g.Lost, m)
				assert.Equal(t, w.BytesOut, g.BytesOut, m)
				for _, pair := range [][2]*float64{{w.SQNR, g.SQNR}, {w.SQNRUnrotated, g.SQNRUnrotated}} {
					if pair[0] == nil {
						assert.Nil(t, pair[1], m)
					} else if assert.NotNil(t, pair[1], m) {
						assert.InDelta(t, *pair[0], *pair[1], 1e-9, m)
					}
				}
			}
		}
	}
}
