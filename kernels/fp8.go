package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// FP8 (OCP E4M3, e4m3fn) with a float32 scale per tensor, per channel (row)
// or per 2-D tile, as the tcast package casts its fp8e4_tensor,
// fp8e4_channel and fp8e4_block128 datatypes (and any e4m3fn datatype with
// float32 scales) under its defaults (docs/NUMERICS.md §6): a tile whose
// largest magnitude is amax gets the scale s = float32(amax/448), 1.0 for an
// all-zero tile; its elements are x/s rounded to nearest even in E4M3,
// saturating at ±448, −0 kept. A tile holding a NaN or an infinity gets the
// float32 NaN 0x7fc00000 and element codes 0x7F (the E4M3 NaN); a scale that
// underflows to 0 gives codes 0. The decoder returns element × scale in
// float32.

// FP8Tiles describes how a row-major matrix splits into scale tiles.
type FP8Tiles struct {
	// Cols is the length of a row; 0 means one row holding every element.
	Cols int
	// TileRows and TileCols are a tile's extent; the tiles of the last tile
	// row and column are the smaller remainder. 0 means 1 row and the whole
	// row.
	TileRows, TileCols int
	// Rows, when not 0, makes the elements a stack of matrices of Rows
	// rows each, tiled one by one (no tile crosses two matrices), their
	// scales one matrix after the other; 0 means one matrix.
	Rows int
}

// forMatrices calls fn for each matrix of the stack of n elements that t
// describes (all of them when t.Rows is 0): its element range, the byte
// range of its scales (up to scales bytes) and its tiles.
func (t FP8Tiles) forMatrices(n, scales int, fn func(lo, hi, s0, s1 int, m FP8Tiles)) {
	m := t
	m.Rows = 0
	if t.Rows == 0 {
		fn(0, n, 0, scales, m)
		return
	}
	if n == 0 {
		return
	}
	per := t.Rows * t.Cols
	if t.Rows < 0 || t.Cols <= 0 || n%per != 0 {
		panic(fmt.Sprintf("kernels: E4M3: %d elements in matrices of %d rows of %d", n, t.Rows, t.Cols))
	}
	_, _, _, _, _, tiles := m.geometry("E4M3", per)
	for k := range n / per {
		fn(k*per, (k+1)*per, 4*k*tiles, 4*(k+1)*tiles, m)
	}
}

// geometry returns the rows, columns and tile extents of t for n elements,
// and the number of tiles per tile row and in all; it panics on a
// malformed t.
func (t FP8Tiles) geometry(kernel string, n int) (rows, cols, tr, tc, across, tiles int) {
	cols, tr, tc = t.Cols, t.TileRows, t.TileCols
	if cols == 0 {
		cols = n
	}
	if cols < 0 || tr < 0 || tc < 0 || (cols == 0 && n != 0) || (cols > 0 && n%cols != 0) {
		panic(fmt.Sprintf("kernels: %s: %d elements in rows of %d", kernel, n, t.Cols))
	}
	if n == 0 {
		return 0, cols, max(tr, 1), max(tc, 1), 0, 0
	}
	rows = n / cols
	if tr == 0 {
		tr = 1
	}
	if tc == 0 || tc > cols {
		tc = cols
	}
	tr = min(tr, rows)
	across = (cols + tc - 1) / tc
	return rows, cols, tr, tc, across, (rows + tr - 1) / tr * across
}

func (t FP8Tiles) check(kernel string, n, codes, scales int) (rows, cols, tr, tc, across, tiles int) {
	rows, cols, tr, tc, across, tiles = t.geometry(kernel, n)
	switch {
	case codes < n:
		panic(fmt.Sprintf("kernels: %s: %d code bytes for %d elements", kernel, codes, n))
	case scales < 4*tiles:
		panic(fmt.Sprintf("kernels: %s: %d scale bytes for %d tiles", kernel, scales, tiles))
	}
	return
}

// quantizeE4M3 quantizes src, a row-major matrix, to E4M3 codes (one byte
// per element) with one float32 scale per tile of t in scales (four
// little-endian bytes each, tiles in row-major order).
func quantizeE4M3(codes, scales []byte, src []float32, t FP8Tiles) {
	t.check("quantizeE4M3", len(src), len(codes), len(scales))
	quantE4M3Tiles(codes, scales, src, t)
}

// dequantizeE4M3 decodes E4M3 codes and float32 scales (as quantizeE4M3
// writes them) into dst: element × scale in float32.
func dequantizeE4M3(dst []float32, codes, scales []byte, t FP8Tiles) {
	t.check("dequantizeE4M3", len(dst), len(codes), len(scales))
	dequantE4M3Tiles(dst, codes, scales, t)
}

// The E4M3 codes of a NaN and of the largest magnitude.
const (
	e4m3NaN    = 0x7f
	e4m3MaxMag = 0x7e
)

