package kernels

import (
	"fmt"
	"math"
)

// Lookup-table (codebook) number formats: a code stands for one entry of a
// table of float32 values. Decoding is a table lookup; encoding finds the
// entry a value falls to by comparing it with the table's bounds, the
// smallest value that goes to each entry above the first (the caller derives
// them from midpoints and a tie rule, or from a library's thresholds).

// MaxLUTEntries is the largest number of distinct entries a LUTEncoder
// distinguishes (codes are bytes).
const MaxLUTEntries = 256

// LUTEncoder maps float32 values to the codes of a lookup table. Build it
// with NewLUTEncoder; it is immutable and safe for concurrent use.
type LUTEncoder struct {
	// keys are the order keys (lutKey) of the caller's bounds, padded to
	// 2^steps − 1 entries with a key above every float's: the start of
	// k16 or k256.
	keys []int64
	k16  *[15]int64 // keys as an array when steps is 4 (16 entries)
	// k256 holds the keys padded to 256 when steps is above 4, so that a
	// search indexes it without bounds checks.
	k256 *[256]int64
	// codes holds the code of each entry index, padded to 2^steps.
	codes   []uint8
	steps   uint
	signBit uint8 // 0: plain table; else the sign bit of a sign-magnitude table
	negZero bool  // −0 takes the sign bit (sign-magnitude tables)
	nan     uint8 // the code of a NaN input
	// vec is the search as the vector encoders take it, or nil for more
	// than lutVecEntries entries.
	vec *lutSearch
}

// lutVecEntries is the most entries the vector encoders search; the
// vector selection searches up to MaxLUTEntries cells.
const lutVecEntries = 64

// lutSearch is a LUTEncoder as the vector kernels take it: the bounds' keys
// as int32 (padded with lutPadKey to 2^levels − 1 of them), arranged level by
// level of the binary search, then the codes and broadcast constants. The
// assembly reads it at the word offsets below.
type lutSearch struct {
	words  [lutWords]uint32
	levels int // 4 (up to 16 entries), 6 (up to 64) or 8 (up to 256)
}

// Word offsets in lutSearch.words (the generator in _asm/lut uses the same).
const (
	// lutLevelOff + 32·l + j holds node j of level l < 6: the key the
	// value's key is compared with when the first l steps have chosen j.
	// Levels 6 and 7 of an eight-level search are at lutLevel6Off and
	// lutLevel7Off.
	lutLevelOff = 0
	// lutCodesOff holds the code of each entry index, 64 bytes (16 words).
	lutCodesOff = 192
	// lutPlainOff holds all ones for a plain table, 0 for a sign-magnitude
	// one (the key of a negative value is negated only in a plain table).
	lutPlainOff = 208
	// lutNegOff holds the mask a sign-magnitude value must have a bit of
	// (besides the sign) to take the sign bit: 0x7fffffff (x < 0), or
	// 0xffffffff when −0 takes it too.
	lutNegOff = 209
	// lutSignOff holds the sign bit in every byte, lutNaNOff the NaN code.
	lutSignOff = 210
	lutNaNOff  = 211
	// lutFirstOff says how a search of six or more levels runs: 0 from
	// level 0 over six levels; 2 from level 2 (up to 16 entries: the first
	// two levels compare with padding only); 8 over eight levels.
	lutFirstOff  = 212
	lutLevel6Off = 216
	lutLevel7Off = 280
	lutWords     = 408
)

// lutPadKey pads the keys of the vector search: above every non-NaN key.
const lutPadKey = math.MaxInt32

