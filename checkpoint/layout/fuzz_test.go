package layout

import (
	"slices"
	"testing"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// FuzzDecode feeds every layout's Find and Decode stored tensors with the
// names its Specs declares but arbitrary bytes, lengths, shapes and
// metadata values: they must return an error or a tensor that decompresses,
// never panic.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(3), uint8(1), []byte{1, 2, 3}, uint8(0), "")
	f.Add(uint8(1), uint8(1), uint8(1), uint8(3), []byte{0xff, 0x80, 0x7f}, uint8(1), "0x3f800000")
	f.Add(uint8(2), uint8(2), uint8(8), uint8(0), []byte{}, uint8(2), "nvfp4")
	f.Add(uint8(3), uint8(0), uint8(2), uint8(2), []byte{0x38}, uint8(6), "{}")
	f.Add(uint8(4), uint8(5), uint8(4), uint8(4), []byte{9, 9}, uint8(9), "garbage")
	type cand struct {
		l   Layout
		dts []*tcast.DataType
	}
	var cands []cand
	for _, n := range Names() {
		l, _ := Get(n)
		c := cand{l: l}
		for _, dt := range tcast.Registered() {
			if l.Check(dt, 1, 2) == nil {
				c.dts = append(c.dts, dt)
			}
		}
		if len(c.dts) > 0 {
			cands = append(cands, c)
		}
	}
	f.Fuzz(func(t *testing.T, which, dtIdx, d0, d1 uint8, data []byte, tweak uint8, metaVal string) {
		c := cands[int(which)%len(cands)]
		dt := c.dts[int(dtIdx)%len(c.dts)]
		shape := []int{int(d0%9) + 1, (int(d1%4) + 1) * 128}
		const name = "m.w.weight"
		specs, meta, err := c.l.Specs(name, shape, dt, 1)
		if err != nil {
			return
		}
		if meta == nil {
			meta = map[string]string{}
		}
		var ts []Tensor
		for i, sp := range specs {
			n := int(sp.Bytes(c.l.Container()))
			switch {
			case tweak&1 != 0 && i == int(tweak>>4)%len(specs):
				n = max(0, n+int(tweak>>1)%7-3) // a wrong length
			case tweak&2 != 0 && i == int(tweak>>4)%len(specs) && len(sp.Shape) > 0:
				sp.Shape = slices.Clone(sp.Shape)
				sp.Shape[0]++ // a wrong shape
			}
			b := make([]byte, n)
			for j := range b {
				if len(data) > 0 {
					b[j] = data[j%len(data)] ^ byte(j*131)
				}
			}
			if tweak&8 != 0 && i == int(tweak>>4)%len(specs) {
				continue // a missing tensor
			}
			ts = append(ts, Tensor{Spec: sp, Data: b})
		}
		if metaVal != "" {
			for k := range meta {
				meta[k] = metaVal
				break
			}
			meta[KeyWeightPrefix+name] = metaVal
		}
		src := newLdrSource(ts, meta)
		_ = c.l.Find(src)
		if d, ok := c.l.(Describer); ok {
			_, _, _ = d.Describe(name, src)
		}
		got, ok, err := c.l.Decode(name, src)
		if err != nil || !ok {
			return
		}
		if _, err := tcast.Decompress(got); err != nil {
			t.Fatalf("%s %s: Decode returned a tensor that does not decompress: %v", c.l.Name(), dt.Name(), err)
		}
	})
}

