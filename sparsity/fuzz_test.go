package sparsity

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
)

// Fuzz targets for every decoder of stored sparsity data: any input must be
// decoded or refused with an error, never panic, and whatever decodes must
// encode back to the same bytes (the encodings are canonical).

func fuzzPatterns() []Pattern {
	var ps []Pattern
	for m := 2; m <= 16; m *= 2 {
		for n := 1; n < m; n++ {
			ps = append(ps, Pattern{n, m})
		}
	}
	return ps
}

func FuzzDecodeIndices(f *testing.F) {
	f.Add(byte(1), byte(1), byte(1), false, []byte{0x49, 0x9c})
	f.Add(byte(1), byte(1), byte(2), false, []byte{0xe4, 0x0c, 0x89, 0x0d})
	f.Add(byte(11), byte(0), byte(1), false, []byte{0x10, 0xcd, 0xfa})
	f.Add(byte(1), byte(1), byte(0), true, []byte{0x01, 0x06})
	ps := fuzzPatterns()
	f.Fuzz(func(t *testing.T, pi, rs, cs byte, axis0 bool, meta []byte) {
		p := ps[int(pi)%len(ps)]
		shape := []int{1 + int(rs)%4, p.M * (1 + int(cs)%3)}
		axis := 1
		if axis0 {
			shape = []int{p.M * (1 + int(rs)%3), 1 + int(cs)%4}
			axis = 0
		}
		m, err := DecodeIndices(meta, shape, axis, p)
		if err != nil {
			return
		}
		if err := Check(m, axis, p); err != nil {
			t.Fatalf("decoded mask is not %v: %v", p, err)
		}
		back, err := EncodeIndices(m, axis, p)
		if err != nil || !bytes.Equal(back, meta) {
			t.Fatalf("%v %v: %x decodes but encodes to %x (%v)", p, shape, meta, back, err)
		}
	})
}

func FuzzDecodeCUTLASS(f *testing.F) {
	f.Add(byte(0), false, byte(0), byte(0), []byte{0x84, 0xed})
	f.Add(byte(2), false, byte(0), byte(0), []byte{0xe4, 0x4e, 0x44, 0xee})
	f.Add(byte(0), true, byte(2), byte(1), bytes.Repeat([]byte{0xee}, 128))
	f.Add(byte(1), true, byte(1), byte(3), bytes.Repeat([]byte{0x84, 0xed}, 64))
	f.Fuzz(func(t *testing.T, es byte, reordered bool, rs, ks byte, meta []byte) {
		e := CUTLASSElem(int(es) % 3)
		rows := []int{1, 2, 16, 32}[int(rs)%4]
		k := 16 * (1 + int(ks)%4)
		m, err := DecodeCUTLASS(meta, rows, k, e, reordered)
		if err != nil {
			return
		}
		if err := Check(m, 1, e.Pattern()); err != nil {
			t.Fatalf("decoded mask is not %v: %v", e.Pattern(), err)
		}
		back, err := EncodeCUTLASS(m, e, reordered)
		if err != nil {
			t.Fatalf("decoded mask does not encode: %v", err)
		}
		// The decoder takes either index order; the encoder writes one.
		again, err := DecodeCUTLASS(back, rows, k, e, reordered)
		if err != nil || !again.Equal(m) {
			t.Fatalf("re-encoded metadata %x decodes differently (%v)", back, err)
		}
	})
}

func FuzzUnpackRows(f *testing.F) {
	f.Add(byte(1), byte(11), []byte{0xc3, 0x09, 0x56, 0x0a})
	f.Add(byte(0), byte(7), []byte{0x63})
	f.Fuzz(func(t *testing.T, rs, cs byte, packed []byte) {
		shape := []int{1 + int(rs)%4, 1 + int(cs)%20}
		m, err := UnpackRows(packed, shape)
		if err != nil {
			return
		}
		if back := PackRows(m); !bytes.Equal(back, packed) {
			t.Fatalf("%x unpacks but packs to %x", packed, back)
		}
	})
}

// floats reads b as little-endian float32 values.
func floats(b []byte) []float32 {
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

func FuzzSparseBitmask(f *testing.F) {
	f.Add(byte(1), byte(7), []byte{0x63, 0x08}, []byte{0, 4}, []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 192, 0, 0, 128, 64, 0, 0, 160, 64})
	f.Fuzz(func(t *testing.T, rs, cs byte, bitmask, offsets, vals []byte) {
		s := &SparseBitmask{Shape: [2]int{1 + int(rs)%4, 1 + int(cs)%20}, Bitmask: bitmask, Compressed: floats(vals)}
		for _, o := range offsets {
			s.RowOffsets = append(s.RowOffsets, int64(o))
		}
		d, err := s.Dense()
		if err != nil {
			return
		}
		if slices.Contains(s.Compressed, 0) {
			return // a stored zero is valid but not what the encoder writes
		}
		back, err := NewSparseBitmask(d, s.Shape[:])
		if err != nil || !bytes.Equal(back.Bitmask, s.Bitmask) || !slices.Equal(back.RowOffsets, s.RowOffsets) ||
			!slices.Equal(bitsOf(back.Compressed), bitsOf(s.Compressed)) {
			t.Fatalf("decoded %+v re-encodes as %+v (%v)", s, back, err)
		}
	})
}

func FuzzSparse24Bitmask(f *testing.F) {
	f.Add(byte(1), byte(1), []byte{0x36, 0x69}, bytes.Repeat([]byte{0, 0, 128, 63}, 8))
	f.Fuzz(func(t *testing.T, rs, cs byte, bitmask, vals []byte) {
		s := &Sparse24Bitmask{Shape: [2]int{1 + int(rs)%4, 4 * (1 + int(cs)%5)}, Bitmask: bitmask, Compressed: floats(vals)}
		d, err := s.Dense()
		if err != nil {
			return
		}
		m, err := s.Mask()
		if err != nil {
			t.Fatalf("Dense decodes, Mask does not: %v", err)
		}
		back, err := NewSparse24Bitmask(d, s.Shape[:], m)
		if err != nil || !bytes.Equal(back.Bitmask, s.Bitmask) || !slices.Equal(bitsOf(back.Compressed), bitsOf(s.Compressed)) {
			t.Fatalf("decoded %+v re-encodes as %+v (%v)", s, back, err)
		}
	})
}

// FuzzParsePattern: ParsePattern never panics, refuses with a
// *PatternError, and what it accepts is a valid pattern that prints back
// (String) to itself.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"2:4", "n2m4", "4:8", "1:2", "3:4", "0:4", "4:4", "2:3", "2:32", " N2M4 ", "2:", ":4", "n2", "99:99",
		"2:04", "-1:2", "9223372036854775807:2", "n1m16"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s)
		if err != nil {
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: %v is not a *PatternError", s, err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%q parses to the invalid %v: %v", s, p, err)
		}
		back, err := ParsePattern(p.String())
		if err != nil || back != p {
			t.Fatalf("%q: %v prints as %q, which parses to %v, %v", s, p, p.String(), back, err)
		}
	})
}