// newLUTSearch builds the vector search of len(codes) entries over keys,
// the keys of their bounds, of at least minLevels levels: 4 (up to 16
// entries), 6 (up to 64) or 8 (up to 256). With minLevels 4 (the encoders)
// it returns nil past 64 entries.
func newLUTSearch(keys []int64, codes []uint8, signBit uint8, negZero bool, nan uint8, minLevels int) *lutSearch {
	n := len(codes)
	if n > lutVecEntries && minLevels < 6 || n > MaxLUTEntries {
		return nil
	}
	v := &lutSearch{levels: minLevels}
	switch {
	case n > 64:
		v.levels = 8
	case n > 16:
		v.levels = max(v.levels, 6)
	}
	padded := make([]int32, 1<<v.levels-1)
	for i := range padded {
		padded[i] = lutPadKey
		if i < n-1 {
			padded[i] = int32(keys[i])
		}
	}
	for l := range v.levels {
		step := 1 << (v.levels - 1 - l)
		at := lutLevelOff + 32*l
		switch l {
		case 6:
			at = lutLevel6Off
		case 7:
			at = lutLevel7Off
		}
		for j := range 1 << l {
			v.words[at+j] = uint32(padded[(2*j+1)*step-1])
		}
	}
	for i := range 64 {
		c := codes[min(i, n-1)]
		v.words[lutCodesOff+i/4] |= uint32(c) << (8 * (i % 4))
	}
	if signBit == 0 {
		v.words[lutPlainOff] = 0xffffffff
	}
	v.words[lutNegOff] = 0x7fffffff
	if negZero {
		v.words[lutNegOff] = 0xffffffff
	}
	v.words[lutSignOff] = uint32(signBit) * 0x01010101
	v.words[lutNaNOff] = uint32(nan) * 0x01010101
	switch {
	case v.levels == 8:
		v.words[lutFirstOff] = 8
	case v.levels == 6 && n <= 16:
		v.words[lutFirstOff] = 2
	}
	return v
}

// NewLUTEncoder returns an encoder over len(bounds)+1 entries, numbered 0…
// in ascending order: a value x falls to entry i, the number of bounds ≤ x,
// and is encoded as codes[i]. bounds must be strictly ascending and finite,
// or +Inf last; codes must have len(bounds)+1 ≤ MaxLUTEntries entries.
//
// With signBit 0 the table is plain: x is compared as it is. Otherwise it is
// sign-magnitude: |x| is compared (bounds then are magnitudes), and signBit
// is added to the code of a negative x — of −0 too when negZero is set, as
// IEEE sign bits go; with negZero false only x < 0 counts, as bitsandbytes'
// FP4 tests it. A NaN is encoded as nanCode in both cases.
//
// Malformed arguments are a programming error and panic.
func NewLUTEncoder(bounds []float32, codes []uint8, signBit uint8, negZero bool, nanCode uint8) *LUTEncoder {
	if len(codes) != len(bounds)+1 || len(codes) > MaxLUTEntries {
		panic(fmt.Sprintf("kernels: NewLUTEncoder: %d codes for %d bounds (want bounds+1 ≤ %d)", len(codes), len(bounds), MaxLUTEntries))
	}
	for i, b := range bounds {
		if b != b || (i > 0 && !(bounds[i-1] < b)) || (math.IsInf(float64(b), 0) && (b < 0 || i != len(bounds)-1)) {
			panic(fmt.Sprintf("kernels: NewLUTEncoder: bounds %v are not strictly ascending and finite", bounds))
		}
	}
	steps := uint(4) // up to 16 entries take the unrolled 4-step search
	for 1<<steps < len(codes) {
		steps++
	}
	e := &LUTEncoder{steps: steps, signBit: signBit, negZero: negZero, nan: nanCode}
	var keys []int64
	if steps == 4 {
		e.k16 = new([15]int64)
		keys = e.k16[:]
	} else {
		e.k256 = new([256]int64)
		keys = e.k256[:]
	}
	for i := range keys {
		keys[i] = math.MaxInt32 + 1
		if i < len(bounds) {
			keys[i] = lutKey(bounds[i])
		}
	}
	e.keys = keys[:1<<steps-1]
	e.codes = make([]uint8, 1<<steps)
	copy(e.codes, codes)
	for i := len(codes); i < len(e.codes); i++ {
		e.codes[i] = codes[len(codes)-1] // never reached: NaN bounds stop the search
	}
	e.vec = newLUTSearch(e.keys, codes, signBit, negZero, nanCode, 4)
	return e
}

// lutKey maps a non-NaN float32 to an integer in the same order, with −0
// and +0 equal: its bits for a positive sign, minus its magnitude bits for a
// negative one.
func lutKey(x float32) int64 {
	b := math.Float32bits(x)
	neg := int64(int32(b) >> 31) // all ones for a negative sign, else 0
	return (int64(b&0x7fffffff) ^ neg) - neg
}

