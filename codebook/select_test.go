package codebook

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSelectG12 runs golden G12 (docs/CODEBOOK.md §4.5) through Select.
func TestSelectG12(t *testing.T) {
	cb, err := Parse("icb44fi_e2m3fnuz")
	require.NoError(t, err)
	x := g12Input()
	codes := make([]uint8, 32)
	meta := make([]uint8, 4)
	require.NoError(t, cb.Select(codes, meta, x, 8, nil))
	assert.Equal(t, []uint8{5, 11, 8, 3}, meta)
	got := make([]float32, 32)
	require.NoError(t, cb.Decode(got, codes, meta, 8, 1))
	want := []float32{
		0, .25, .25, .25, .75, .75, .75, .75,
		.75, 1.75, 1.75, 2.5, 3.5, 3.5, 4, 5,
		5.5, 6.5, 6.5, -7.5, 0, 0, 0, 0,
		.5, .5, .5, 1, 1, 1, 1, 1,
	}
	assert.Equal(t, want, got)
	assert.Equal(t, uint8(8|7), codes[19], "−7.5 is code 7 of i_0 with the sign bit")
	one := make([]uint8, 1)
	require.NoError(t, cb.Select(codes, one, x, 32, nil))
	assert.Equal(t, []uint8{10}, one)
	// The same with the values doubled and a scale of 2.
	x2 := make([]float32, 32)
	for i, v := range x {
		x2[i] = 2 * v
	}
	require.NoError(t, cb.Select(codes, meta, x2, 8, &SelectOptions{Mul: 0.5, Scale: 2}))
	assert.Equal(t, []uint8{5, 11, 8, 3}, meta)
	require.NoError(t, cb.Decode(got, codes, meta, 8, 2))
	for i := range want {
		assert.Equal(t, 2*want[i], got[i])
	}
}

// TestSelectCriterion: x = nine zeros and a 2, tables A = {0, 1.2} and B =
// {0.3, 1.7}. Squared error: A 0.64, B 9·0.09 + 0.09 = 0.9, so A; largest
// error: A 0.8, B 0.3, so B.
func TestSelectCriterion(t *testing.T) {
	a, err := NewTable("A", []float32{0, 1.2}, nil)
	require.NoError(t, err)
	b, err := NewTable("B", []float32{0.3, 1.7}, nil)
	require.NoError(t, err)
	cb, err := New("ab", 1, []*Table{a, b}, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, cb.MetaBits())
	x := []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 2}
	codes := make([]uint8, len(x))
	meta := make([]uint8, 1)
	require.NoError(t, cb.Select(codes, meta, x, 10, nil))
	assert.Equal(t, uint8(0), meta[0])
	maxErr := func(x, q []float32) float64 {
		m := 0.0
		for i := range x {
			m = max(m, math.Abs(float64(q[i]-x[i])))
		}
		return m
	}
	require.NoError(t, cb.Select(codes, meta, x, 10, &SelectOptions{Criterion: maxErr}))
	assert.Equal(t, uint8(1), meta[0])
	assert.Equal(t, []uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, codes)
	// Equal scores: the first table.
	cb2, err := New("aa", 1, []*Table{a, a}, nil)
	require.NoError(t, err)
	require.NoError(t, cb2.Select(codes, meta, x, 10, nil))
	assert.Equal(t, uint8(0), meta[0])
}

func TestSelectGroups(t *testing.T) {
	lo, err := NewTable("lo", []float32{0, 1, 2, 3}, nil)
	require.NoError(t, err)
	hi, err := NewTable("hi", []float32{0, 10, 20, 30}, nil)
	require.NoError(t, err)
	cb, err := New("lohi", 2, []*Table{lo, hi}, nil)
	require.NoError(t, err)
	// Groups of 3, the last of 1.
	x := []float32{1, 2, 3, 10, 21, 29, 2.4}
	codes := make([]uint8, len(x))
	meta := make([]uint8, 3)
	require.NoError(t, cb.Select(codes, meta, x, 3, nil))
	assert.Equal(t, []uint8{0, 1, 0}, meta)
	assert.Equal(t, []uint8{1, 2, 3, 1, 2, 3, 2}, codes)
	assert.ErrorIs(t, cb.Select(codes, meta, x, 0, nil), ErrArg)
	assert.ErrorIs(t, cb.Select(codes[:3], meta, x, 3, nil), ErrArg)
	assert.ErrorIs(t, cb.Select(codes, meta[:2], x, 3, nil), ErrArg)
	// Decode errors: a meta field past the tables, a code past a table.
	out := make([]float32, len(x))
	err = cb.Decode(out, codes, []uint8{0, 2, 0}, 3, 1)
	assert.ErrorIs(t, err, ErrMeta)
	var me *MetaError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 1, me.Offset)
	err = cb.Decode(out, []uint8{0, 4, 0}, []uint8{0}, 3, 1)
	assert.ErrorIs(t, err, ErrCode)
	assert.ErrorIs(t, cb.Decode(out, codes, meta, 0, 1), ErrArg)
}

