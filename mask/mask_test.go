package mask

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bools spells a mask as a string of 0 and 1 (spaces ignored).
func bools(s string) []bool {
	var out []bool
	for _, c := range s {
		switch c {
		case '0':
			out = append(out, false)
		case '1':
			out = append(out, true)
		}
	}
	return out
}

func mustBools(t *testing.T, shape []int, s string) *Mask {
	t.Helper()
	m, err := FromBools(shape, bools(s))
	require.NoError(t, err)
	return m
}

// TestHandDerived checks the bit order and polarity on a 9-element mask:
// element 8k+i is bit i of byte k, and true is a set bit.
func TestHandDerived(t *testing.T) {
	m := mustBools(t, []int{9}, "1011 0000 1")
	assert.Equal(t, []byte{0x0d, 0x01}, m.Bytes())
	assert.Equal(t, []byte{1, 0, 1, 1, 0, 0, 0, 0, 1}, m.Flags())
	assert.Equal(t, bools("101100001"), m.Bools())
	assert.Equal(t, 4, m.Count())
	assert.True(t, m.Any())
	assert.False(t, m.All())
	assert.Equal(t, 0, m.FirstSet())
	assert.Equal(t, 2, m.NextSet(1))
	assert.Equal(t, 8, m.NextSet(4))
	assert.Equal(t, -1, m.NextSet(9))
	assert.Equal(t, 1, m.NextClear(0))
	assert.Equal(t, 4, m.NextClear(2))
	assert.Equal(t, -1, m.NextClear(8))
	assert.Equal(t, []int{9}, m.Shape())
	assert.Equal(t, 1, m.Rank())
	assert.Equal(t, 9, m.Len())
	assert.Equal(t, "[1 0 1 1 0 0 0 0 1]", m.String())
	assert.Equal(t, []byte{0xf2, 0x00}, m.Not().Bytes())
}

func TestConstructors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  func() (*Mask, error)
		shape []int
		bytes []byte
	}{
		{"new", func() (*Mask, error) { return New([]int{2, 5}) }, []int{2, 5}, []byte{0, 0}},
		{"full true", func() (*Mask, error) { return Full([]int{2, 5}, true) }, []int{2, 5}, []byte{0xff, 0x03}},
		{"full false", func() (*Mask, error) { return Full([]int{3}, false) }, []int{3}, []byte{0}},
		{"full 16", func() (*Mask, error) { return Full([]int{16}, true) }, []int{16}, []byte{0xff, 0xff}},
		{"rank 0", func() (*Mask, error) { return Full([]int{}, true) }, []int{}, []byte{1}},
		{"empty", func() (*Mask, error) { return Full([]int{4, 0, 3}, true) }, []int{4, 0, 3}, []byte{}},
		{"flags", func() (*Mask, error) { return FromFlags([]int{3, 3}, []byte{0, 1, 1, 0, 0, 0, 0, 0, 1}) }, []int{3, 3}, []byte{0x06, 0x01}},
		{"bytes", func() (*Mask, error) { return FromBytes([]int{10}, []byte{0x81, 0x02}) }, []int{10}, []byte{0x81, 0x02}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.make()
			require.NoError(t, err)
			assert.Equal(t, tc.shape, m.Shape())
			assert.Equal(t, tc.bytes, m.Bytes())
		})
	}
}

func TestZeroMask(t *testing.T) {
	var m Mask
	assert.Equal(t, []int{0}, m.Shape())
	assert.Equal(t, 0, m.Len())
	assert.Equal(t, 0, m.Count())
	assert.False(t, m.Any())
	assert.True(t, m.All())
	assert.Equal(t, -1, m.FirstSet())
	assert.Equal(t, "[]", m.String())
	e, err := New([]int{0})
	require.NoError(t, err)
	assert.True(t, m.Equal(e))
	b, err := m.Broadcast([]int{3, 0})
	require.NoError(t, err)
	assert.Equal(t, []int{3, 0}, b.Shape())
}

func TestRankZero(t *testing.T) {
	m, err := FromBools([]int{}, []bool{true})
	require.NoError(t, err)
	assert.Equal(t, 1, m.Len())
	assert.Equal(t, 0, m.Rank())
	assert.True(t, m.At())
	assert.Equal(t, "1", m.String())
	b, err := m.Broadcast([]int{2, 2})
	require.NoError(t, err)
	assert.Equal(t, "[[1 1] [1 1]]", b.String())
	m.SetAt(false)
	assert.Equal(t, "0", m.String())
}