// indexKey returns the number of bounds whose key is ≤ k: a branch-free
// binary search over the padded bounds' keys.
func (e *LUTEncoder) indexKey(k int64) int {
	if t := e.k16; t != nil {
		return search16(t, k)
	}
	t := e.k256
	i := 0
	for s := 1 << e.steps >> 1; s > 0; s >>= 1 {
		// (key − k − 1) >> 63 is −1 (all ones) when key ≤ k, else 0.
		i += s & int((t[(i+s-1)&255]-k-1)>>63)
	}
	return i
}

// search16 is the search of indexKey unrolled for 16 entries; the masks
// keep every index below 15.
func search16(t *[15]int64, k int64) int {
	i := 8 & int((t[7]-k-1)>>63)
	i += 4 & int((t[(i+3)&11]-k-1)>>63)
	i += 2 & int((t[(i+1)&13]-k-1)>>63)
	i += 1 & int((t[i&14]-k-1)>>63)
	return i
}

// Encode returns the code of x.
func (e *LUTEncoder) Encode(x float32) uint8 {
	if x != x {
		return e.nan
	}
	if e.signBit == 0 {
		return e.codes[e.indexKey(lutKey(x))]
	}
	b := math.Float32bits(x)
	c := e.codes[e.indexKey(lutKey(math.Float32frombits(b&0x7fffffff)))]
	if b>>31 != 0 && (e.negZero || x < 0) {
		c |= e.signBit
	}
	return c
}

// EncodeSlice writes the code of src[i] to dst[i]; dst must be at least as
// long as src.
func (e *LUTEncoder) EncodeSlice(dst []uint8, src []float32) {
	e.EncodeScaled(dst, src, 1)
}

// EncodeScaled writes the code of the float32 product src[i]·mul to dst[i];
// dst must be at least as long as src.
func (e *LUTEncoder) EncodeScaled(dst []uint8, src []float32, mul float32) {
	muls := [1]float32{mul}
	lutEncodeBlocks(e, dst[:len(src)], src, max(len(src), 1), muls[:])
}

// EncodeBlocks writes the code of the float32 product src[i]·muls[i/block]
// to dst[i]: src is a run of blocks of block values (the last may be
// shorter), each with its own multiplier (the reciprocal of its scale). dst
// must be at least as long as src and muls must hold a multiplier per block.
// It panics on a block below 1 or short slices.
func (e *LUTEncoder) EncodeBlocks(dst []uint8, src []float32, block int, muls []float32) {
	if block < 1 || len(dst) < len(src) || len(muls) < (len(src)+block-1)/block {
		panic(fmt.Sprintf("kernels: LUTEncoder.EncodeBlocks: %d codes and %d multipliers for %d values in blocks of %d", len(dst), len(muls), len(src), block))
	}
	lutEncodeBlocks(e, dst[:len(src)], src, block, muls)
}

// lutEncodeBlocksGo is the reference of EncodeBlocks (len(dst) = len(src)).
func lutEncodeBlocksGo(e *LUTEncoder, dst []uint8, src []float32, block int, muls []float32) {
	for b, lo := 0, 0; lo < len(src); b, lo = b+1, lo+block {
		hi := min(lo+block, len(src))
		e.encodeGo(dst[lo:hi], src[lo:hi], muls[b])
	}
}

// encodeGo is the reference of EncodeScaled (len(dst) = len(src)): Encode
// of each product, inline, its search unrolled for 16 entries.
func (e *LUTEncoder) encodeGo(dst []uint8, src []float32, mul float32) {
	if e.k16 != nil {
		lutEncode16(dst, src, mul, e.k16, (*[16]uint8)(e.codes), e.signBit, e.negZero, e.nan)
		return
	}
	keys, codes, steps := e.keys, e.codes, e.steps
	for i, x := range src {
		y := x * mul
		if y != y {
			dst[i] = e.nan
			continue
		}
		b := math.Float32bits(y)
		m := b
		if e.signBit != 0 {
			m &= 0x7fffffff
		}
		k := lutKey(math.Float32frombits(m))
		j := 0 // indexKey(k), inline: a call per value costs a fifth
		for s := 1 << steps >> 1; s > 0; s >>= 1 {
			j += s & int((keys[j+s-1]-k-1)>>63)
		}
		c := codes[j]
		if e.signBit != 0 && b>>31 != 0 && (e.negZero || y < 0) {
			c |= e.signBit
		}
		dst[i] = c
	}
}

