package layout

import (
	"slices"
	"testing"

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