func TestConstructorErrors(t *testing.T) {
	var se *ShapeError
	var de *DecodeError
	_, err := New([]int{2, -1})
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "dimension 1 is negative")
	_, err = New([]int{1 << 30, 1 << 30, 1 << 30})
	assert.ErrorIs(t, err, ErrShape)
	_, err = FromBools([]int{2, 2}, make([]bool, 5))
	assert.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "5 flags for 4 elements")
	_, err = FromFlags([]int{4}, []byte{0, 1, 1, 2})
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, ErrDecode)
	assert.Equal(t, 3, de.Offset)
	assert.Equal(t, byte(2), de.Value)
	_, err = FromFlags([]int{4}, []byte{0, 1, 1})
	assert.ErrorIs(t, err, ErrShape)
	_, err = FromBytes([]int{10}, []byte{0xff})
	assert.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "1 bytes, want 2")
	_, err = FromBytes([]int{10}, []byte{0xff, 0x07}) // bit 2 of byte 1 is element 10
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 1, de.Offset)
	assert.Contains(t, err.Error(), "padding bits 2..7")
	_, err = FromBytes([]int{16}, []byte{0xff, 0xff}) // no padding to check
	assert.NoError(t, err)
}

func TestElements(t *testing.T) {
	m, err := New([]int{2, 3, 4})
	require.NoError(t, err)
	m.SetAt(true, 1, 2, 3) // offset 1·12 + 2·4 + 3 = 23
	m.SetAt(true, 0, 1, 0) // offset 4
	m.Set(9, true)
	assert.Equal(t, []byte{0x10, 0x02, 0x80}, m.Bytes())
	assert.True(t, m.At(1, 2, 3))
	assert.True(t, m.Get(23))
	assert.True(t, m.At(0, 2, 1)) // offset 9
	assert.False(t, m.At(0, 0, 0))
	i, err := m.Index(1, 0, 2)
	require.NoError(t, err)
	assert.Equal(t, 14, i)
	m.Set(23, false)
	assert.False(t, m.Get(23))

	_, err = m.Index(1, 3, 0)
	assert.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "index 3 out of range [0, 3) in dimension 1")
	_, err = m.Index(1, 2)
	assert.ErrorIs(t, err, ErrShape)
	assert.Panics(t, func() { m.Get(24) })
	assert.Panics(t, func() { m.Get(-1) })
	assert.Panics(t, func() { m.Set(24, true) })
	assert.Panics(t, func() { m.At(0, 0) })
	assert.Panics(t, func() { m.SetAt(true, 0, 0, 4) })
	assert.Panics(t, func() { m.SetRange(3, 2, true) })
	assert.Panics(t, func() { m.CountRange(0, 25) })
}

// TestRanges sets and counts ranges that start and end inside bytes, on
// byte boundaries and across words, against a []bool model.
func TestRanges(t *testing.T) {
	const n = 203
	m, err := New([]int{n})
	require.NoError(t, err)
	model := make([]bool, n)
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		lo := r.IntN(n + 1)
		hi := lo + r.IntN(n+1-lo)
		v := r.IntN(2) == 0
		m.SetRange(lo, hi, v)
		for i := lo; i < hi; i++ {
			model[i] = v
		}
		require.Equal(t, model, m.Bools())
		a := r.IntN(n + 1)
		b := a + r.IntN(n+1-a)
		want := 0
		for _, x := range model[a:b] {
			if x {
				want++
			}
		}
		require.Equal(t, want, m.CountRange(a, b), "[%d, %d)", a, b)
	}
	m.SetRange(0, n, true)
	assert.True(t, m.All())
	assert.Equal(t, []byte{0x07}, m.Bytes()[25:]) // 203 = 25·8 + 3: padding stays clear
}

// naive reductions over a []bool, the independent model of the mask's.
func naiveCount(b []bool) int {
	c := 0
	for _, x := range b {
		if x {
			c++
		}
	}
	return c
}

func naiveFirst(b []bool, from int, v bool) int {
	for i := max(from, 0); i < len(b); i++ {
		if b[i] == v {
			return i
		}
	}
	return -1
}