func TestNewCodebookErrors(t *testing.T) {
	a := NF4()
	for _, c := range []struct {
		tables []*Table
		index  int
	}{
		{nil, 4}, {[]*Table{a, a, a}, 4}, {[]*Table{a}, 0}, {[]*Table{a}, 9}, {[]*Table{a}, 3}, {[]*Table{a, nil}, 4},
	} {
		_, err := New("x", c.index, c.tables, nil)
		assert.ErrorIs(t, err, ErrArg, "%d tables, %d bits", len(c.tables), c.index)
	}
	cb, err := New("one", 4, []*Table{a}, nil)
	require.NoError(t, err)
	assert.Equal(t, 0, cb.MetaBits())
	assert.Equal(t, float32(1), cb.MaxAbs())
}

// TestMetaPacking checks meta packing byte by byte against hand-packed
// LSB-first streams.
func TestMetaPacking(t *testing.T) {
	for _, c := range []struct {
		meta []uint8
		bits int
		want []byte
	}{
		{[]uint8{1, 0, 1, 1, 0, 0, 0, 1}, 1, []byte{0x8D}},
		{[]uint8{1, 0, 1}, 1, []byte{0x05}},
		{[]uint8{1, 2, 3, 0, 3}, 2, []byte{0x39, 0x03}},
		{[]uint8{7, 1, 2}, 3, []byte{0x8F, 0x00}},
		{[]uint8{5, 10, 15}, 4, []byte{0xA5, 0x0F}},
		{[]uint8{200, 7}, 8, []byte{200, 7}},
		{nil, 4, []byte{}},
	} {
		got := make([]byte, MetaLen(len(c.meta), c.bits))
		require.NoError(t, PackMeta(got, c.meta, c.bits))
		assert.Equal(t, c.want, got, "%v/%d", c.meta, c.bits)
		back := make([]uint8, len(c.meta))
		require.NoError(t, UnpackMeta(back, got, c.bits))
		if len(c.meta) > 0 {
			assert.Equal(t, c.meta, back)
		}
	}
	assert.ErrorIs(t, PackMeta(make([]byte, 1), []uint8{4}, 2), ErrMeta)
	assert.ErrorIs(t, PackMeta(make([]byte, 1), []uint8{1}, 0), ErrArg)
	assert.ErrorIs(t, PackMeta(make([]byte, 0), []uint8{1}, 2), ErrArg)
	assert.ErrorIs(t, UnpackMeta(make([]uint8, 3), []byte{0x05, 0}, 1), ErrMeta, "too long")
	assert.ErrorIs(t, UnpackMeta(make([]uint8, 9), []byte{0xff}, 1), ErrMeta, "too short")
	err := UnpackMeta(make([]uint8, 3), []byte{0x0D}, 1)
	assert.ErrorIs(t, err, ErrMeta, "padding bit 3 set")
	assert.Contains(t, err.Error(), "padding")
	assert.ErrorIs(t, UnpackMeta(make([]uint8, 1), []byte{0}, 9), ErrArg)
}

// FuzzUnpackMeta decodes arbitrary bytes as meta: no panic, an error
// exactly when the length or the padding is wrong, and a successful decode
// packs back to the same bytes.
func FuzzUnpackMeta(f *testing.F) {
	f.Add([]byte{0x39, 0x03}, uint8(2), uint16(5))
	f.Add([]byte{0x0D}, uint8(1), uint16(3))
	f.Fuzz(func(t *testing.T, src []byte, bits uint8, n uint16) {
		b := int(bits%9) + 0 // 0..8, 0 is invalid
		dst := make([]uint8, n)
		err := UnpackMeta(dst, src, b)
		if b == 0 {
			if err == nil {
				t.Fatal("0 bits accepted")
			}
			return
		}
		want := MetaLen(int(n), b)
		pad := int(n) * b % 8
		bad := len(src) != want || (pad != 0 && src[want-1]>>pad != 0)
		if bad != (err != nil) {
			t.Fatalf("bits %d n %d src %x: err %v", b, n, src, err)
		}
		if err != nil {
			return
		}
		back := make([]byte, want)
		if err := PackMeta(back, dst, b); err != nil {
			t.Fatal(err)
		}
		if string(back) != string(src) {
			t.Fatalf("round trip %x → %x", src, back)
		}
	})
}

