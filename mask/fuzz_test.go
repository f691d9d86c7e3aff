package mask

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzFromBytes decodes arbitrary bytes as packed bits and as flag bytes of a
// shape taken from the first bytes: an error is a *ShapeError or a
// *DecodeError, and a decoded mask gives back exactly its input and agrees
// with its other forms.
func FuzzFromBytes(f *testing.F) {
	f.Add(byte(9), byte(1), []byte{0x0d, 0x01})
	f.Add(byte(3), byte(3), []byte{0, 1, 1, 0, 0, 0, 0, 0, 1})
	f.Add(byte(10), byte(1), []byte{0xff, 0x07})
	f.Add(byte(0), byte(5), []byte{})
	f.Fuzz(func(t *testing.T, d0, d1 byte, data []byte) {
		shape := []int{int(d0), int(d1)}
		check := func(m *Mask, err error) {
			if err != nil {
				if !errors.Is(err, ErrShape) && !errors.Is(err, ErrDecode) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			require.Equal(t, int(d0)*int(d1), m.Len())
			fm, err := FromFlags(shape, m.Flags())
			require.NoError(t, err)
			require.True(t, m.Equal(fm))
			bm, err := FromBools(shape, m.Bools())
			require.NoError(t, err)
			require.True(t, m.Equal(bm))
			c := 0
			for _, b := range m.Bools() {
				if b {
					c++
				}
			}
			require.Equal(t, c, m.Count())
			require.Equal(t, c > 0, m.Any())
			require.Equal(t, c == m.Len(), m.All())
			require.Equal(t, m.Len()-c, m.Not().Count())
		}
		m, err := FromBytes(shape, data)
		check(m, err)
		if err == nil {
			require.Equal(t, data, m.Bytes())
		}
		m, err = FromFlags(shape, data)
		check(m, err)
		if err == nil {
			require.Equal(t, data, m.Flags())
		}
	})
}
