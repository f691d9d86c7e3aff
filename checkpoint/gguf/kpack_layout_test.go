package gguf

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQ5Codes pins the 5-bit code layout of Q5_0 and Q5_1 (ggml's
// block_q5_0: the fifth bits as a uint32, then element j in the low nibble
// of byte j and element j+16 in its high nibble), by hand for codes 0..31,
// and that getQ5Codes reads back what putQ5Codes wrote.
func TestQ5Codes(t *testing.T) {
	q := make([]int, 32)
	for j := range q {
		q[j] = j
	}
	y := make([]byte, 20)
	putQ5Codes(y, q)
	want := []byte{0x00, 0x00, 0xff, 0xff} // codes 16..31 have the fifth bit
	for j := range 16 {
		want = append(want, byte(j|j<<4))
	}
	assert.Equal(t, want, y)
	back := make([]int, 32)
	getQ5Codes(back, y)
	assert.Equal(t, q, back)

	var n [16]byte
	putNibbles(n[:], q)
	assert.Equal(t, want[4:], n[:], "the low nibbles alone")
	getNibbles(back, n[:])
	for j := range back {
		assert.Equal(t, j&15, back[j], "nibble %d", j)
	}
}