// FuzzCodebookDecode decodes arbitrary codes and meta through a codebook
// whose tables have fewer entries than their codes allow: no panic, and an
// error exactly when a code or a meta field has no entry.
func FuzzCodebookDecode(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6}, []byte{0, 1}, uint8(4))
	f.Fuzz(func(t *testing.T, codes, meta []byte, group uint8) {
		five, err := NewTable("five", []float32{-2, -1, 0, 1, 2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cb, err := New("f", 3, []*Table{five, NF4()}, nil) // NF4 needs 4 bits
		if err == nil {
			t.Fatal("a 4-bit table in a 3-bit codebook")
		}
		cb, err = New("f", 4, []*Table{five, NF4()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := int(group)
		out := make([]float32, len(codes))
		err = cb.Decode(out, codes, meta, g, 1)
		bad := g < 1 || len(meta) < (len(codes)+max(g, 1)-1)/max(g, 1)
		if !bad {
			for i, c := range codes {
				m := meta[i/g]
				if m > 1 || (m == 0 && c >= 5) || (m == 1 && c >= 16) {
					bad = true
					break
				}
			}
		}
		if bad != (err != nil) {
			t.Fatalf("codes %v meta %v group %d: err %v", codes, meta, g, err)
		}
	})
}

// TestSelectPlan: the fast path of signed codebooks selects and encodes
// exactly as the general path (forced by a criterion that is SquaredError),
// on random values, special values and several scales.
func TestSelectPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	sse := func(x, q []float32) float64 { return SquaredError(x, q) }
	fp4s, err := New("fp4s", 4, []*Table{FP4(), E2M1()}, nil)
	require.NoError(t, err)
	assert.Nil(t, fp4s.plan(), "different sign rules")
	for _, name := range []string{"icb44fi_e2m3fnuz", "icb42fi_e4m3fn", "cb41fi_e2m2fnuz", "cb42fe0123_e3m2fnuz", "cb81ie_int9", "cb31ie_int5", "fp4", "e2m1"} {
		cb, err := Parse(name)
		if t := Builtin(name); t != nil || name == "fp4" {
			if name == "fp4" {
				t = FP4()
			}
			cb, err = New(name, 4, []*Table{t, t}, nil) // −0 as +0 (fp4) or with its sign
		}
		require.NoError(t, err)
		require.NotNil(t, cb.plan(), name)
		for trial := range 20 {
			n := 1 + r.IntN(300)
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(6)-2))
				switch r.IntN(40) {
				case 0:
					x[i] = float32(math.NaN())
				case 1:
					x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
				case 2:
					x[i] = negZero
				case 3:
					x[i] = 0
				}
			}
			group := []int{1, 2, 4, 8, 16, 32, 5}[trial%7]
			mul := float32(math.Ldexp(1, r.IntN(5)-2))
			opts := &SelectOptions{Mul: mul, Scale: 1 / mul}
			ng := (n + group - 1) / group
			c1, m1 := make([]uint8, n), make([]uint8, ng)
			c2, m2 := make([]uint8, n), make([]uint8, ng)
			require.NoError(t, cb.Select(c1, m1, x, group, opts))
			opts.Criterion = sse
			require.NoError(t, cb.Select(c2, m2, x, group, opts))
			require.Equal(t, m2, m1, "%s trial %d", name, trial)
			require.Equal(t, c2, c1, "%s trial %d", name, trial)
		}
	}
	// Unsigned tables take the general path.
	a, _ := NewTable("a", []float32{0, 1}, nil)
	cb, err := New("u", 1, []*Table{a, a}, nil)
	require.NoError(t, err)
	assert.Nil(t, cb.plan())
}

