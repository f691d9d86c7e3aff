package kernels

import (
	"testing"
)

// FuzzMXByte compares every tier's MX byte kernels with the Go references:
// the fuzzer's bytes read as float32 values (padded with zeros to whole
// blocks, at least one group of 16) for the quantizers, as codes and scales
// for the dequantizers, and as floats and byte codes for the FP8 and FP6 slice
// codecs.
func FuzzMXByte(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x7f, 1, 0, 0xc0, 0xff, 0, 0, 0, 0x80, 0xff, 0xff, 0x7f, 0x7f}, true)
	f.Add(make([]byte, 4*100), false)
	f.Add([]byte{0x00, 0x00, 0xe8, 0x43, 0x00, 0x00, 0x60, 0x47, 0x01, 0x00, 0x00, 0x00}, true) // 464, 57344, 2^-149
	f.Fuzz(func(t *testing.T, data []byte, saturate bool) {
		x := floatsOf(data)
		nb := max((len(x)+mxBlock-1)/mxBlock, 16)
		src := make([]float32, nb*mxBlock)
		copy(src, x)
		// The same bytes, repeated, as codes and scales.
		raw := make([]byte, nb*mxBlock)
		if len(data) > 0 {
			for i := range raw {
				raw[i] = data[i%len(data)]
			}
		}
		scales := raw[len(raw)-nb:]
		for i, q := range mxQuantizers() {
			wantC, wantS := make([]byte, nb*q.per), make([]byte, nb)
			q.ref(wantC, wantS, src)
			d := mxDequantizers()[i]
			wantV := make([]float32, len(src))
			d.ref(wantV, raw, scales)
			for _, tr := range tiers() {
				restore := useTier(tr)
				c, s := make([]byte, nb*q.per), make([]byte, nb)
				q.run(c, s, src)
				v := make([]float32, len(src))
				d.run(v, raw, scales)
				restore()
				requireBytes(t, wantC, c, "%v %s codes", tr, q.name)
				requireBytes(t, wantS, s, "%v %s scales", tr, q.name)
				requireSame(t, floatBits(wantV), floatBits(v), "%v %s dequantize", tr, d.name)
			}
		}
		for _, fc := range []*FloatCodec{&e4m3fnCodec, &e5m2Codec, &e2m3Codec, &e3m2Codec} {
			lut := new([256]float32)
			for c := range lut {
				lut[c] = fc.Decode(uint32(c))
			}
			want := make([]byte, len(x))
			for i, v := range x {
				want[i] = byte(fc.Encode(v, RoundEven, saturate, 0))
			}
			wantF := make([]float32, len(data))
			DecodeLUT8(wantF, data, lut)
			for _, tr := range tiers() {
				restore := useTier(tr)
				got := make([]byte, len(x))
				EncodeFloat(fc, got, x, RoundEven, saturate, 0)
				gotF := make([]float32, len(data))
				DecodeFloat8(fc, gotF, data, lut)
				restore()
				requireBytes(t, want, got, "%v encode", tr)
				requireSame(t, floatBits(wantF), floatBits(gotF), "%v decode", tr)
			}
		}
	})
}
