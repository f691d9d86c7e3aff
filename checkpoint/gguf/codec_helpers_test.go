package gguf

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// quantizeTo is Quantize for tests: an error fails t.
func quantizeTo(t testing.TB, typ Type, dst []byte, src, importance []float32) {
	t.Helper()
	require.NoError(t, Quantize(typ, dst, src, importance))
}

// dequantizeFrom is Dequantize for tests: an error fails t.
func dequantizeFrom(t testing.TB, typ Type, dst []float32, src []byte) {
	t.Helper()
	require.NoError(t, Dequantize(typ, dst, src))
}

// f16Bytes returns float16 bit patterns as the little-endian bytes Q8_0
// and Q4_0 blocks store them in, the scales of SplitBlocks.
func f16Bytes(s []uint16) []byte {
	b := make([]byte, 0, 2*len(s))
	for _, h := range s {
		b = binary.LittleEndian.AppendUint16(b, h)
	}
	return b
}

// f16Patterns is the inverse of f16Bytes.
func f16Patterns(b []byte) []uint16 {
	s := make([]uint16, len(b)/2)
	for i := range s {
		s[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return s
}

// signed4 turns stored Q4_0 codes q (value (q−8)·d) into the 4-bit two's
// complement of q−8 that SplitBlocks and JoinBlocks take, and back.
func signed4(codes []uint8) []uint8 {
	out := make([]uint8, len(codes))
	for i, q := range codes {
		out[i] = q ^ 8
	}
	return out
}

// quantizable returns the types Quantize writes.
func quantizable() map[Type]bool {
	m := map[Type]bool{}
	for t, c := range codecs {
		if c.Quantize != nil {
			m[t] = true
		}
	}
	return m
}
