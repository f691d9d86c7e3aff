package mask

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden pictures under testdata/attention")

// TestVisualizeHandDrawn compares small pictures with ones drawn by hand.
func TestVisualizeHandDrawn(t *testing.T) {
	a := must(t)(FromSegmentIDs(1, []int32{0, 0, 0, 1, 1, -1}))
	a = must(t)(a.Causal(nil))
	got, err := a.Visualize(VisualizeOptions{})
	require.NoError(t, err)
	assert.Equal(t, ""+
		"batch 0: 6 queries × 6 keys\n"+
		"  00011-\n"+
		"0 █·····\n"+
		"0 ██····\n"+
		"0 ███···\n"+
		"1 ···█··\n"+
		"1 ···██·\n"+
		"- ······\n", got)
	got, err = a.Visualize(VisualizeOptions{ASCII: true, NoSegments: true})
	require.NoError(t, err)
	assert.Equal(t, ""+
		"batch 0: 6 queries × 6 keys\n"+
		"#.....\n"+
		"##....\n"+
		"###...\n"+
		"...#..\n"+
		"...##.\n"+
		"......\n", got)
	// 4×4 causal in cells of 2×2: the diagonal cells are partial (3 of 4
	// pairs), the one below full, the one above empty.
	c := must(t)(must(t)(FromLengths([]int{4}, 4)).Causal(nil))
	got, err = c.Visualize(VisualizeOptions{MaxWidth: 2, MaxHeight: 2, ASCII: true})
	require.NoError(t, err)
	assert.Equal(t, "batch 0: 4 queries × 4 keys, 2×2 per cell\n  00\n0 +.\n0 #+\n", got)
}

// TestVisualizeGolden compares pictures with the files under
// testdata/attention; go test -run TestVisualizeGolden -update rewrites them
// (check them by eye before committing).
func TestVisualizeGolden(t *testing.T) {
	heads := maskOf(t, []int{1, 2, 3, 4},
		"1111 0111 0011",
		"1000 1100 1110")
	for _, tc := range []struct {
		name string
		a    func(t *testing.T) *Attention
		o    VisualizeOptions
	}{
		{"packed_causal", func(t *testing.T) *Attention {
			a := must(t)(FromCuSeqlens([]int32{0, 5, 12, 16}))
			return must(t)(a.Causal(nil))
		}, VisualizeOptions{}},
		{"packed_causal_ascii", func(t *testing.T) *Attention {
			a := must(t)(FromCuSeqlens([]int32{0, 5, 12, 16}))
			return must(t)(a.Causal(nil))
		}, VisualizeOptions{ASCII: true}},
		{"sliding_window_3", func(t *testing.T) *Attention {
			a := must(t)(FromPadding(maskOf(t, []int{2, 10}, "1111111100", "0011111111")))
			return must(t)(a.SlidingWindow(2, 0, nil))
		}, VisualizeOptions{Batch: 1}},
		{"chunked_left_padding", func(t *testing.T) *Attention {
			a := must(t)(FromPadding(maskOf(t, []int{1, 12}, "001111111111")))
			a = must(t)(a.Chunked(4, nil))
			return must(t)(a.Causal(nil))
		}, VisualizeOptions{}},
		{"kv_cache", func(t *testing.T) *Attention {
			a := must(t)(FromQKLengths([]int{4}, 4, []int{10}, 12))
			return must(t)(a.Causal([]int{6}))
		}, VisualizeOptions{}},
		{"image_tokens", func(t *testing.T) *Attention {
			a := must(t)(FromLengths([]int{10}, 10))
			a = must(t)(a.Causal(nil))
			return must(t)(a.TokenTypes([]int32{-1, -1, 0, 0, 0, -1, 1, 1, -1, -1}, nil, Union))
		}, VisualizeOptions{}},
		{"downsampled", func(t *testing.T) *Attention {
			a := must(t)(FromCuSeqlens([]int32{0, 30, 70, 100}))
			return must(t)(a.Causal(nil))
		}, VisualizeOptions{MaxWidth: 20, MaxHeight: 10}},
		{"downsampled_ascii", func(t *testing.T) *Attention {
			a := must(t)(FromCuSeqlens([]int32{0, 30, 70, 100}))
			return must(t)(a.Causal(nil))
		}, VisualizeOptions{MaxWidth: 20, MaxHeight: 10, ASCII: true}},
		{"head_1", func(t *testing.T) *Attention {
			return must(t)(FromPairwise(heads))
		}, VisualizeOptions{Head: 1}},
		{"segment_labels", func(t *testing.T) *Attention {
			return must(t)(FromSegmentIDs(1, []int32{9, 10, 35, 36, 61, 62, -1}))
		}, VisualizeOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.a(t).Visualize(tc.o)
			require.NoError(t, err)
			path := filepath.Join("testdata", "attention", tc.name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}
