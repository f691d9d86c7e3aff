//go:build amd64 && !purego

package kernels

// The integer-group kernels on amd64: a chunk of groups at a time (a few
// thousand elements, so that the second pass reads from the L1 or L2 cache),
// the groups' amaxes (or ranges) from the reduction kernels, their scales and
// zero points in Go with the reference's functions, then the elements through
// the assembly of the active tier for groups whose length is a multiple of
// 16, and the Go reference for the rest.

// chunkElems is about how many elements a chunk holds; chunkGroups bounds
// its groups. The quantizers' element kernels prefetch one chunk (8 KiB of
// float32) ahead into the level-2 cache (PREFETCHT1): with 4096-element
// chunks prefetched into level 1 (16 KiB ahead) the software prefetches
// held the level-1 miss buffers and symmetric int8 groups of 32 streamed
// from DRAM at about 0.85 of MemRead; with 2048 and level 2 at about 0.96.
// Smaller chunks cost more Go work per element (1024 leaves the groups of
// 128 too few for the 16-at-a-time scale kernel).
const (
	chunkElems  = 2048
	chunkGroups = 512
)

// groupRuns calls fn for each chunk of the groups of n elements in rows of
// cols: the element range lo..hi, its first group's number, and the length
// of its groups (all but possibly the last, which ends a row, have the
// length group). A chunk holds about elems elements (chunkElems for the
// quantizers, searchChunk for the scale search), at most chunkGroups
// groups and at least one.
func groupRuns(n, cols, group, elems int, fn func(lo, hi, k0 int)) {
	if n == 0 {
		return
	}
	per := max(1, min(chunkGroups, elems/group))
	k := 0
	seg := cols
	if cols%group == 0 {
		seg = n // whole groups everywhere: the rows run together
	}
	for s := 0; s < n; s += seg {
		end := s + seg
		for lo := s; lo < end; lo += per * group {
			hi := min(lo+per*group, end)
			fn(lo, hi, k)
			k += (hi - lo + group - 1) / group
		}
	}
}

// runsOf splits the groups in lo..hi (numbered from k0) between the
// assembly and the Go code: whole(lo, hi, k, g) for a stretch of groups of g
// elements, g a multiple of 16, that the assembly takes, starting on a byte
// for 4-bit codes, and part(lo, hi, k) for the rest of group k.
func runsOf(lo, hi, k0, group, bits int, whole func(lo, hi, k, g int), part func(lo, hi, k int)) {
	if group%16 == 0 && (bits == 8 || lo%2 == 0) {
		full := (hi - lo) / group
		if full > 0 {
			whole(lo, lo+full*group, k0, group)
		}
		lo, k0 = lo+full*group, k0+full
	}
	for ; lo < hi; lo, k0 = lo+group, k0+1 {
		end := min(lo+group, hi)
		if m := (end - lo) &^ 15; m >= 64 && (bits == 8 || lo%2 == 0) {
			// A long group (a channel, a row's last group) whose length
			// is not a multiple of 16: its whole vectors, then the tail.
			whole(lo, lo+m, k0, m)
			part(lo+m, end, k0)
			continue
		}
		part(lo, end, k0)
	}
}