// FuzzCTSparseDecode feeds the compressed-tensors decoder of pruned weights
// (sparse-24-bitmask and sparse-bitmask, every value dtype) tensors with the
// names they have but arbitrary shape values, bitmask bytes, row offsets,
// lengths and dtypes: it must return an error or a tensor that decompresses
// and whose mask keeps one element per stored value, never panic.
func FuzzCTSparseDecode(f *testing.F) {
	f.Add(uint8(0), uint8(0), int64(2), int64(8), []byte{0x36, 0x69}, []byte{0, 4}, []byte{1, 2, 3}, uint8(0))
	f.Add(uint8(1), uint8(1), int64(2), int64(8), []byte{0x36, 0x69}, []byte{0, 4}, []byte{0x3f}, uint8(0))
	f.Add(uint8(1), uint8(3), int64(1), int64(6), []byte{0x21}, []byte{0}, []byte{7}, uint8(5))
	f.Add(uint8(0), uint8(4), int64(3), int64(4), []byte{0x5, 0x6, 0xc}, []byte{}, []byte{9, 9}, uint8(2))
	f.Add(uint8(0), uint8(2), int64(-1), int64(1<<40), []byte{}, []byte{1}, []byte{}, uint8(9))
	vdts := []safetensors.DType{safetensors.BF16, safetensors.F32, safetensors.F8E4M3, safetensors.I8, safetensors.F16, safetensors.U8}
	f.Fuzz(func(t *testing.T, format, vdtIdx uint8, rows, cols int64, bitmask, offsets, vals []byte, tweak uint8) {
		vdt := vdts[int(vdtIdx)%len(vdts)]
		bytesOf := func(n int) []byte {
			b := make([]byte, max(n, 0))
			for i := range b {
				if len(vals) > 0 {
					b[i] = vals[i%len(vals)] ^ byte(i*29)
				}
			}
			return b
		}
		out, in := int(min(max(rows, 0), 64)), int(min(max(cols, 0), 64))
		stride := (in + 7) / 8
		count := 0
		for _, b := range bitmask {
			for ; b != 0; b &= b - 1 {
				count++
			}
		}
		if tweak&1 != 0 {
			count += int(tweak>>4) - 8 // a wrong number of values
		}
		shapeShape := []int{2, 1}
		ts := []Tensor{{Spec: specOf("p.bitmask", safetensors.U8, []int{out, stride}), Data: bitmask}}
		if format&1 == 0 {
			ts = append(ts, Tensor{Spec: specOf("p.compressed", vdt, []int{out, in / 2}), Data: bytesOf(out * (in / 2) * vdt.BitSize() / 8)})
		} else {
			shapeShape = []int{2}
			ts = append(ts, Tensor{Spec: specOf("p.compressed", vdt, []int{max(count, 0)}), Data: bytesOf(max(count, 0) * vdt.BitSize() / 8)})
			var ro []int64
			for _, o := range offsets {
				ro = append(ro, int64(o))
			}
			ts = append(ts, Tensor{Spec: specOf("p.row_offsets", safetensors.I64, []int{len(ro)}), Data: lei64(ro...)})
		}
		ts = append(ts, Tensor{Spec: specOf("p.shape", safetensors.I64, shapeShape), Data: lei64(rows, cols)})
		if vdt == safetensors.F8E4M3 || vdt == safetensors.I8 || tweak&2 != 0 {
			sshape := []int{out, 1}
			if tweak&4 != 0 {
				sshape = []int{1}
			}
			ts = append(ts, Tensor{Spec: specOf("p.weight_scale", safetensors.F32, sshape), Data: bytesOf(4 * sshape[0])})
		}
		meta := map[string]string{}
		if tweak&8 != 0 {
			meta[KeyCTDataTypePrefix+"p"] = []string{"bfloat16", "int8_channel", "fp8e4_channel", "mxfp4", "nonsense"}[int(tweak>>4)%5]
		}
		src := newLdrSource(ts, meta)
		l, _ := Get("compressed-tensors")
		_ = l.Find(src)
		got, ok, err := l.Decode("p.weight", src)
		if err != nil || !ok {
			return
		}
		v, err := tcast.Decompress(got)
		if err != nil {
			t.Fatalf("Decode returned a tensor that does not decompress: %v", err)
		}
		if got.Mask == nil || got.Mask.Len() != len(v) {
			t.Fatalf("decoded tensor without a mask of its %d elements", len(v))
		}
	})
}
