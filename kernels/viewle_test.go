package kernels

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestViewLE checks the zero-copy view: little-endian bytes read as the
// values they encode (1.0 is 0x3F800000, float16 1.0 is 0x3C00), no view
// of empty or misaligned bytes.
func TestViewLE(t *testing.T) {
	if !nativeLittleEndian {
		_, ok := ViewLE[float32](make([]byte, 8))
		assert.False(t, ok)
		return
	}
	buf := make([]float32, 3) // a 4-aligned backing store
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 12)
	copy(b, []byte{0, 0, 0x80, 0x3F, 0, 0x3C, 0, 0})
	f, ok := ViewLE[float32](b[:8])
	require.True(t, ok)
	assert.Equal(t, []float32{1}, f[:1])
	assert.Len(t, f, 2)
	h, ok := ViewLE[uint16](b[4:9]) // a trailing odd byte is left out
	require.True(t, ok)
	assert.Equal(t, []uint16{0x3C00, 0}, h)
	_, ok = ViewLE[float32](b[1:9])
	assert.False(t, ok, "misaligned")
	_, ok = ViewLE[uint16](b[:0])
	assert.False(t, ok, "empty")
}