func quantIntSym(codes, scales []byte, src []float32, g IntGroups) {
	if active == tierGeneric {
		quantIntSymGo(codes, scales, src, g)
		clearLastNibble(codes, len(src), g.Bits)
		return
	}
	cols, group, _ := g.geometry("quantizeIntSym", len(src))
	qmax := qmaxSym(g.Bits)
	var amax [chunkGroups]uint32
	var div [chunkGroups]float32
	groupRuns(len(src), cols, group, chunkElems, func(lo, hi, k0 int) {
		nb := (hi - lo + group - 1) / group
		absMaxBlocks(amax[:nb], src[lo:hi], group)
		for j := symScales(scales[k0*g.Scale.Bytes():], div[:nb], amax[:nb], qmax, g.Scale); j < nb; j++ {
			code, d := symScale(g.Scale, amax[j], qmax)
			g.Scale.put(scales, k0+j, code)
			div[j] = d
		}
		runsOf(lo, hi, k0, group, g.Bits, func(a, b, k, gl int) {
			c := codes[g.codeBytes(a):]
			d := div[k-k0 : k-k0+(b-a)/gl]
			switch {
			case g.Bits == 8 && active == tierAVX512:
				quantSym8AVX512(c, src[a:b], d, gl, qmax)
			case g.Bits == 8:
				quantSym8AVX2(c, src[a:b], d, gl, qmax)
			case active == tierAVX512:
				quantSym4AVX512(c, src[a:b], d, gl, qmax)
			default:
				quantSym4AVX2(c, src[a:b], d, gl, qmax)
			}
		}, func(a, b, k int) {
			quantSymGroup(codes, src[a:b], a, div[k-k0], qmax, g.Bits)
		})
	})
	clearLastNibble(codes, len(src), g.Bits)
}

func dequantIntSym(dst []float32, codes, scales []byte, g IntGroups) {
	if active == tierGeneric {
		dequantIntSymGo(dst, codes, scales, g)
		return
	}
	cols, group, _ := g.geometry("dequantizeIntSym", len(dst))
	var mul [chunkGroups]float32
	groupRuns(len(dst), cols, group, chunkElems, func(lo, hi, k0 int) {
		nb := (hi - lo + group - 1) / group
		for j := range nb {
			mul[j] = g.Scale.decodeScale(g.Scale.get(scales, k0+j))
		}
		runsOf(lo, hi, k0, group, g.Bits, func(a, b, k, gl int) {
			c := codes[g.codeBytes(a):]
			m := mul[k-k0 : k-k0+(b-a)/gl]
			switch {
			case g.Bits == 8 && active == tierAVX512:
				dequantSym8AVX512(dst[a:b], c, m, gl)
			case g.Bits == 8:
				dequantSym8AVX2(dst[a:b], c, m, gl)
			case active == tierAVX512:
				dequantSym4AVX512(dst[a:b], c, m, gl)
			default:
				dequantSym4AVX2(dst[a:b], c, m, gl)
			}
		}, func(a, b, k int) {
			m := mul[k-k0]
			for i := a; i < b; i++ {
				dst[i] = float32(getCode(codes, i, g.Bits, true)) * m
			}
		})
	})
}

func quantIntAsym(codes, scales, zeros []byte, src []float32, g IntGroups) {
	if active == tierGeneric {
		quantIntAsymGo(codes, scales, zeros, src, g)
		clearLastNibble(codes, len(src), g.Bits)
		return
	}
	cols, group, _ := g.geometry("quantizeIntAsym", len(src))
	qmax := int32(1)<<g.Bits - 1
	var lo, hi [chunkGroups]float32
	var amax [chunkGroups]uint32
	var div [chunkGroups]float32
	var zp [chunkGroups]int32
	groupRuns(len(src), cols, group, chunkElems, func(a, b, k0 int) {
		nb := (b - a + group - 1) / group
		rangeBlocks(lo[:nb], hi[:nb], amax[:nb], src[a:b], group)
		for j := range nb {
			code, d, z := g.asymScale(lo[j], hi[j], amax[j] >= 0x7f800000)
			g.Scale.put(scales, k0+j, code)
			zeros[k0+j] = byte(z)
			div[j], zp[j] = d, z
		}
		runsOf(a, b, k0, group, g.Bits, func(a, b, k, gl int) {
			c := codes[g.codeBytes(a):]
			j0, j1 := k-k0, k-k0+(b-a)/gl
			switch {
			case g.Bits == 8 && active == tierAVX512:
				quantAsym8AVX512(c, src[a:b], div[j0:j1], zp[j0:j1], gl, qmax)
			case g.Bits == 8:
				quantAsym8AVX2(c, src[a:b], div[j0:j1], zp[j0:j1], gl, qmax)
			case active == tierAVX512:
				quantAsym4AVX512(c, src[a:b], div[j0:j1], zp[j0:j1], gl, qmax)
			default:
				quantAsym4AVX2(c, src[a:b], div[j0:j1], zp[j0:j1], gl, qmax)
			}
		}, func(a, b, k int) {
			quantAsymGroup(codes, src[a:b], a, div[k-k0], zp[k-k0], qmax, g.Bits)
		})
	})
	clearLastNibble(codes, len(src), g.Bits)
}

