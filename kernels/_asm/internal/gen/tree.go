package gen

import (
	"fmt"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The transpose trees that turn one vector of partial results per block into
// one vector of block results, in block order: the AVX-512 tree takes 16
// blocks in Z0..Z15, the AVX2 tree 8 blocks in Y0..Y7. The block-amax helpers
// feed them the lane maxima of |x| (the float bits with the sign cleared,
// compared as unsigned integers, so that NaNs and infinities count as the
// largest).

// TreeIndexes emits the VPERMT2D index pairs of the AVX-512 tree, tables
// named prefix + "%d_%d" by half-width and member: at half-width h = 8, 4, 2,
// 1, lo[i] = (i/h)·2h + i%h and hi[i] = lo[i] + h pick the first and second h
// lanes of each 2h-lane group from two vectors.
func TreeIndexes(prefix string) [4][2]operand.Mem {
	var out [4][2]operand.Mem
	for li, h := range []int{8, 4, 2, 1} {
		for j := range 2 {
			w := make([]uint32, 16)
			for i := range w {
				w[i] = uint32((i/h)*2*h + i%h + j*h)
			}
			out[li][j] = Table(fmt.Sprintf("%s%d_%d", prefix, h, j), w)
		}
	}
	return out
}

// LoadTree loads the index pairs of TreeIndexes into Z16..Z23.
func LoadTree(idx [4][2]operand.Mem) {
	for li := range 4 {
		build.VMOVDQU32(idx[li][0], Z(16+2*li))
		build.VMOVDQU32(idx[li][1], Z(17+2*li))
	}
}

// Tree16 reduces Z0..Z15 with op (VPMAXUD, VMAXPS, ...; called as op(b, a,
// a) for a = op(a, b)) so that lane b of Z0 holds the reduction of Z(b)'s
// lanes. The index vectors are in Z16..Z23 (LoadTree); Z24 is scratch.
func Tree16(op func(...operand.Op)) {
	for li, s := 0, 1; li < 4; li, s = li+1, s*2 {
		for a := 0; a < 16; a += 2 * s {
			A, B := Z(a), Z(a+s)
			build.VMOVDQA64(A, reg.Z24)
			build.VPERMT2D(B, Z(16+2*li), reg.Z24)
			build.VPERMT2D(B, Z(17+2*li), A)
			op(reg.Z24, A, A)
		}
	}
}

// BlockMax512 leaves in Z(b), for each of the 16 blocks of block floats (16
// or 32) at base, the lane maxima of the block's |x| as bits; abs holds
// 0x7fffffff in every lane and Z24 is scratch.
func BlockMax512(base reg.GPPhysical, block int, abs operand.Op) {
	for b := range 16 {
		off := 4 * block * b
		build.VPANDD(operand.Mem{Base: base, Disp: off}, abs, Z(b))
		if block == 32 {
			build.VPANDD(operand.Mem{Base: base, Disp: off + 64}, abs, reg.Z24)
			build.VPMAXUD(reg.Z24, Z(b), Z(b))
		}
	}
}

// AbsMaxTree512 leaves in Z0 the |x| maxima (as bits) of the 16 blocks of
// block floats at base, in order: BlockMax512, then Tree16. It uses Z0..Z15,
// Z24 and the tree indexes in Z16..Z23.
func AbsMaxTree512(base reg.GPPhysical, block int, abs operand.Op) {
	BlockMax512(base, block, abs)
	Tree16(build.VPMAXUD)
}

// AbsMaxTree256 leaves in Y0 the |x| maxima (as bits) of the 8 blocks of
// block floats (16 or 32) at base, in order: per block the lane maxima in
// Y(b), then a tree of VPERM2I128, VPUNPCK[LH]QDQ and VSHUFPS pairs with
// VPMAXUD, and a VPERMD by perm (Perm8) that puts the maxima in order. abs
// holds 0x7fffffff in every lane; it uses Y0..Y10.
func AbsMaxTree256(base reg.GPPhysical, block int, abs, perm reg.VecPhysical) {
	for b := range 8 {
		off := 4 * block * b
		build.VPAND(operand.Mem{Base: base, Disp: off}, abs, Y(b))
		build.VPAND(operand.Mem{Base: base, Disp: off + 32}, abs, reg.Y8)
		if block == 32 {
			build.VPAND(operand.Mem{Base: base, Disp: off + 64}, abs, reg.Y9)
			build.VPAND(operand.Mem{Base: base, Disp: off + 96}, abs, reg.Y10)
			build.VPMAXUD(reg.Y10, reg.Y9, reg.Y9)
			build.VPMAXUD(reg.Y9, Y(b), Y(b))
		}
		build.VPMAXUD(reg.Y8, Y(b), Y(b))
	}
	// 128-bit halves: Yb = [block b ×4 | block b+1 ×4] for b = 0, 2, 4, 6.
	for b := 0; b < 8; b += 2 {
		build.VPERM2I128(operand.U8(0x20), Y(b+1), Y(b), reg.Y8)
		build.VPERM2I128(operand.U8(0x31), Y(b+1), Y(b), Y(b))
		build.VPMAXUD(reg.Y8, Y(b), Y(b))
	}
	// 64-bit pairs: Y0 = [0,0,2,2 | 1,1,3,3], Y4 = [4,4,6,6 | 5,5,7,7].
	for _, b := range []int{0, 4} {
		build.VPUNPCKLQDQ(Y(b+2), Y(b), reg.Y8)
		build.VPUNPCKHQDQ(Y(b+2), Y(b), Y(b))
		build.VPMAXUD(reg.Y8, Y(b), Y(b))
	}
	// Even/odd lanes: Y0 = [0,2,4,6 | 1,3,5,7], then VPERMD puts them in order.
	build.VSHUFPS(operand.U8(0x88), reg.Y4, reg.Y0, reg.Y8)
	build.VSHUFPS(operand.U8(0xdd), reg.Y4, reg.Y0, reg.Y0)
	build.VPMAXUD(reg.Y8, reg.Y0, reg.Y0)
	build.VPERMD(reg.Y0, perm, reg.Y0)
}

// Perm8 emits the dword order 0, 4, 1, 5, 2, 6, 3, 7, named name: the VPERMD
// of AbsMaxTree256, and the one that undoes the lane interleaving of
// VPACKSSDW and VPACKSSWB on four ymm registers.
func Perm8(name string) operand.Mem {
	return Table(name, []uint32{0, 4, 1, 5, 2, 6, 3, 7})
}

// HReduce reduces the 32-bit lanes of v (a zmm, ymm or xmm) with op (called
// as op(t, v, v) for v = op(v, t)) into every lane of v's xmm, with t (as
// wide) as scratch: the upper halves folded onto the lower ones, then the
// lanes of the xmm swapped in pairs of qwords and of dwords. fp selects the
// floating-point forms of the moves (VEXTRACTF64X4, VEXTRACTF128, VPERMILPS)
// for an op on floats, the integer ones (VEXTRACTI64X4, VEXTRACTI128, VPSHUFD)
// otherwise.
func HReduce(v, t reg.VecPhysical, op func(...operand.Op), fp bool) {
	ext256, ext128, shuf := build.VEXTRACTI64X4, build.VEXTRACTI128, build.VPSHUFD
	if fp {
		ext256, ext128, shuf = build.VEXTRACTF64X4, build.VEXTRACTF128, build.VPERMILPS
	}
	if v.Size() == 64 {
		ext256(operand.U8(1), v, t.AsY())
		op(t.AsY(), v.AsY(), v.AsY())
	}
	if v.Size() >= 32 {
		ext128(operand.U8(1), v.AsY(), t.AsX())
		op(t.AsX(), v.AsX(), v.AsX())
	}
	shuf(operand.U8(0x4e), v.AsX(), t.AsX())
	op(t.AsX(), v.AsX(), v.AsX())
	shuf(operand.U8(0xb1), v.AsX(), t.AsX())
	op(t.AsX(), v.AsX(), v.AsX())
}