// TestExhaustiveSmall checks every mask of up to 11 elements (and some
// longer ones): the conversions round-trip, and the reductions and Not equal
// the naive ones over []bool.
func TestExhaustiveSmall(t *testing.T) {
	check := func(b []bool) {
		n := len(b)
		m, err := FromBools([]int{n}, b)
		require.NoError(t, err)
		require.Equal(t, b, m.Bools())
		packed := m.Bytes()
		require.Len(t, packed, (n+7)/8)
		for i, x := range b {
			require.Equal(t, x, packed[i/8]>>(i%8)&1 == 1)
		}
		back, err := FromBytes([]int{n}, packed)
		require.NoError(t, err)
		require.True(t, m.Equal(back))
		flags := m.Flags()
		back, err = FromFlags([]int{n}, flags)
		require.NoError(t, err)
		require.True(t, m.Equal(back))
		c := naiveCount(b)
		require.Equal(t, c, m.Count())
		require.Equal(t, c > 0, m.Any())
		require.Equal(t, c == n, m.All())
		require.Equal(t, naiveFirst(b, 0, true), m.FirstSet())
		for i := -1; i <= n; i++ {
			require.Equal(t, naiveFirst(b, i, true), m.NextSet(i), "next set %d of %v", i, b)
			require.Equal(t, naiveFirst(b, i, false), m.NextClear(i), "next clear %d of %v", i, b)
		}
		not := m.Not()
		for i, x := range b {
			require.Equal(t, !x, not.Get(i))
		}
		require.Equal(t, n-c, not.Count())
		require.True(t, m.Equal(not.Not()))
	}
	for n := 0; n <= 11; n++ {
		for bitsv := range 1 << n {
			b := make([]bool, n)
			for i := range b {
				b[i] = bitsv>>i&1 == 1
			}
			check(b)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{63, 64, 65, 127, 128, 129, 200, 511, 512, 513, 1000, 4099} {
		for _, density := range []int{0, 1, 2, 50, -1} { // one in density set; -1: all
			b := make([]bool, n)
			for i := range b {
				b[i] = density == -1 || density > 0 && r.IntN(density) == 0
			}
			check(b)
			if n > 0 {
				b[n-1] = !b[n-1] // the last element alone
				check(b)
			}
		}
	}
}

// naiveBroadcast stretches vals, of shape from, to shape to by index
// arithmetic: each target index, taken modulo the source's sizes (0 where the
// source has 1), names the source element.
func naiveBroadcast(vals []bool, from, to []int) []bool {
	n := 1
	for _, d := range to {
		n *= d
	}
	out := make([]bool, n)
	off := len(to) - len(from)
	for i := range out {
		rem, src, stride := i, 0, 1
		for d := len(to) - 1; d >= 0; d-- {
			idx := rem % to[d]
			rem /= to[d]
			if d >= off {
				fd := from[d-off]
				if fd != 1 {
					src += idx * stride
				}
				stride *= fd
			}
		}
		out[i] = vals[src]
	}
	return out
}

func TestBroadcastHand(t *testing.T) {
	// [3,1,1] against [3,4,5]: every element of block i is element i.
	m := mustBools(t, []int{3, 1, 1}, "101")
	b, err := m.Broadcast([]int{3, 4, 5})
	require.NoError(t, err)
	want := make([]bool, 60)
	for i := range 20 {
		want[i], want[40+i] = true, true
	}
	assert.Equal(t, want, b.Bools())
	// [5] against [3,4,5]: every row is the mask.
	m = mustBools(t, []int{5}, "10011")
	b, err = m.Broadcast([]int{3, 4, 5})
	require.NoError(t, err)
	want = nil
	for range 12 {
		want = append(want, bools("10011")...)
	}
	assert.Equal(t, want, b.Bools())
	// [2,1] against [2,3]: columns.
	m = mustBools(t, []int{2, 1}, "10")
	b, err = m.Broadcast([]int{2, 3})
	require.NoError(t, err)
	assert.Equal(t, "[[1 1 1] [0 0 0]]", b.String())
	// [1,3] against [2,1,3] (a stretched middle).
	m = mustBools(t, []int{1, 3}, "011")
	b, err = m.Broadcast([]int{2, 1, 3})
	require.NoError(t, err)
	assert.Equal(t, "[[[0 1 1]] [[0 1 1]]]", b.String())
	// [2,1,3] against [2,2,3].
	m = mustBools(t, []int{2, 1, 3}, "100 011")
	b, err = m.Broadcast([]int{2, 2, 3})
	require.NoError(t, err)
	assert.Equal(t, "[[[1 0 0] [1 0 0]] [[0 1 1] [0 1 1]]]", b.String())

	for _, bad := range []struct{ from, to []int }{
		{[]int{2}, []int{3}},
		{[]int{3, 1, 1}, []int{1, 4, 5}},
		{[]int{2, 3}, []int{3}},
		{[]int{4}, []int{4, 3}},
	} {
		m, err := New(bad.from)
		require.NoError(t, err)
		_, err = m.Broadcast(bad.to)
		assert.ErrorIs(t, err, ErrShape, "%v to %v", bad.from, bad.to)
	}
}

// TestBroadcastRandom compares Broadcast with the naive index arithmetic
// over random shapes, including runs longer than a word and odd sizes.
func TestBroadcastRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		rank := r.IntN(5)
		to := make([]int, rank)
		for i := range to {
			to[i] = 1 + r.IntN(7)
			if r.IntN(10) == 0 {
				to[i] = 60 + r.IntN(80)
			}
		}
		if slices.ContainsFunc(to, func(d int) bool { return d > 50 }) && len(to) > 3 {
			continue
		}
		fr := r.IntN(rank + 1)
		from := slices.Clone(to[rank-fr:])
		for i := range from {
			if r.IntN(2) == 0 {
				from[i] = 1
			}
		}
		n := 1
		for _, d := range from {
			n *= d
		}
		vals := make([]bool, n)
		for i := range vals {
			vals[i] = r.IntN(2) == 0
		}
		m, err := FromBools(from, vals)
		require.NoError(t, err)
		b, err := m.Broadcast(to)
		require.NoError(t, err)
		require.Equal(t, naiveBroadcast(vals, from, to), b.Bools(), "%v to %v", from, to)
		require.Equal(t, to, b.Shape())
	}
}