// lutEncode16 is EncodeScaled for 16 entries, the search unrolled.
func lutEncode16(dst []uint8, src []float32, mul float32, t *[15]int64, codes *[16]uint8, signBit uint8, negZero bool, nan uint8) {
	var absMask uint32 = 0xffffffff
	if signBit != 0 {
		absMask = 0x7fffffff
	}
	for i, x := range src {
		y := x * mul
		if y != y {
			dst[i] = nan
			continue
		}
		b := math.Float32bits(y)
		m := b & absMask
		c := codes[search16(t, lutKey(math.Float32frombits(m)))&15]
		if signBit != 0 && b>>31 != 0 && (negZero || y < 0) {
			c |= signBit
		}
		dst[i] = c
	}
}

// Entries returns the number of entries (len(bounds)+1 of NewLUTEncoder).
func (e *LUTEncoder) Entries() int {
	n := 1
	for _, k := range e.keys {
		if k <= math.MaxInt32 {
			n++
		}
	}
	return n
}

// LUTDecode writes lut[src[i]] to dst[i]; dst must be at least as long as
// src.
func LUTDecode(dst []float32, src []uint8, lut *[256]float32) {
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = lut[c]
	}
}

// LUTDecodeScaled writes the float32 product lut[src[i]]·mul to dst[i]; dst
// must be at least as long as src.
func LUTDecodeScaled(dst []float32, src []uint8, lut *[256]float32, mul float32) {
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = lut[c] * mul
	}
}

// LUTDecodeGroups writes the float32 product of a table entry and a scale
// to dst[i], with a table per group and a scale per block: the tables of
// entries each (a power of two, 1 to 256) lie one after another in luts,
// src is a run of groups of group codes, group g decoded through table t =
// meta[g] mod len(luts)/entries, and a run of blocks of block codes (a
// multiple of group; the last group and block may be shorter), each with
// its own scale:
//
//	dst[i] = luts[entries·t + int(src[i])&(entries−1)] · scales[i/block]
//
// len(luts)/entries must be a power of two (1 to 256), meta must hold a field
// per group and scales a scale per block. It panics on malformed arguments.
func LUTDecodeGroups(dst []float32, src, meta []uint8, group, block, entries int, luts, scales []float32) {
	nt := 0
	if entries > 0 {
		nt = len(luts) / entries
	}
	if group < 1 || block < 1 || block%group != 0 || entries < 1 || entries > MaxLUTEntries || entries&(entries-1) != 0 ||
		len(luts) != nt*entries || nt < 1 || nt > maxLUTTables || nt&(nt-1) != 0 ||
		len(dst) < len(src) || len(meta) < (len(src)+group-1)/group || len(scales) < (len(src)+block-1)/block {
		panic(fmt.Sprintf("kernels: LUTDecodeGroups: %d floats, %d meta fields, %d table entries (%d a table) and %d scales for %d codes in groups of %d, blocks of %d",
			len(dst), len(meta), len(luts), entries, len(scales), len(src), group, block))
	}
	lutDecodeGroups(dst[:len(src)], src, meta, group, block, entries, luts, scales)
}

// lutDecodeGroupsGo is the reference of LUTDecodeGroups (len(dst) =
// len(src)).
func lutDecodeGroupsGo(dst []float32, src, meta []uint8, group, block, entries int, luts, scales []float32) {
	tm, cm := len(luts)/entries-1, entries-1
	for g, lo := 0, 0; lo < len(src); g, lo = g+1, lo+group {
		hi := min(lo+group, len(src))
		lut := luts[entries*(int(meta[g])&tm):]
		lut = lut[:entries]
		s := scales[lo/block]
		for i, c := range src[lo:hi] {
			dst[lo+i] = lut[int(c)&cm] * s
		}
	}
}
