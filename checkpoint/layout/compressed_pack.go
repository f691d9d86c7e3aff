package layout

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ctPackCodec is compressed-tensors' "pack-quantized": int4/int8 symmetric
// or uint4/uint8 with a zero point, group or channel scales, the codes
// packed in int32 words.
var ctPackCodec = ctCodec{
	format: "pack-quantized",
	claims: func(dt *tcast.DataType) bool {
		switch dt.Elem().Name() {
		case "int4", "int8", "uint4", "uint8":
			return true
		}
		return false
	},
	scheme: packScheme,
	packed: true,
	sparseWhy: func(dt *tcast.DataType, sc *ctScheme) string {
		if sc.bits == 8 {
			// int8 goes int-quantized; uint8 has a zero point.
			return fmt.Sprintf("datatype %s has a zero point, which int-quantized weights do not take",
				dt.Name())
		}
		return ""
	},
	specs:  packSpecs,
	encode: packEncode,
	match: func(src Source, p string) bool {
		info, _, ok := src.Tensor(p + ".weight_packed")
		return ok && info.DType == safetensors.I32
	},
	shape:  packShape,
	derive: packDerive,
	decode: packDecode,
}

// packScheme maps an integer datatype to pack-quantized.
func packScheme(dt *tcast.DataType) (*ctScheme, string) {
	s := dt.Spec()
	sdt, why := floatScale(s)
	if why != "" {
		return nil, why
	}
	elem := dt.Elem().Name()
	sc := &ctScheme{kind: ctPack, typ: "int", scaleDT: sdt}
	if elem[0] == 'i' {
		sc.bits, sc.symmetric = int(elem[3]-'0'), true
		if s.Zero != nil {
			return nil, "signed integers are written symmetric, without a zero point"
		}
	} else {
		sc.bits = int(elem[4] - '0')
		if s.Zero == nil || (s.Zero.Name() != fmtUint8 && s.Zero.Name() != fmtInt8) {
			return nil, "unsigned integers need a uint8 or int8 zero point"
		}
	}
	switch {
	case len(s.Tiles) == 1 && s.Tiles[0].Size == 0:
		sc.strategy = "channel"
	case len(s.Tiles) == 1:
		sc.strategy, sc.group = "group", s.Tiles[0].Size
	default:
		return nil, "integer weights need a group or channel scale along the input axis"
	}
	return sc, ""
}

// packSpecs declares P.weight_packed, P.weight_scale, P.weight_shape and,
// for a zero point, P.weight_zero_point.
func packSpecs(w *ctWeight) []Spec {
	b := w.sc.bits
	specs := []Spec{
		specOf(w.p+".weight_packed", safetensors.I32, []int{w.out, wordsPerRow(w.in, b)}),
		w.scaleSpec(),
		specOf(w.p+".weight_shape", safetensors.I64, []int{2}),
	}
	if !w.sc.symmetric {
		groups := w.scaleShape()[1]
		zshape := []int{wordsPerRow(w.out, b), groups}
		specs = append(specs, specOf(w.p+".weight_zero_point", safetensors.I32, zshape))
	}
	return specs
}

// packEncode packs the codes offset-binary and the zero points along dim 0.
func packEncode(w *ctWeight, a *tcast.Tensor, _ map[string]string) ([][]byte, error) {
	sc := w.sc
	half := byte(1) << (sc.bits - 1)
	mask := byte(1)<<sc.bits - 1
	vals := make([]byte, len(a.Data.Bytes))
	for i, c := range a.Data.Bytes {
		if sc.symmetric {
			vals[i] = (c ^ half) & mask // q + 2^(b−1), offset binary
		} else {
			vals[i] = c & mask // q_u = q_s + 2^(b−1)
		}
	}
	packed := packInt32(vals, w.out, w.in, sc.bits, false)
	data := [][]byte{packed, a.Scale.Bytes, int64Bytes(w.out, w.in)}
	if sc.symmetric {
		return data, nil
	}
	zs := make([]byte, len(a.Zero.Bytes))
	zf := w.dt.Spec().Zero
	for i, c := range a.Zero.Bytes {
		z := int(zf.Decode(uint32(c))) // int8 codes are two's complement, uint8 codes the value
		if z < 0 || z >= 1<<sc.bits {
			return nil, fmt.Errorf("zero point %d of block %d is outside the %d-bit range "+
				"0..%d compressed-tensors stores", z, i, sc.bits, 1<<sc.bits-1)
		}
		zs[i] = byte(z)
	}
	return append(data, packInt32(zs, w.out, a.Zero.Shape[1], sc.bits, true)), nil
}