// fp8Scale chooses the scale of a tile whose largest magnitude has the bits
// amax: its code and the divisor d, NaN for a NaN tile (codes 0x7F) and 0
// for codes 0.
func fp8Scale(amax uint32) (code uint32, d float32) {
	switch {
	case amax >= 0x7f800000:
		return f32NaN, math.Float32frombits(f32NaN)
	case amax == 0:
		return f32One, 1
	}
	s := math.Float32frombits(amax) / 448
	return math.Float32bits(s), s
}

// quantE4M3Tile encodes elements x (element lo of codes onwards) with the
// divisor d.
func quantE4M3Tile(codes []byte, x []float32, lo int, d float32) {
	out := codes[lo : lo+len(x)]
	switch {
	case d != d:
		for i := range out {
			out[i] = e4m3NaN
		}
	case d == 0:
		clear(out)
	default:
		for i, v := range x {
			out[i] = e4m3RNE(v / d)
		}
	}
}

// e4m3RNE returns e4m3fnCodec.Encode(v, RoundEven, true, 0) for v not NaN:
// for |v| ≥ 2^−6 the float32 bits rounded to 3 mantissa bits (adding
// 2^19 − 1 plus the kept LSB), shifted down and rebiased; below it, the
// float32 sum |v| + 2^14, whose ulp is E4M3's subnormal step 2^−9, minus
// 2^14's bits; then saturation at ±448 and the sign (−0 kept).
func e4m3RNE(v float32) byte {
	const (
		minNorm = 121 << 23 // 2^−6
		kBits   = 141 << 23 // 2^14
		rebias  = 120 << 3
	)
	y := math.Float32bits(v)
	abs := y & 0x7fffffff
	sub := int32(math.Float32bits(math.Float32frombits(abs)+math.Float32frombits(kBits)) - kBits)
	mag := int32((abs+(1<<19-1)+(abs>>20)&1)>>20) - rebias
	isSub := (int32(abs) - minNorm) >> 31
	mag ^= (mag ^ sub) & isSub
	mag = min(mag, e4m3MaxMag)
	return byte(uint32(mag) | y>>31<<7)
}

// forTiles calls fn for every tile of a rows×cols matrix in row-major tile
// order, with its number and row and column ranges.
func forTiles(rows, cols, tr, tc int, fn func(k, r0, r1, c0, c1 int)) {
	forTileChunks(rows, cols, tr, tc, 1, func(k, _, r0, r1, c0, c1 int) { fn(k, r0, r1, c0, c1) })
}

// forTileChunks calls fn for every chunk of up to ct tiles side by side of a
// rows×cols matrix (tiles of tr×tc), in row-major tile order, with the
// number of its first tile, its number of tiles, and its row and column
// ranges.
func forTileChunks(rows, cols, tr, tc, ct int, fn func(k, nt, r0, r1, c0, c1 int)) {
	k := 0
	for r0 := 0; r0 < rows; r0 += tr {
		for c0 := 0; c0 < cols; c0 += ct * tc {
			c1 := min(c0+ct*tc, cols)
			nt := (c1 - c0 + tc - 1) / tc
			fn(k, nt, r0, min(r0+tr, rows), c0, c1)
			k += nt
		}
	}
}

// dequantE4M3Run decodes the codes of elements lo..hi into dst, times m.
func dequantE4M3Run(dst []float32, codes []byte, lo, hi int, m float32) {
	lut := &mx.e4m3fn
	for i := lo; i < hi; i++ {
		dst[i] = lut[codes[i]] * m
	}
}

// quantE4M3Go is the reference of quantizeE4M3.
func quantE4M3Go(codes, scales []byte, src []float32, t FP8Tiles) {
	rows, cols, tr, tc, _, _ := t.geometry("quantizeE4M3", len(src))
	forTiles(rows, cols, tr, tc, func(k, r0, r1, c0, c1 int) {
		var amax uint32
		for r := r0; r < r1; r++ {
			amax = max(amax, absMaxBitsGo(src[r*cols+c0:r*cols+c1]))
		}
		code, d := fp8Scale(amax)
		binary.LittleEndian.PutUint32(scales[4*k:], code)
		for r := r0; r < r1; r++ {
			quantE4M3Tile(codes, src[r*cols+c0:r*cols+c1], r*cols+c0, d)
		}
	})
}

// dequantE4M3Go is the reference of dequantizeE4M3.
func dequantE4M3Go(dst []float32, codes, scales []byte, t FP8Tiles) {
	rows, cols, tr, tc, _, _ := t.geometry("dequantizeE4M3", len(dst))
	forTiles(rows, cols, tr, tc, func(k, r0, r1, c0, c1 int) {
		m := ScaleFloat32.decodeScale(binary.LittleEndian.Uint32(scales[4*k:]))
		for r := r0; r < r1; r++ {
			dequantE4M3Run(dst, codes, r*cols+c0, r*cols+c1, m)
		}
	})
}
