//go:build amd64 && !purego

package kernels

import (
	"math/bits"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// superAVX2 reports whether the AVX2 tier may run the super-block kernels,
// which need FMA too.
func superAVX2() bool { return active >= tierAVX2 && cpu.X86.HasFMA }

// The dispatchers of the search passes and code kernels: the AVX-512
// kernels on that tier (a pass computes all 16 lanes; the callers read the
// first k), the Go references otherwise. The passes keep their candidates
// in the lanes of one register, which AVX2 would split in two: they have no
// AVX2 kernels.

func affineFit(x, w []float32, k int, t, o *lanes, st *affineStats, d, m, e, sqq, sq *lanes) {
	if active >= tierAVX512 {
		kqAffineFitAVX512(x, w[:len(x)], t, o, (*[5]float32)(unsafe.Pointer(st)), d, m, e, sqq, sq)
		return
	}
	affineFitGo(x, w, k, t, o, st, d, m, e, sqq, sq)
}

func affineErrs(x, w []float32, k int, d, m, id *lanes, n float32, e *lanes) {
	if active >= tierAVX512 {
		kqAffineErrsAVX512(x, w[:len(x)], d, m, id, n, e)
		return
	}
	affineErrsGo(x, w, k, d, m, id, n, e)
}

func symFit(x, w []float32, k int, t *lanes, neg, pos float32, d, score, sqq *lanes) {
	if active >= tierAVX512 {
		kqSymFitAVX512(x, w[:len(x)], t, neg, pos, d, score, sqq)
		return
	}
	symFitGo(x, w, k, t, neg, pos, d, score, sqq)
}

func symErrs(x, w []float32, k int, d, id *lanes, neg, pos float32, e *lanes) {
	if active >= tierAVX512 {
		kqSymErrsAVX512(x, w[:len(x)], d, id, neg, pos, e)
		return
	}
	symErrsGo(x, w, k, d, id, neg, pos, e)
}

func tableFit(x, w []float32, k int, t *lanes, tab *table, d, score, sqq *lanes) {
	if active >= tierAVX512 {
		kqTableFitAVX512(x, w[:len(x)], t, &tab.v, &tab.mid, d, score, sqq)
		return
	}
	tableFitGo(x, w, k, t, tab, d, score, sqq)
}

func tableErrs(x, w []float32, k int, d, id *lanes, tab *table, e *lanes) {
	if active >= tierAVX512 {
		kqTableErrsAVX512(x, w[:len(x)], d, id, &tab.v, &tab.mid, e)
		return
	}
	tableErrsGo(x, w, k, d, id, tab, e)
}

// subShift returns log2(sub/16) for sub-blocks of sub elements (16, 32,
// 256), and false when the kernels do not take them.
func subShift(n, nsub int) (uint64, bool) {
	if nsub == 0 || n%nsub != 0 || n%16 != 0 {
		return 0, false
	}
	sub := n / nsub
	if sub < 16 || sub&(sub-1) != 0 {
		return 0, false
	}
	return uint64(bits.TrailingZeros(uint(sub / 16))), true
}

func affineCodes(x, mi []float32, n float32, codes []uint8) {
	if sh, ok := subShift(len(x), len(mi)/2); ok && active >= tierAVX512 {
		kqAffineCodesAVX512(x, mi, sh, n, codes[:len(x)])
		return
	}
	if sh, ok := subShift(len(x), len(mi)/2); ok && active >= tierAVX2 {
		kqAffineCodesAVX2(x, mi, sh, n, codes[:len(x)])
		return
	}
	affineCodesGo(x, mi, n, codes)
}

func symCodes(x, ids []float32, neg, pos float32, codes []uint8) {
	if sh, ok := subShift(len(x), len(ids)); ok && active >= tierAVX512 {
		kqSymCodesAVX512(x, ids, sh, neg, pos, codes[:len(x)])
		return
	}
	if sh, ok := subShift(len(x), len(ids)); ok && active >= tierAVX2 {
		kqSymCodesAVX2(x, ids, sh, neg, pos, codes[:len(x)])
		return
	}
	symCodesGo(x, ids, neg, pos, codes)
}

func tableCodes(x, ids []float32, tab *table, codes []uint8) {
	if sh, ok := subShift(len(x), len(ids)); ok && active >= tierAVX512 {
		kqTableCodesAVX512(x, ids, sh, &tab.v, &tab.mid, codes[:len(x)])
		return
	}
	if sh, ok := subShift(len(x), len(ids)); ok && active >= tierAVX2 {
		kqTableCodesAVX2(x, ids, sh, &tab.v, &tab.mid, codes[:len(x)])
		return
	}
	tableCodesGo(x, ids, tab, codes)
}

func affineFit0(x, w []float32, k int, nd, shift *lanes, st *affineStats, lohi *[2]float32, d, m, e, sqq, sq *lanes) {
	if active >= tierAVX512 && (len(x) == 16 || len(x) == 32) {
		kqAffineFit0AVX512(x, w[:len(x)], nd, shift, (*[5]float32)(unsafe.Pointer(st)), lohi, d, m, e, sqq, sq)
		return
	}
	affineFit0Go(x, w, k, nd, shift, st, lohi, d, m, e, sqq, sq)
}

func symFit0(x, w []float32, k int, numer *lanes, neg, pos float32, d, score, sqq *lanes, stats *[2]float32) {
	if active >= tierAVX512 && (len(x) == 16 || len(x) == 32) {
		kqSymFit0AVX512(x, w[:len(x)], numer, neg, pos, d, score, sqq, stats)
		return
	}
	symFit0Go(x, w, k, numer, neg, pos, d, score, sqq, stats)
}

func tableFit0(x, w []float32, k int, numer *lanes, tab *table, d, score, sqq *lanes, stats *[2]float32) {
	if active >= tierAVX512 && (len(x) == 16 || len(x) == 32) {
		kqTableFit0AVX512(x, w[:len(x)], numer, &tab.v, &tab.mid, d, score, sqq, stats)
		return
	}
	tableFit0Go(x, w, k, numer, tab, d, score, sqq, stats)
}

func symSuper16(x, w []float32, s *symmetric, c *superCfg, r *superRes, tr *superScratch) {
	if active >= tierAVX512 && s.refine == 0 {
		var wp *[qkk]float32
		if !isUnitWeights(w) {
			wp = (*[qkk]float32)(w)
		}
		kqSymSuper16AVX512((*[qkk]float32)(x), wp, (*[1920]float32)(tr),
			(*[56]float32)(unsafe.Pointer(c)), (*[36]float32)(unsafe.Pointer(r)))
		return
	}
	if superAVX2() && s.refine == 0 && c.nlev <= 8 {
		var wp *[qkk]float32
		if !isUnitWeights(w) {
			wp = (*[qkk]float32)(w)
		}
		kqSymSuper16AVX2((*[qkk]float32)(x), wp, (*[1920]float32)(tr),
			(*[56]float32)(unsafe.Pointer(c)), (*[36]float32)(unsafe.Pointer(r)))
		return
	}
	symSuper16Go(x, w, s, c, r)
}

func affineSuper(x, w []float32, a *affine, sub int, c *superCfg, r *affineRes, tr *superScratch) {
	if active >= tierAVX512 && a.refine == 0 && a.minBelow && (sub == 16 || sub == 32 && len(a.cands)%2 == 0 && len(a.picks)%2 == 0) {
		var wp *[qkk]float32
		if !isUnitWeights(w) {
			wp = (*[qkk]float32)(w)
		}
		// Direct calls: through a func value r would escape (a heap
		// allocation in every caller).
		cp, rp := (*[104]float32)(unsafe.Pointer(c)), (*[68]float32)(unsafe.Pointer(r))
		if sub == 32 {
			kqAffineSuper8AVX512((*[qkk]float32)(x), wp, (*[1920]float32)(tr), cp, rp)
		} else {
			kqAffineSuper16AVX512((*[qkk]float32)(x), wp, (*[1920]float32)(tr), cp, rp)
		}
		return
	}
	if superAVX2() && a.refine == 0 && a.minBelow && (sub == 16 || sub == 32) && c.nlev <= 8 {
		var wp *[qkk]float32
		if !isUnitWeights(w) {
			wp = (*[qkk]float32)(w)
		}
		// Direct calls: through a func value r would escape (a heap
		// allocation in every caller).
		cp, rp := (*[104]float32)(unsafe.Pointer(c)), (*[68]float32)(unsafe.Pointer(r))
		if sub == 32 {
			kqAffineSuper8AVX2((*[qkk]float32)(x), wp, (*[1920]float32)(tr), cp, rp)
		} else {
			kqAffineSuper16AVX2((*[qkk]float32)(x), wp, (*[1920]float32)(tr), cp, rp)
		}
		return
	}
	affineSuperGo(x, w, a, sub, c, r)
}

func tableSuper8(x, w []float32, t *table, c *superCfg, r *superRes, tr *superScratch) {
	if active >= tierAVX512 && t.refine == 0 && len(t.numer)%2 == 0 {
		var wp *[qkk]float32
		if !isUnitWeights(w) {
			wp = (*[qkk]float32)(w)
		}
		kqTableSuper8AVX512((*[qkk]float32)(x), wp, (*[1920]float32)(tr),
			(*[88]float32)(unsafe.Pointer(c)), (*[36]float32)(unsafe.Pointer(r)))
		return
	}
	if superAVX2() && t.refine == 0 && c.nlev <= 8 {
		var wp *[qkk]float32
		if !isUnitWeights(w) {
			wp = (*[qkk]float32)(w)
		}
		kqTableSuper8AVX2((*[qkk]float32)(x), wp, (*[1920]float32)(tr),
			(*[88]float32)(unsafe.Pointer(c)), (*[36]float32)(unsafe.Pointer(r)))
		return
	}
	tableSuper8Go(x, w, t, c, r)
}

func tableBlocks8(x, w []float32, t *table, c *superCfg, r *nlRes, tr *superScratch) {
	if active >= tierAVX512 && t.refine == 1 && len(t.local) <= 7 && len(t.numer)%2 == 0 {
		var wp *[qkk]float32
		if !isUnitWeights(w) {
			wp = (*[qkk]float32)(w)
		}
		kqTableBlocks8AVX512((*[qkk]float32)(x), wp, (*[1920]float32)(tr),
			(*[88]float32)(unsafe.Pointer(c)), (*[48]float32)(unsafe.Pointer(r)))
		return
	}
	if superAVX2() && t.refine == 1 && len(t.local) == 7 {
		var wp *[qkk]float32
		if !isUnitWeights(w) {
			wp = (*[qkk]float32)(w)
		}
		kqTableBlocks8AVX2((*[qkk]float32)(x), wp, (*[1920]float32)(tr),
			(*[88]float32)(unsafe.Pointer(c)), (*[48]float32)(unsafe.Pointer(r)))
		return
	}
	tableBlocks8Go(x, w, t, r)
}

func q3kPack(y *[q3_KBlockBytes]byte, x *[qkk]float32, r *superRes, q *[qkk]uint8, finite bool) {
	if active >= tierAVX512 {
		if finite {
			kqQ3KPackFiniteAVX512(y, x, (*[36]float32)(unsafe.Pointer(r)), q)
			return
		}
		kqQ3KPackAVX512(y, x, (*[36]float32)(unsafe.Pointer(r)), q)
		return
	}
	q3kPackWith(y, x, r, q, symCodes)
}

// q4kNibbles is q4kNibblesGo; finite tells that x holds no NaN (the
// AVX-512 kernel then computes the codes and their packing in one call).
func q4kNibbles(y *[128]byte, x *[qkk]float32, mi *[16]float32, q *[qkk]uint8, finite bool) {
	if finite && active >= tierAVX512 {
		kqQ4KNibblesAVX512(y, x, mi)
		return
	}
	affineCodes(x[:], mi[:], 15, q[:])
	packKNibbles(y[:], q)
}