func TestBroadcastShapes(t *testing.T) {
	for _, tc := range []struct {
		in   [][]int
		want []int
	}{
		{nil, []int{}},
		{[][]int{{3, 4, 5}, {3, 1, 1}}, []int{3, 4, 5}},
		{[][]int{{3, 4, 5}, {5}}, []int{3, 4, 5}},
		{[][]int{{2, 1}, {1, 3}}, []int{2, 3}},
		{[][]int{{1}, {0}}, []int{0}},
		{[][]int{{}, {2, 2}}, []int{2, 2}},
		{[][]int{{8, 1, 6, 1}, {7, 1, 5}}, []int{8, 7, 6, 5}}, // NumPy's documentation example
		{[][]int{{5, 4}, {1}}, []int{5, 4}},
		{[][]int{{15, 3, 5}, {15, 1, 5}, {3, 1}}, []int{15, 3, 5}},
	} {
		got, err := BroadcastShapes(tc.in...)
		require.NoError(t, err, "%v", tc.in)
		assert.Equal(t, tc.want, got, "%v", tc.in)
	}
	for _, bad := range [][][]int{{{3}, {4}}, {{2, 1}, {8, 4, 3}}, {{2}, {-1}}} {
		_, err := BroadcastShapes(bad...)
		assert.ErrorIs(t, err, ErrShape, "%v", bad)
	}
}

// naiveOp combines two masks element by element after the naive broadcast.
func naiveOp(a, b []bool, as, bs, to []int, f func(x, y bool) bool) []bool {
	x, y := naiveBroadcast(a, as, to), naiveBroadcast(b, bs, to)
	out := make([]bool, len(x))
	for i := range out {
		out[i] = f(x[i], y[i])
	}
	return out
}

func TestLogicHand(t *testing.T) {
	a := mustBools(t, []int{2, 3}, "110 011")
	b := mustBools(t, []int{3}, "101")
	for _, tc := range []struct {
		name string
		op   func(x, y *Mask) (*Mask, error)
		want string
	}{
		{"and", (*Mask).And, "[[1 0 0] [0 0 1]]"},
		{"or", (*Mask).Or, "[[1 1 1] [1 1 1]]"},
		{"xor", (*Mask).Xor, "[[0 1 1] [1 1 0]]"},
		{"and not", (*Mask).AndNot, "[[0 1 0] [0 1 0]]"},
	} {
		got, err := tc.op(a, b)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got.String(), tc.name)
	}
	// Both sides stretch: [2,1] and [1,3] give [2,3].
	c := mustBools(t, []int{2, 1}, "10")
	d := mustBools(t, []int{1, 3}, "011")
	got, err := c.Or(d)
	require.NoError(t, err)
	assert.Equal(t, "[[1 1 1] [0 1 1]]", got.String())
	_, err = a.And(mustBools(t, []int{2}, "11"))
	assert.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "mask: and:")
	// The operands are unchanged.
	assert.Equal(t, "[[1 1 0] [0 1 1]]", a.String())
	assert.Equal(t, "[1 0 1]", b.String())
}

