package safetensors

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeroTensors returns a header JSON declaring n zero-size tensors (and,
// when meta > 0, a __metadata__ of meta keys).
func zeroTensors(n, meta int) string {
	var b bytes.Buffer
	b.WriteByte('{')
	if meta > 0 {
		b.WriteString(`"__metadata__":{`)
		for i := range meta {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":""`, i)
		}
		b.WriteString(`}`)
	}
	for i := range n {
		if i > 0 || meta > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"t%d":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`, i)
	}
	b.WriteByte('}')
	return b.String()
}

// TestHeaderLimits: a header declaring more tensors or metadata keys than
// MaxTensors, or a shape of more than MaxRank dimensions, is refused with a
// *FormatError that names the limit, while parsing, so the work done is
// bounded by the limit rather than by what the header declares.
func TestHeaderLimits(t *testing.T) {
	t.Run("at the tensor limit", func(t *testing.T) {
		b := build(zeroTensors(MaxTensors, 0))
		f, err := OpenReader(bytes.NewReader(b), int64(len(b)), "many.safetensors")
		require.NoError(t, err)
		assert.Len(t, f.Tensors(), MaxTensors)
	})
	for _, tc := range []struct {
		name, hdr, reason string
		data              int   // bytes in the data buffer
		kind              error // the sentinel errors.Is matches
	}{
		{"one tensor too many", zeroTensors(MaxTensors+1, 0),
			fmt.Sprintf("more than %d tensors", MaxTensors), 0, ErrTooLarge},
		{"one metadata key too many", zeroTensors(0, MaxTensors+1),
			fmt.Sprintf("more than %d keys", MaxTensors), 0, ErrTooLarge},
		{"rank above the limit", `{"t":{"dtype":"F32","shape":[` + strings.Repeat("1,", MaxRank) + `1],"data_offsets":[0,4]}}`,
			fmt.Sprintf("more than %d dimensions", MaxRank), 4, ErrInvalid},
		{"long data_offsets", `{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4` + strings.Repeat(",4", 1000) + `]}}`,
			"data_offsets has more than 2 elements", 4, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hostile.safetensors")
			require.NoError(t, os.WriteFile(path, build(tc.hdr, make([]byte, tc.data)), 0o644))
			_, err := Open(path)
			require.Error(t, err)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.ErrorContains(t, err, tc.reason)
			assert.ErrorContains(t, err, path)
			assert.Greater(t, fe.Offset, int64(0))
			assert.NotContains(t, err.Error(), "MaxTensors", "the number, not the Go name")
			assert.ErrorIs(t, err, tc.kind)
		})
	}
}

// TestIndexLimit: an index naming more than MaxTensors tensors is refused
// while it is parsed.
func TestIndexLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"weight_map":{`)
	for i := range MaxTensors + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"t%d":"a.safetensors"`, i)
	}
	b.WriteString(`}}`)
	ip := filepath.Join(t.TempDir(), IndexFileName)
	require.NoError(t, os.WriteFile(ip, []byte(b.String()), 0o644))
	_, err := OpenIndex(ip)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorContains(t, err, fmt.Sprintf("weight_map names more than %d tensors", MaxTensors))
	assert.ErrorContains(t, err, ip)
	assert.ErrorIs(t, err, ErrTooLarge)
}
