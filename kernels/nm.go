package kernels

import (
	"fmt"
	"math"
	"math/bits"
)

// N:M selection: in every group of M consecutive floats keep the N of largest
// magnitude, writing a bit mask (element 8k+i in bit i of byte k, set = keep).
//
// The magnitude of x is its float32 bits with the sign cleared, compared as
// unsigned integers: that orders every finite value and ±Inf by |x|, and puts
// every NaN above +Inf, so a NaN is kept rather than silently pruned. Among
// equal magnitudes the lower index wins: element i outranks element j > i
// unless |x_j| > |x_i|. Every group keeps exactly N elements.

// checkNM panics unless 1 ≤ n < m ≤ 16 and m is a power of two.
func checkNM(n, m int) {
	if m < 2 || m > 16 || m&(m-1) != 0 || n < 1 || n >= m {
		panic(fmt.Sprintf("kernels: N:M pattern %d:%d: need 1 ≤ N < M ≤ 16, M a power of two", n, m))
	}
}

// SelectNM writes into dst the keep mask of src that keeps, in every group of
// m consecutive floats (src[g·m : g·m+m]), the n of largest magnitude, ties to
// the lower index. len(src) must be a multiple of m and dst must hold
// PackedLen(len(src), 1) bytes; the unused high bits of the last byte are
// cleared. It panics on a pattern checkNM refuses.
func SelectNM(dst []byte, src []float32, n, m int) {
	checkNM(n, m)
	if len(src)%m != 0 {
		panic(fmt.Sprintf("kernels: SelectNM: %d floats are not whole groups of %d", len(src), m))
	}
	selectNM(dst[:PackedLen(len(src), 1)], src, n, m)
}

// selectNMTail is the Go reference of SelectNM: the unrolled 2:4 selection,
// or the general one.
func selectNMTail(dst []byte, src []float32, n, m int) {
	if n == 2 && m == 4 {
		select24Go(dst, src)
		return
	}
	selectNMGo(dst, src, n, m)
}

// magKey is the magnitude key of x: its bits without the sign.
func magKey(x float32) uint32 { return math.Float32bits(x) &^ (1 << 31) }

// gt is 1 when b > a and 0 otherwise, for magnitude keys (below 2^31): the
// sign of a − b, without a branch.
func gt(a, b uint32) uint32 { return (a - b) >> 31 }

// rank24 returns the 4-bit keep mask of one group of four keys: bit i is set
// when fewer than two elements outrank element i (an element outranks i when
// its key is larger, or equal with a lower index).
func rank24(k0, k1, k2, k3 uint32) uint32 {
	// cij (i < j) is 1 when j outranks i, so i gains a rank; otherwise j does.
	c01, c02, c03 := gt(k0, k1), gt(k0, k2), gt(k0, k3)
	c12, c13, c23 := gt(k1, k2), gt(k1, k3), gt(k2, k3)
	r0 := c01 + c02 + c03
	r1 := 1 - c01 + c12 + c13
	r2 := 2 - c02 - c12 + c23
	r3 := 3 - c03 - c13 - c23
	// A rank below 2 is kept: bit 1 of the rank is clear.
	return (^r0>>1)&1 | (^r1 & 2) | (^r2&2)<<1 | (^r3&2)<<2
}

// select24Go is the reference of the 2:4 selection: two groups per byte.
func select24Go(dst []byte, src []float32) {
	i, k := 0, 0
	for ; i+8 <= len(src); i, k = i+8, k+1 {
		g := src[i : i+8 : i+8]
		lo := rank24(magKey(g[0]), magKey(g[1]), magKey(g[2]), magKey(g[3]))
		hi := rank24(magKey(g[4]), magKey(g[5]), magKey(g[6]), magKey(g[7]))
		dst[k] = byte(lo | hi<<4)
	}
	if i < len(src) { // one group of four left
		g := src[i : i+4 : i+4]
		dst[k] = byte(rank24(magKey(g[0]), magKey(g[1]), magKey(g[2]), magKey(g[3])))
	}
}

// selectNMGo is the reference of the general N:M selection: each element's
// rank is the number of elements of its group that outrank it, and it is kept
// when the rank is below n.
func selectNMGo(dst []byte, src []float32, n, m int) {
	clear(dst)
	var key [16]uint32
	for g := 0; g*m < len(src); g++ {
		grp := src[g*m : g*m+m]
		for i, x := range grp {
			key[i] = magKey(x)
		}
		var rank [16]uint32
		for i := 0; i < m; i++ {
			for j := i + 1; j < m; j++ {
				c := gt(key[i], key[j])
				rank[i] += c
				rank[j] += 1 - c
			}
		}
		var keep uint32
		for i := 0; i < m; i++ {
			keep |= gt(rank[i], uint32(n)) << i // rank[i] < n
		}
		pos := g * m
		dst[pos>>3] |= byte(keep << (pos & 7))
		if m == 16 {
			dst[pos>>3+1] = byte(keep >> 8)
		}
	}
}

// FirstBadGroupNM returns the index of the first group of m consecutive
// elements of the nbits-element bit mask src that does not keep exactly n, or
// −1 when every group does. nbits must be a multiple of m and src must hold
// PackedLen(nbits, 1) bytes. It panics on a pattern checkNM refuses.
func FirstBadGroupNM(src []byte, nbits, n, m int) int {
	checkNM(n, m)
	if nbits%m != 0 {
		panic(fmt.Sprintf("kernels: FirstBadGroupNM: %d bits are not whole groups of %d", nbits, m))
	}
	src = src[:PackedLen(nbits, 1)]
	for g := 0; g*m < nbits; g++ {
		pos := g * m
		var v uint32
		if m == 16 {
			v = uint32(src[pos>>3]) | uint32(src[pos>>3+1])<<8
		} else {
			v = uint32(src[pos>>3]>>(pos&7)) & (1<<m - 1)
		}
		if bits.OnesCount32(v) != n {
			return g
		}
	}
	return -1
}
