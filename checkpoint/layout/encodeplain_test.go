package layout

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
)

// TestEncodePlainAlignments writes F32, F16 and BF16 elements into aligned
// and misaligned destinations: the bytes are the little-endian codes worked
// out by hand (1 → 0x3f800000, 0x3c00, 0x3f80; −2.5 → 0xc0200000, 0xc100,
// 0xc020; 65536 saturates to F16's largest finite 0x7bff), and deq holds
// the values the codes hold.
func TestEncodePlainAlignments(t *testing.T) {
	x := []float32{1, -2.5, 65536}
	for _, c := range []struct {
		typ  gguf.Type
		want []byte
		deq  []float32
	}{
		{gguf.TypeF32, []byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0, 0, 0, 0x80, 0x47}, []float32{1, -2.5, 65536}},
		{gguf.TypeF16, []byte{0x00, 0x3c, 0x00, 0xc1, 0xff, 0x7b}, []float32{1, -2.5, 65504}},
		{gguf.TypeBF16, []byte{0x80, 0x3f, 0x20, 0xc0, 0x80, 0x47}, []float32{1, -2.5, 65536}},
	} {
		for off := range 4 {
			buf := make([]byte, len(c.want)+4)
			dst := buf[off : off+len(c.want)]
			deq := make([]float32, len(x))
			require.NoError(t, encodePlain(c.typ, dst, x, deq))
			require.Equal(t, c.want, dst, "%v at offset %d", c.typ, off)
			require.Equal(t, c.deq, deq, "%v at offset %d", c.typ, off)
			require.NoError(t, encodePlain(c.typ, dst, x, nil))
			require.Equal(t, c.want, dst, "%v at offset %d, no deq", c.typ, off)
		}
	}
}
