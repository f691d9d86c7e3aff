package kernels

import "math"

// The fused scale-search kernels of the E2M1 datatypes (tcast's
// Options.ScaleSearch for MXFP4 and NVFP4, docs/NUMERICS.md §11): each block's
// scale code is chosen among a few candidates around the rule's code by the
// least squared error of the block as a loader decodes it (sqErrE2M1, float64
// sums in index order), the rule's code winning ties, and the block is then
// encoded with that scale and packed, all in one call. Without the search
// they write what quantizeMXFP4 and quantizeNVFP4 write.

// searchMXFP4 is quantizeMXFP4 with the scale search: the scale code of a
// finite block that is not all zero is, among the rule's code k and its
// neighbours k−1 (when k > 0) and k+1, tried in that order, the first of
// least
//
//	sqErrE2M1(&SqErrBlock{V: block, Mul: 1/2^(c−127), DMul: 2^(c−127)}),
//
// and the elements are x·2^(127−c) rounded to nearest even among the E2M1
// values, saturating, as quantizeMXFP4 rounds them. All-zero blocks and
// blocks holding a NaN or an infinity get quantizeMXFP4's bytes.
func searchMXFP4(codes, scales []byte, src []float32) {
	checkBlocks("searchMXFP4", len(src), mxBlock, len(codes), mxBlock/2, len(scales))
	searchMXFP4Blocks(codes, scales, src)
}

// searchNVFP4 is quantizeNVFP4 with the scale search: the UE4M3 scale code of
// a finite block that is not all zero is, among the rule's code k (that of
// v = amax / float32(6·s_t)), k−1, k+1 and the "4/6" code (that of
// float32(v·1.5)), tried in that order and each skipped when its UE4M3 value
// is 0 or it repeats an earlier one (the rule's code is always tried), the
// first of least
//
//	sqErrE2M1(&SqErrBlock{V: block, Div: d, DMul: d}),  d = float32(s_c·s_t),
//
// that error being Σ float64(x)² when d is 0; the elements are then x/d in
// E2M1 as quantizeNVFP4 encodes them (zeros when d is 0). All-zero blocks and
// blocks holding a NaN or an infinity get quantizeNVFP4's bytes.
func searchNVFP4(codes, scales []byte, src []float32, tensorScale float32) {
	checkBlocks("searchNVFP4", len(src), nvfp4Block, len(codes), nvfp4Block/2, len(scales))
	searchNVFP4Blocks(codes, scales, src, tensorScale)
}

// searchMXFP4Go is the reference of searchMXFP4, for whole blocks.
func searchMXFP4Go(codes, scales []byte, src []float32) {
	var blk SqErrBlock
	for b := range len(src) / mxBlock {
		v := src[b*mxBlock : (b+1)*mxBlock]
		out := (*[mxBlock / 2]byte)(codes[b*mxBlock/2:])
		amax := amaxBits(v)
		sc, ok := mxScale(amax, 2)
		if !ok {
			scales[b] = sc
			clear(out[:])
			continue
		}
		if amax != 0 {
			blk.V = v
			errOf := func(c uint8) float64 {
				blk.Mul, blk.DMul = mx.recip[c], mx.e8m0[c]
				return sqErrE2M1(&blk)
			}
			best, bestErr := sc, errOf(sc)
			if sc > 0 {
				if e := errOf(sc - 1); e < bestErr {
					best, bestErr = sc-1, e
				}
			}
			if e := errOf(sc + 1); e < bestErr { // sc ≤ 252
				best = sc + 1
			}
			sc = best
		}
		scales[b] = sc
		encodeE2M1Mul(out[:], v, mx.recip[sc])
	}
}

// encodeE2M1Mul packs the E2M1 codes of the values x·m of v (nearest even,
// saturating, −0 for negative values that round to zero) two per byte into
// out.
func encodeE2M1Mul(out []byte, v []float32, m float32) {
	keys := &mx.e2m1Key
	for j := range out {
		q0, q1 := math.Float32bits(v[2*j]*m), math.Float32bits(v[2*j+1]*m)
		c0 := e2m1Code(min(int32(q0&0x7fffffff), e2m1KeyHi), keys) | q0>>31<<3
		c1 := e2m1Code(min(int32(q1&0x7fffffff), e2m1KeyHi), keys) | q1>>31<<3
		out[j] = byte(c0 | c1<<4)
	}
}

// encodeE2M1Div packs the E2M1 codes of the values x/d of v (nearest even,
// saturating, −0 for negative values that round to zero) two per byte into
// out: the NVFP4 block encode of the plain and the searching references.
func encodeE2M1Div(out []byte, v []float32, d float32) {
	keys := &mx.e2m1Key
	for j := range out {
		q0, q1 := math.Float32bits(v[2*j]/d), math.Float32bits(v[2*j+1]/d)
		c0 := e2m1Code(min(int32(q0&0x7fffffff), e2m1KeyHi), keys) | q0>>31<<3
		c1 := e2m1Code(min(int32(q1&0x7fffffff), e2m1KeyHi), keys) | q1>>31<<3
		out[j] = byte(c0 | c1<<4)
	}
}

// ue4m3One is the UE4M3 code of 1.0, the scale of an all-zero NVFP4 block.
const ue4m3One = 0x38

// searchNVFP4Go is the reference of searchNVFP4, for whole blocks.
func searchNVFP4Go(codes, scales []byte, src []float32, tensorScale float32) {
	denom := 6 * tensorScale
	var blk SqErrBlock
	for b := range len(src) / nvfp4Block {
		v := src[b*nvfp4Block : (b+1)*nvfp4Block]
		out := (*[nvfp4Block / 2]byte)(codes[b*nvfp4Block/2:])
		amax := amaxBits(v)
		if amax >= 0x7f800000 {
			scales[b] = ue4m3NaN
			clear(out[:])
			continue
		}
		sc := uint8(ue4m3One)
		if amax != 0 {
			q := math.Float32frombits(amax) / denom
			sc = uint8(ue4m3Codec.Encode(q, RoundEven, true, 0))
			blk.V = v
			errOf := func(c uint8) float64 {
				d := mx.ue4m3[c] * tensorScale
				if d == 0 {
					var sum float64
					for _, x := range v {
						sum += float64(x) * float64(x)
					}
					return sum
				}
				blk.Div, blk.DMul = d, d
				return sqErrE2M1(&blk)
			}
			// The candidates: rule−1 when its value is not 0, rule+1 when it
			// is not the NaN code, the 4/6 code when it is new and its
			// value is finite and not 0.
			rule := sc
			best, bestErr := rule, errOf(rule)
			down, up := rule > 1, rule < 0x7e
			if down {
				if e := errOf(rule - 1); e < bestErr {
					best, bestErr = rule-1, e
				}
			}
			if up {
				if e := errOf(rule + 1); e < bestErr {
					best, bestErr = rule+1, e
				}
			}
			c := uint8(ue4m3Codec.Encode(q*1.5, RoundEven, true, 0))
			s := mx.ue4m3[c]
			if s > 0 && s <= math.MaxFloat32 && c != rule && !(down && c == rule-1) && !(up && c == rule+1) {
				if e := errOf(c); e < bestErr {
					best = c
				}
			}
			sc = best
		}
		scales[b] = sc
		d := mx.ue4m3[sc] * tensorScale
		if d == 0 {
			clear(out[:])
			continue
		}
		encodeE2M1Div(out[:], v, d)
	}
}