// TestSelectBlocks: SelectBlocks, EncodeBlocks and DecodeBlocks equal the
// one-block calls (Select through the general path, forced by a criterion
// that is SquaredError; EncodeScaled; Decode) block by block, with scales
// that are and are not powers of two, scales whose products overflow, and
// edge values.
func TestSelectBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	sse := func(x, q []float32) float64 { return SquaredError(x, q) }
	a, _ := NewTable("a", []float32{-1, 0, 0.5, 2}, nil)
	b, _ := NewTable("b", []float32{-2, -0.25, 0, 1}, nil)
	plain, err := New("plain", 2, []*Table{a, b}, nil)
	require.NoError(t, err)
	books := []*Codebook{plain}
	for _, name := range []string{"icb44fi_e2m3fnuz", "icb44fi_e4m3fn", "cb41fi_e2m2fnuz", "cb42fe0123_e3m2fnuz", "cb81ie_int9", "cb51ie_int7"} {
		cb, err := Parse(name)
		require.NoError(t, err)
		books = append(books, cb)
	}
	for _, cb := range books {
		for trial := range 12 {
			group := []int{1, 2, 4, 8, 16, 32}[trial%6]
			block := group * (1 + r.IntN(4))
			n := r.IntN(5 * block)
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 4)
				switch r.IntN(30) {
				case 0:
					x[i] = float32(math.NaN())
				case 1:
					x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
				case 2:
					x[i] = negZero
				}
			}
			nb, ng := (n+block-1)/block, (n+group-1)/group
			muls, scales := make([]float32, nb), make([]float32, nb)
			for i := range muls {
				scales[i] = float32(math.Ldexp(1, r.IntN(7)-3))
				switch r.IntN(6) {
				case 0:
					scales[i] *= 1.375
				case 1:
					scales[i] = 1e-30 // x·mul overflows
				case 2:
					scales[i] = 3e38 // entry·scale overflows
				}
				muls[i] = 1 / scales[i]
			}
			codes, meta := make([]uint8, n), make([]uint8, ng)
			require.NoError(t, cb.NewSelector().SelectBlocks(codes, meta, x, group, block, muls, scales))
			got := make([]float32, n)
			require.NoError(t, cb.DecodeBlocks(got, codes, meta, group, block, scales))
			for bi := range nb {
				lo, hi := bi*block, min((bi+1)*block, n)
				c1, m1 := make([]uint8, hi-lo), make([]uint8, (hi-lo+group-1)/group)
				opts := &SelectOptions{Mul: muls[bi], Scale: scales[bi], Criterion: sse}
				require.NoError(t, cb.Select(c1, m1, x[lo:hi], group, opts))
				require.Equal(t, m1, meta[lo/group:lo/group+len(m1)], "%s trial %d block %d meta", cb.Name(), trial, bi)
				require.Equal(t, c1, codes[lo:hi], "%s trial %d block %d codes", cb.Name(), trial, bi)
				want := make([]float32, hi-lo)
				require.NoError(t, cb.Decode(want, c1, m1, group, scales[bi]))
				require.Equal(t, bitsOf(want), bitsOf(got[lo:hi]), "%s trial %d block %d decode", cb.Name(), trial, bi)
			}
			// One table's encoding with a multiplier per block.
			tb := cb.Table(trial % cb.Len())
			enc := make([]uint8, n)
			require.NoError(t, tb.EncodeBlocks(enc, x, block, muls))
			for bi := range nb {
				lo, hi := bi*block, min((bi+1)*block, n)
				want := make([]uint8, hi-lo)
				tb.EncodeScaled(want, x[lo:hi], muls[bi])
				require.Equal(t, want, enc[lo:hi])
			}
		}
	}
	x := make([]float32, 8)
	sel := plain.NewSelector()
	one := []float32{1, 1}
	require.ErrorIs(t, sel.SelectBlocks(make([]uint8, 8), make([]uint8, 2), x, 4, 6, one, one), ErrArg)
	require.ErrorIs(t, sel.SelectBlocks(make([]uint8, 8), make([]uint8, 1), x, 4, 4, one, one), ErrArg)
	require.ErrorIs(t, sel.SelectBlocks(make([]uint8, 8), make([]uint8, 2), x, 0, 4, one, one), ErrArg)
	require.ErrorIs(t, plain.DecodeBlocks(make([]float32, 8), make([]uint8, 8), make([]uint8, 2), 4, 4, one[:1]), ErrArg)
	require.ErrorIs(t, plain.DecodeBlocks(make([]float32, 8), make([]uint8, 8), []uint8{0, 2}, 4, 4, one), ErrMeta)
	require.ErrorIs(t, plain.DecodeBlocks(make([]float32, 8), []uint8{0, 4, 0, 0, 0, 0, 0, 0}, []uint8{0, 1}, 4, 4, one), ErrCode)
	require.ErrorIs(t, a.EncodeBlocks(make([]uint8, 8), x, 4, one[:1]), ErrArg)
}

func bitsOf(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}

// TestValidCodes checks the eight-at-a-time range check of DecodeBlocks
// against a plain loop: every table size, every byte value at every
// position of a run that has a tail.
func TestValidCodes(t *testing.T) {
	for n := 1; n <= 256; n++ {
		for b := range 256 {
			for pos := range 19 {
				codes := make([]uint8, 19)
				for i := range codes {
					codes[i] = uint8(i % n)
				}
				codes[pos] = uint8(b)
				want := true
				for _, c := range codes {
					want = want && int(c) < n
				}
				if got := validCodes(codes, n); got != want {
					t.Fatalf("n %d: byte %d at %d: got %v", n, b, pos, got)
				}
			}
		}
	}
}