// TestLogicExhaustive runs every pair of masks of small broadcasting shapes
// through the four operations against the naive ones.
func TestLogicExhaustive(t *testing.T) {
	ops := []struct {
		op func(x, y *Mask) (*Mask, error)
		f  func(x, y bool) bool
	}{
		{(*Mask).And, func(x, y bool) bool { return x && y }},
		{(*Mask).Or, func(x, y bool) bool { return x || y }},
		{(*Mask).Xor, func(x, y bool) bool { return x != y }},
		{(*Mask).AndNot, func(x, y bool) bool { return x && !y }},
	}
	pairs := [][2][]int{{{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{3}, {2, 3}}, {{5}, {5}}, {{}, {2, 2}}, {{1, 2, 1}, {3, 1, 2}}}
	for _, p := range pairs {
		to, err := BroadcastShapes(p[0], p[1])
		require.NoError(t, err)
		na, nb := 1, 1
		for _, d := range p[0] {
			na *= d
		}
		for _, d := range p[1] {
			nb *= d
		}
		for va := range 1 << na {
			for vb := range 1 << nb {
				a, b := make([]bool, na), make([]bool, nb)
				for i := range a {
					a[i] = va>>i&1 == 1
				}
				for i := range b {
					b[i] = vb>>i&1 == 1
				}
				ma, err := FromBools(p[0], a)
				require.NoError(t, err)
				mb, err := FromBools(p[1], b)
				require.NoError(t, err)
				for k, o := range ops {
					got, err := o.op(ma, mb)
					require.NoError(t, err)
					require.Equal(t, to, got.Shape())
					require.Equal(t, naiveOp(a, b, p[0], p[1], to, o.f), got.Bools(), "op %d of %v %v", k, a, b)
				}
			}
		}
	}
}

// TestLogicLong checks long masks (several words, odd lengths) against the
// naive operations, so that the word loops and the byte tails both run.
func TestLogicLong(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 7, 9, 63, 64, 65, 100, 1031} {
		a, b := make([]bool, n), make([]bool, n)
		for i := range a {
			a[i], b[i] = r.IntN(2) == 0, r.IntN(3) == 0
		}
		ma, err := FromBools([]int{n}, a)
		require.NoError(t, err)
		mb, err := FromBools([]int{n}, b)
		require.NoError(t, err)
		and, _ := ma.And(mb)
		or, _ := ma.Or(mb)
		xor, _ := ma.Xor(mb)
		andNot, _ := ma.AndNot(mb)
		for i := range a {
			require.Equal(t, a[i] && b[i], and.Get(i))
			require.Equal(t, a[i] || b[i], or.Get(i))
			require.Equal(t, a[i] != b[i], xor.Get(i))
			require.Equal(t, a[i] && !b[i], andNot.Get(i))
		}
		// Padding bits stay clear: a round trip through FromBytes accepts them.
		for _, m := range []*Mask{and, or, xor, andNot, ma.Not()} {
			_, err := FromBytes([]int{n}, m.Bytes())
			require.NoError(t, err)
		}
	}
}

func TestReshapeCloneEqual(t *testing.T) {
	m := mustBools(t, []int{2, 3}, "110 011")
	r, err := m.Reshape([]int{3, 2})
	require.NoError(t, err)
	assert.Equal(t, "[[1 1] [0 0] [1 1]]", r.String())
	assert.False(t, m.Equal(r)) // same bits, other shape
	_, err = m.Reshape([]int{4})
	assert.ErrorIs(t, err, ErrShape)
	c := m.Clone()
	assert.True(t, m.Equal(c))
	c.Set(0, false)
	assert.False(t, m.Equal(c))
	assert.True(t, m.Get(0))
	assert.Equal(t, 0, m.firstDiff(c))
	c.Set(0, true)
	c.Set(5, false)
	assert.Equal(t, 5, m.firstDiff(c))
	assert.Equal(t, -1, m.firstDiff(m.Clone()))
}

func TestErrorMessages(t *testing.T) {
	err := error(&ShapeError{Op: "select", Shape: []int{2, 3}, Reason: "dst holds 5 floats for 6 elements"})
	assert.Equal(t, "mask: select: shape [2 3]: dst holds 5 floats for 6 elements", err.Error())
	err = &ShapeError{Op: "broadcast", Shape: []int{2}, Other: []int{3}, Reason: "x"}
	assert.Equal(t, "mask: broadcast: shape [2] against [3]: x", err.Error())
	err = &DecodeError{Offset: 3, Value: 2, Reason: "a flag byte must be 0 or 1"}
	assert.Equal(t, "mask: byte 3 (0x02): a flag byte must be 0 or 1", err.Error())
	err = fmt.Errorf("keep.npy: %w", &BufferError{Op: "apply", Err: ErrNotMaterialized})
	assert.ErrorIs(t, err, ErrNotMaterialized)
	assert.Equal(t, "keep.npy: mask: buffer apply: buffer used before Materialize", err.Error())
	assert.False(t, errors.Is(err, ErrReleased))
}