// packShape reads P.weight_shape and checks it against P.weight_packed.
func packShape(src Source, p string) (int, int, error) {
	pinfo, _, _ := src.Tensor(p + ".weight_packed")
	ws, err := tensorIn(src, p+".weight_shape", []int{2}, safetensors.I64, safetensors.I32)
	if err != nil {
		return 0, 0, err
	}
	dims := ws.ints()
	out, in := int(dims[0]), int(dims[1])
	if out < 0 || in < 0 || len(pinfo.Shape) != 2 || pinfo.Shape[0] != out || in > 8*pinfo.Shape[1] {
		return 0, 0, fmt.Errorf("weight_shape [%d, %d] does not match weight_packed %v",
			out, in, pinfo.Shape)
	}
	return out, in, nil
}

// packDecode unpacks the codes and, for a zero point, the zero points.
func packDecode(w *ctWeight, t *tcast.Tensor, src Source) error {
	sc := w.sc
	pshape := []int{w.out, wordsPerRow(w.in, sc.bits)}
	pw, err := tensorIn(src, w.p+".weight_packed", pshape, safetensors.I32)
	if err != nil {
		return err
	}
	vals := unpackInt32(pw.data, w.out, w.in, sc.bits, false)
	if sc.symmetric {
		half := byte(1) << (sc.bits - 1)
		for i, v := range vals {
			vals[i] = v ^ half
		}
	}
	t.Data = part(w.dt.Elem(), t.Shape, vals)
	if sc.symmetric {
		return nil
	}
	groups := t.Scale.Shape[1]
	zshape := []int{wordsPerRow(w.out, sc.bits), groups}
	z, err := tensorIn(src, w.p+".weight_zero_point", zshape, safetensors.I32)
	if err != nil {
		return err
	}
	zs := unpackInt32(z.data, w.out, groups, sc.bits, true)
	zf := w.dt.Spec().Zero
	for i, v := range zs {
		if zf.Name() == fmtInt8 && v > math.MaxInt8 {
			return fmt.Errorf("zero point %d of block %d does not fit the int8 zero-point format of %s",
				v, i, w.dt.Name())
		}
	}
	t.Zero = part(zf, t.Scale.Shape, zs)
	return nil
}

// packDerive finds a pack-quantized datatype from the packing width of
// P.weight_packed, the scale's dtype and groups and whether a zero point is
// stored.
func packDerive(src Source, p string, out, in int, sinfo safetensors.TensorInfo) (
	*tcast.DataType, error) {
	pinfo, _, _ := src.Tensor(p + ".weight_packed")
	bits, err := packBits(pinfo, in)
	if err != nil {
		return nil, err
	}
	sn, ok := floatFormatName[sinfo.DType]
	if !ok {
		return nil, fmt.Errorf("weight_scale dtype %v is not a float scale", sinfo.DType)
	}
	if len(sinfo.Shape) != 2 || sinfo.Shape[0] != out || sinfo.Shape[1] < 1 || in%sinfo.Shape[1] != 0 {
		return nil, fmt.Errorf("weight_scale shape %v is not [%d, groups] with groups dividing %d",
			sinfo.Shape, out, in)
	}
	elem := fmt.Sprintf("int%d", bits)
	if _, _, ok := src.Tensor(p + ".weight_zero_point"); ok {
		// Our uint8 types take uint8 zero points (0..255), the uint4 ones int8.
		zero := "_int8"
		if bits == 8 {
			zero = "_uint8"
		}
		elem, sn = "u"+elem, sn+zero
	}
	tile := "_t0"
	if g := sinfo.Shape[1]; g > 1 {
		tile = fmt.Sprintf("_t%d", in/g)
	}
	return lookupCode(elem + "_" + sn + tile)
}

