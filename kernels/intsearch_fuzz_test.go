package kernels

import "testing"

// FuzzSearchIntSym compares every tier's searchIntSym with the Go reference
// on the fuzzer's bytes read as float32 values, for a geometry drawn from
// shape: bits, scale format, group size and row length.
func FuzzSearchIntSym(f *testing.F) {
	seed := make([]float32, 160)
	for i := range seed {
		seed[i] = float32(i%7) * 0.37
	}
	seed[3], seed[40] = 7, -6.5
	f.Add(bytesOf(seed...), uint16(0x0400|16<<3))
	f.Add(bytesOf(seed...), uint16(0x0005|32<<3))
	f.Add(make([]byte, 4*130), uint16(0x0102))
	f.Fuzz(func(t *testing.T, data []byte, shape uint16) {
		src := floatsOf(data)
		n := len(src)
		g := IntGroups{Bits: 8, Scale: ScaleFormat(shape & 1)}
		if shape&4 != 0 {
			g.Bits = 4
		}
		g.Group = int(shape>>3&0xff) % 140
		if rows := int(shape>>11) + 1; n%rows == 0 {
			g.Cols = n / rows
		}
		requireSearchIntSymTiers(t, src, g)
	})
}