func dequantIntAsym(dst []float32, codes, scales, zeros []byte, g IntGroups) {
	if active == tierGeneric {
		dequantIntAsymGo(dst, codes, scales, zeros, g)
		return
	}
	cols, group, _ := g.geometry("dequantizeIntAsym", len(dst))
	var mul, zero [chunkGroups]float32
	groupRuns(len(dst), cols, group, chunkElems, func(lo, hi, k0 int) {
		nb := (hi - lo + group - 1) / group
		for j := range nb {
			mul[j] = g.Scale.decodeScale(g.Scale.get(scales, k0+j))
			zero[j] = g.zeroOf(zeros[k0+j])
		}
		runsOf(lo, hi, k0, group, g.Bits, func(a, b, k, gl int) {
			c := codes[g.codeBytes(a):]
			j0, j1 := k-k0, k-k0+(b-a)/gl
			switch {
			case g.Bits == 8 && active == tierAVX512:
				dequantAsym8AVX512(dst[a:b], c, mul[j0:j1], zero[j0:j1], gl)
			case g.Bits == 8:
				dequantAsym8AVX2(dst[a:b], c, mul[j0:j1], zero[j0:j1], gl)
			case active == tierAVX512:
				dequantAsym4AVX512(dst[a:b], c, mul[j0:j1], zero[j0:j1], gl)
			default:
				dequantAsym4AVX2(dst[a:b], c, mul[j0:j1], zero[j0:j1], gl)
			}
		}, func(a, b, k int) {
			m, z := mul[k-k0], zero[k-k0]
			for i := a; i < b; i++ {
				dst[i] = (float32(getCode(codes, i, g.Bits, false)) - z) * m
			}
		})
	})
}

// rangeBlocks stores, for each block of src (the last may be short), the
// smallest and largest non-NaN value together with 0, and the largest
// magnitude as bits (which tells whether the block holds a NaN or an
// infinity). Whole blocks of a multiple of 16 go through the assembly.
func rangeBlocks(lo, hi []float32, amax []uint32, src []float32, block int) {
	k := 0
	if block%16 == 0 {
		k = len(src) / block
		if active == tierAVX512 {
			rangeBlocksAVX512(lo[:k], hi[:k], amax[:k], src[:k*block], block)
		} else {
			rangeBlocksAVX2(lo[:k], hi[:k], amax[:k], src[:k*block], block)
		}
	}
	for ; k < len(amax); k++ {
		v := src[k*block : min((k+1)*block, len(src))]
		amax[k] = absMaxBitsGo(v)
		lo[k], hi[k], _ = rangeOf(v)
	}
}

// symScales stores the scale codes and divisors of the first groups of amax
// (a whole number of vectors) through the assembly of the active tier, and
// returns how many it did.
func symScales(scales []byte, div []float32, amax []uint32, qmax float32, f ScaleFormat) int {
	var m int
	switch active {
	case tierAVX512:
		m = len(amax) &^ 15
	case tierAVX2:
		m = len(amax) &^ 7
	}
	if m == 0 {
		return 0
	}
	switch {
	case active == tierAVX512 && f == ScaleFloat16:
		symScalesF16AVX512(scales, div, amax[:m], qmax)
	case active == tierAVX512:
		symScalesF32AVX512(scales, div, amax[:m], qmax)
	case f == ScaleFloat16:
		symScalesF16AVX2(scales, div, amax[:m], qmax)
	default:
		symScalesF32AVX2(scales, div, amax[:m], qmax)
	}
	return m
}
