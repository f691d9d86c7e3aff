package mask

import (
	"encoding/binary"
	"math/bits"
)

// Bit-level helpers over LSB-first packed bits (element i is bit i&7 of byte
// i>>3). Bulk work over whole slices goes through package kernels; these move
// runs of bits between arbitrary offsets, which broadcasting and ranges need.

func getBit(b []byte, i int) bool { return b[i>>3]>>(i&7)&1 != 0 }

func setBit(b []byte, i int, v bool) {
	if v {
		b[i>>3] |= 1 << (i & 7)
	} else {
		b[i>>3] &^= 1 << (i & 7)
	}
}

// load64 reads up to 8 bytes of b from byte k on, little-endian, with zeros
// past the end of b.
func load64(b []byte, k int) uint64 {
	if k+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[k:])
	}
	var v uint64
	for i := k; i < len(b); i++ {
		v |= uint64(b[i]) << (8 * (i - k))
	}
	return v
}

// bitsAt returns the n ≤ 56 bits of b from bit off on, bit 0 first.
func bitsAt(b []byte, off, n int) uint64 {
	return load64(b, off>>3) >> (off & 7) & (1<<n - 1)
}

// orBits ors the n ≤ 56 bits of v (bit 0 first) into b from bit off on.
func orBits(b []byte, off, n int, v uint64) {
	v <<= off & 7
	k := off >> 3
	for end := (off + n + 7) >> 3; k < end; k++ {
		b[k] |= byte(v)
		v >>= 8
	}
}

// copyBits ors the n bits of src from bit soff on into dst from bit doff on;
// the bits of dst it writes must be clear.
func copyBits(dst []byte, doff int, src []byte, soff, n int) {
	if doff&7 == 0 && soff&7 == 0 {
		whole := n >> 3
		copy(dst[doff>>3:doff>>3+whole], src[soff>>3:])
		doff, soff, n = doff+8*whole, soff+8*whole, n-8*whole
	}
	for n > 0 {
		k := min(n, 56)
		orBits(dst, doff, k, bitsAt(src, soff, k))
		doff, soff, n = doff+k, soff+k, n-k
	}
}

// setRange sets (v) or clears the bits [lo, hi) of b.
func setRange(b []byte, lo, hi int, v bool) {
	for lo < hi && lo&7 != 0 {
		setBit(b, lo, v)
		lo++
	}
	fill := byte(0)
	if v {
		fill = 0xff
	}
	for ; lo+8 <= hi; lo += 8 {
		b[lo>>3] = fill
	}
	for ; lo < hi; lo++ {
		setBit(b, lo, v)
	}
}

// countRange returns the number of set bits in [lo, hi) of b.
func countRange(b []byte, lo, hi int) int {
	c := 0
	for lo < hi && lo&7 != 0 {
		if getBit(b, lo) {
			c++
		}
		lo++
	}
	for ; lo+64 <= hi; lo += 64 {
		c += bits.OnesCount64(binary.LittleEndian.Uint64(b[lo>>3:]))
	}
	for ; lo+8 <= hi; lo += 8 {
		c += bits.OnesCount8(b[lo>>3])
	}
	for ; lo < hi; lo++ {
		if getBit(b, lo) {
			c++
		}
	}
	return c
}

// nextBit returns the first index in [from, n) whose bit equals v, or -1.
// Bits past n must be clear (they are, in every Mask).
func nextBit(b []byte, from, n int, v bool) int {
	if from < 0 {
		from = 0
	}
	flip := uint64(0)
	if !v {
		flip = ^uint64(0)
	}
	for from < n {
		k := from >> 3
		w := (load64(b, k) ^ flip) >> (from & 7)
		if w != 0 {
			i := from + bits.TrailingZeros64(w)
			if i < n {
				return i
			}
			return -1
		}
		// All 64 bits from byte k on are done; start after them.
		from = 8*k + 64
	}
	return -1
}
