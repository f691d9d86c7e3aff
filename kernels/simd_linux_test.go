//go:build linux

package kernels

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// guardedTail returns a slice of n elements of T that ends where an
// inaccessible page begins, so a kernel that reads or writes one element too
// many faults.
func guardedTail[T any](t *testing.T, n int) []T {
	t.Helper()
	ps := syscall.Getpagesize()
	var z T
	size := n * int(unsafe.Sizeof(z))
	pages := (size+ps-1)/ps + 1
	mem, err := syscall.Mmap(-1, 0, (pages+1)*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	require.NoError(t, syscall.Mprotect(mem[pages*ps:], syscall.PROT_NONE))
	b := mem[pages*ps-size : pages*ps]
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// guardedCopy returns a copy of src in a slice that ends where an
// inaccessible page begins (see guardedTail).
func guardedCopy[T any](t *testing.T, src []T) []T {
	t.Helper()
	g := guardedTail[T](t, len(src))
	copy(g, src)
	return g
}

// TestKernelsStayInBounds runs every kernel of every tier on slices that end
// at an inaccessible page, for every length up to three vectors and a bit:
// the masked tail loads must not touch the bytes after a slice.
func TestKernelsStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	forEachTier(t, func(t *testing.T) {
		forEachStore(t, func(t *testing.T) {
			for n := 1; n <= 3*64+3; n++ {
				src := guardedCopy(t, edgeFloats(r, n))
				keep := guardedTail[bool](t, n)
				for i := range keep {
					keep[i] = r.IntN(2) == 0
				}
				require.Equal(t, absMaxBitsGo(src), AbsMaxBits(src))
				require.Equal(t, absMaxBitsMaskedGo(src, keep), AbsMaxBitsMasked(src, keep))
				for _, block := range []int{5, 16, 32, 33} {
					nb := (n + block - 1) / block
					dst := guardedTail[uint32](t, nb)
					AbsMaxBlocks(dst, src, block)
					AbsMaxBlocksMasked(dst, src, keep, block)
				}
				codes := guardedTail[uint16](t, n)
				Float32ToBFloat16(codes, src, true)
				Float32ToFloat16(codes, src, false)
				f := guardedTail[float32](t, n)
				BFloat16ToFloat32(f, codes)
				Float16ToFloat32(f, codes)
				raw := guardedTail[byte](t, 2*n)
				BFloat16BytesToFloat32(f, raw)
				Float16BytesToFloat32(f, raw)
			}
		})
	})
}

// TestWeighStaysInBounds runs the weight kernels of every tier with every
// slice ending at an inaccessible page.
func TestWeighStaysInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	forEachTier(t, func(t *testing.T) {
		for n := 8; n <= 3*64; n += 8 {
			x, base := weighInput(r, n)
			x, base = guardedCopy(t, x), guardedCopy(t, base)
			meanSquare(x, 0.5)
			sigmaWeights(guardedTail[float32](t, n), x, base, 0.5, 1)
			absWeights(guardedTail[float32](t, n), x, base, 0.5)
		}
	})
}