// packBits returns the code width, 4 or 8, that packs rows of in values
// into the words per row of P.weight_packed (pinfo).
func packBits(pinfo safetensors.TensorInfo, in int) (int, error) {
	if len(pinfo.Shape) != 2 {
		return 0, fmt.Errorf("weight_packed shape %v is not 2-D", pinfo.Shape)
	}
	bits := 0
	for _, b := range []int{4, 8} {
		if pinfo.Shape[1] == wordsPerRow(in, b) {
			if bits != 0 {
				return 0, fmt.Errorf("%d words per row of %d values fit both 4 and 8 bits", pinfo.Shape[1], in)
			}
			bits = b
		}
	}
	if bits == 0 {
		return 0, fmt.Errorf("%d words per row of %d values is neither 4- nor 8-bit packing",
			pinfo.Shape[1], in)
	}
	return bits, nil
}

// wordsPerRow is the int32 words a row of n b-bit values takes.
func wordsPerRow(n, b int) int { return (n*b + 31) / 32 }

// packInt32 packs a rows×n matrix of b-bit values (one per byte) row by row
// into rows×wordsPerRow(n, b) little-endian int32 words: value i of a row at
// bit b·(i mod 32/b) of word i/(32/b), the last word padded with zero bits.
// colMajor packs along dim 0 instead: the result is wordsPerRow(rows, b)×n.
func packInt32(vals []byte, rows, n, b int, colMajor bool) []byte {
	if colMajor {
		w := wordsPerRow(rows, b)
		out := make([]byte, 4*w*n)
		packLines(n, rows, b, func(c, r int) byte { return vals[r*n+c] },
			func(c, k int, word uint32) { binary.LittleEndian.PutUint32(out[4*(k*n+c):], word) })
		return out
	}
	w := wordsPerRow(n, b)
	out := make([]byte, 4*rows*w)
	packLines(rows, n, b, func(r, c int) byte { return vals[r*n+c] },
		func(r, k int, word uint32) { binary.LittleEndian.PutUint32(out[4*(r*w+k):], word) })
	return out
}

// packLines packs each of lines sequences of length b-bit values (value i of
// line l is get(l, i)) into 32-bit words, 32/b values per word from bit 0 up,
// and hands word k of line l to put.
func packLines(lines, length, b int, get func(l, i int) byte, put func(l, k int, word uint32)) {
	per := 32 / b
	mask := uint32(1)<<b - 1
	for l := range lines {
		for k := range wordsPerRow(length, b) {
			var word uint32
			for i := range per {
				if j := k*per + i; j < length {
					word |= (uint32(get(l, j)) & mask) << (b * i)
				}
			}
			put(l, k, word)
		}
	}
}

// unpackInt32 is the inverse of packInt32 (padding bits are ignored).
func unpackInt32(words []byte, rows, n, b int, colMajor bool) []byte {
	per := 32 / b
	mask := uint32(1)<<b - 1
	out := make([]byte, rows*n)
	if colMajor {
		for row := range rows {
			for c := range n {
				word := binary.LittleEndian.Uint32(words[4*((row/per)*n+c):])
				out[row*n+c] = byte(word >> (b * (row % per)) & mask)
			}
		}
		return out
	}
	w := wordsPerRow(n, b)
	for r := range rows {
		for c := range n {
			word := binary.LittleEndian.Uint32(words[4*(r*w+c/per):])
			out[r*n+c] = byte(word >> (b * (c % per)) & mask)
		}
	}
	return out
}
