package layout

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// streamInput is a weight with the values casts get wrong most easily:
// NaN, ±Inf, −0, subnormals, values near float32's top and all-zero
// blocks, among ordinary ones.
func streamInput(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch k := r.IntN(60); k {
		case 0:
			x[i] = float32(math.NaN())
		case 1:
			x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			x[i] = float32(math.Copysign(0, -1))
		case 3:
			x[i] = math.Float32frombits(r.Uint32N(0x7fffff) + 1)
		case 4:
			x[i] = float32(r.NormFloat64() * 1e37)
		default:
			x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(10)-5)))
		}
	}
	if n >= 96 {
		clear(x[32:64])
	}
	return x
}

// streamWhole runs a RowStream over x in chunks of chunk rows dealt round
// robin to workers goroutines, and returns its stored tensors, bits and
// dequantized values.
func streamWhole(t *testing.T, rs RowStream, specs []Spec, c Container, x []float32, chunk, workers int) ([]Tensor, float64, []float32, map[string]string) {
	return streamRows(t, rs, specs, c, x, chunk, workers, false)
}

// streamRows is streamWhole, through CastRowsTo and FinishTail when to is
// set: each chunk is cast into buffers of its own bytes, which are then put
// at their place in the whole buffers (checking that every byte is put
// once), as a converter writes them to its output.
func streamRows(t *testing.T, rs RowStream, specs []Spec, c Container, x []float32, chunk, workers int, to bool) ([]Tensor, float64, []float32, map[string]string) {
	t.Helper()
	out := make([][]byte, len(specs))
	for i, sp := range specs {
		out[i] = make([]byte, sp.Bytes(c))
	}
	deq := make([]float32, len(x))
	n := rs.RowLen()
	var ranges [][2]int
	for r0 := 0; r0 < rs.Rows(); r0 += chunk {
		ranges = append(ranges, [2]int{r0, min(r0+chunk, rs.Rows())})
	}
	run := func(f func(w int, rg [2]int)) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(ranges); i += workers {
					f(w, ranges[i])
				}
			}()
		}
		wg.Wait()
	}
	if rs.NeedsAmax() {
		amax := make([]tcast.Amax, workers)
		run(func(w int, rg [2]int) { amax[w].Add(x[rg[0]*n : rg[1]*n]) })
		for _, a := range amax[1:] {
			amax[0].Merge(a)
		}
		rs.SetAmax(amax[0])
	}
	errs := make([]error, workers)
	scratch := make([]tcast.RowScratch, workers)
	var mu sync.Mutex
	put := make([][]int, len(out)) // how many times each byte was put
	for i := range out {
		put[i] = make([]int, len(out[i]))
	}
	run(func(w int, rg [2]int) {
		lo, hi := rg[0]*n, rg[1]*n
		if !to {
			if err := rs.CastRows(out, x[lo:hi], rg[0], deq[lo:hi], &scratch[w]); err != nil {
				errs[w] = err
			}
			return
		}
		b0, b1 := rs.Written(rg[0]), rs.Written(rg[1])
		mine := make([][]byte, len(out))
		for i := range mine {
			mine[i] = make([]byte, b1[i]-b0[i])
		}
		if err := rs.CastRowsTo(mine, x[lo:hi], rg[0], deq[lo:hi], &scratch[w]); err != nil {
			errs[w] = err
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for i, b := range mine {
			copy(out[i][b0[i]:], b)
			for j := b0[i]; j < b1[i]; j++ {
				put[i][j]++
			}
		}
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	meta := map[string]string{}
	if !to {
		ts, bits, err := rs.Finish(out, meta)
		require.NoError(t, err)
		return ts, bits, deq, meta
	}
	tail, bits, err := rs.FinishTail(meta)
	require.NoError(t, err)
	require.Len(t, tail, len(out))
	end := rs.Written(rs.Rows())
	ts := make([]Tensor, len(out))
	for i, tt := range tail {
		require.Len(t, tt.Data, len(out[i])-end[i], "tail of buffer %d", i)
		copy(out[i][end[i]:], tt.Data)
		for j := end[i]; j < len(out[i]); j++ {
			put[i][j]++
		}
		for j, k := range put[i] {
			require.Equal(t, 1, k, "buffer %d byte %d put %d times", i, j, k)
		}
		ts[i] = Tensor{Spec: tt.Spec, Data: out[i]}
	}
	return ts, bits, deq, meta
}

// TestStreamEqualsEncode streams weights of the tcast and gguf layouts row
// range by row range on several goroutines and compares the stored tensors,
// metadata, bits per value and dequantized values with the whole cast
// followed by Encode, and the values that cast decompresses to.
func TestStreamEqualsEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	tl, err := Get("tcast")
	require.NoError(t, err)
	gl := ggufGet(t)
	cases := []struct {
		lay    Layout
		dt     *tcast.DataType
		opts   tcast.Options
		stream bool
	}{
		{tl, tcast.MustLookup("mxfp4"), tcast.Options{}, true},
		{tl, tcast.MustLookup("mxfp8e4"), tcast.Options{}, true},
		{tl, tcast.MustLookup("mxint8"), tcast.Options{}, true},
		{tl, tcast.MustLookup("nvfp4"), tcast.Options{}, true},
		{tl, tcast.MustLookup("mxfp4"), tcast.Options{Mode: scale.Ceil}, false},
		{tl, tcast.MustLookup("int4_g128"), tcast.Options{}, false},
		{gl, ggufDT(t, "mxfp4"), tcast.Options{}, true},
		{gl, ggufDT(t, "q8_0"), tcast.Options{}, true},
		{gl, ggufDT(t, "q4_0"), tcast.Options{}, true},
		{gl, ggufDT(t, "mxfp4"), tcast.Options{Mode: scale.RCeil}, false},
	}
	for _, c := range cases {
		for _, shape := range [][]int{{1, 32}, {7, 96}, {2, 3, 128}, {64}} {
			n := 1
			for _, d := range shape {
				n *= d
			}
			x := streamInput(r, n)
			name := fmt.Sprintf("%s %s %+v %v", c.lay.Name(), c.dt.Name(), c.opts, shape)
			o := c.opts
			o.Form = tcast.Actual
			var whole *tcast.Tensor
			if ca, ok := c.lay.(Caster); ok {
				whole, err = ca.Cast(x, shape, c.dt, &o)
			} else {
				whole, err = tcast.Cast(x, shape, c.dt, &o)
			}
			require.NoError(t, err, name)
			wantDeq, err := tcast.Decompress(whole)
			require.NoError(t, err, name)
			wantMeta := map[string]string{}
			want, err := c.lay.Encode("w", whole, wantMeta)
			require.NoError(t, err, name)
			specs, _, err := c.lay.Specs("w", shape, c.dt, len(shape)-1)
			require.NoError(t, err, name)

			rs, ok, err := c.lay.(Streamer).Stream("w", shape, c.dt, &c.opts)
			require.NoError(t, err, name)
			require.Equal(t, c.stream, ok, name)
			if !ok {
				continue
			}
			rows := n / shape[len(shape)-1]
			for _, sp := range [][3]int{{rows, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, rows + 2, 0}, {rows, 1, 1}, {1, 2, 1}, {2, 3, 1}} {
				msg := fmt.Sprintf("%s: chunks of %d rows on %d workers (CastRowsTo: %d)", name, sp[0], sp[1], sp[2])
				got, bits, deq, meta := streamRows(t, rs, specs, c.lay.Container(), x, sp[0], sp[1], sp[2] == 1)
				assert.Equal(t, want, got, msg)
				assert.Equal(t, wantMeta, meta, msg)
				assert.Equal(t, whole.BitsPerValue(), bits, msg)
				for i := range wantDeq {
					if math.Float32bits(wantDeq[i]) != math.Float32bits(deq[i]) {
						t.Fatalf("%s: value %d: want %v, got %v", msg, i, wantDeq[i], deq[i])
					}
				}
			}
		}
	}
}

// TestStreamErrors checks that misuse is an error, never a panic.
func TestStreamErrors(t *testing.T) {
	for _, c := range []struct {
		lay Layout
		dt  *tcast.DataType
	}{{ggufGet(t), ggufDT(t, "q8_0")}, {ggufGet(t), ggufDT(t, "mxfp4")}} {
		rs, ok, err := c.lay.(Streamer).Stream("w", []int{4, 64}, c.dt, nil)
		require.NoError(t, err)
		require.True(t, ok)
		specs, _, err := c.lay.Specs("w", []int{4, 64}, c.dt, 1)
		require.NoError(t, err)
		out := [][]byte{make([]byte, specs[0].Bytes(GGUF))}
		x := make([]float32, 64)
		assert.Error(t, rs.CastRows(out, x[:40], 0, nil, nil), "not whole rows")
		assert.Error(t, rs.CastRows(out, x, 4, nil, nil), "past the end")
		assert.Error(t, rs.CastRows(out, x, 0, make([]float32, 2), nil), "short deq")
		assert.Error(t, rs.CastRows([][]byte{out[0][:5]}, x, 0, nil, nil), "short buffer")
		assert.Error(t, rs.CastRows(nil, x, 0, nil, nil), "no buffer")
		_, _, err = rs.Finish(nil, map[string]string{})
		assert.Error(t, err)
		bb := specs[0].Bytes(GGUF) / 4 // one row's bytes
		assert.NoError(t, rs.CastRowsTo([][]byte{make([]byte, bb)}, x, 1, nil, nil))
		assert.Error(t, rs.CastRowsTo([][]byte{make([]byte, bb-1)}, x, 1, nil, nil), "short buffer")
		assert.Error(t, rs.CastRowsTo([][]byte{make([]byte, 2*bb)}, x, 1, nil, nil), "long buffer")
		assert.Error(t, rs.CastRowsTo(nil, x, 1, nil, nil), "no buffer")
		assert.Error(t, rs.CastRowsTo([][]byte{make([]byte, bb)}, x[:40], 1, nil, nil), "not whole rows")
		assert.Error(t, rs.CastRowsTo([][]byte{make([]byte, bb)}, x, 4, nil, nil), "past the end")
	}
	// Layouts that cannot stream a weight say so.
	_, ok, err := ggufGet(t).Stream("w", []int{4, 48}, ggufDT(t, "q8_0"), nil)
	assert.NoError(t, err)
	assert.False(t, ok, "48 is not whole blocks of 32")
}

// TestStreamWritten casts weights row range by row range in order and checks
// after each range that the bytes Written reports are those of the finished
// stored tensors.
func TestStreamWritten(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	tl, err := Get("tcast")
	require.NoError(t, err)
	gl := ggufGet(t)
	for _, c := range []struct {
		lay Layout
		dt  *tcast.DataType
	}{
		{tl, tcast.MustLookup("mxfp4")}, {tl, tcast.MustLookup("mxint8")}, {tl, tcast.MustLookup("nvfp4")},
		{gl, ggufDT(t, "mxfp4")}, {gl, ggufDT(t, "q8_0")}, {gl, ggufDT(t, "q4_0")},
	} {
		shape := []int{9, 64}
		x := streamInput(r, 9*64)
		name := c.lay.Name() + " " + c.dt.Name()
		specs, _, err := c.lay.Specs("w", shape, c.dt, 1)
		require.NoError(t, err)
		rs, ok, err := c.lay.(Streamer).Stream("w", shape, c.dt, nil)
		require.NoError(t, err)
		require.True(t, ok, name)
		want, _, _, _ := streamWhole(t, rs, specs, c.lay.Container(), x, 9, 1)
		if rs.NeedsAmax() {
			var a tcast.Amax
			a.Add(x)
			rs.SetAmax(a)
		}
		out := make([][]byte, len(specs))
		for i, sp := range specs {
			out[i] = make([]byte, sp.Bytes(c.lay.Container()))
		}
		prev := make([]int, len(out))
		for r0 := 0; r0 < 9; r0 += 2 {
			r1 := min(r0+2, 9)
			require.NoError(t, rs.CastRows(out, x[r0*64:r1*64], r0, nil, nil), name)
			w := rs.Written(r1)
			require.Len(t, w, len(out), name)
			for i := range out {
				assert.GreaterOrEqual(t, w[i], prev[i], "%s: buffer %d shrinks", name, i)
				assert.Equal(t, want[i].Data[:w[i]], out[i][:w[i]], "%s: buffer %d after row %d", name, i, r1)
				prev[i] = w[i]
			}
		}
		for i, wb := range rs.Written(9) {
			if wb != len(out[i]) {
				assert.True(t, c.dt.Name() == "nvfp4" && i == 2, "%s: only the tensor scale waits for Finish", name)
			}
		}
	}
}
