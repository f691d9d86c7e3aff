package layout

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// quantRows quantizes x (rows of cols) to typ with gguf.Quantize, giving
// rows [k·per, (k+1)·per) the k-th importance vector of imp (nil: none).
func quantRows(t *testing.T, typ gguf.Type, x []float32, cols, per int, imp []float32) []byte {
	t.Helper()
	n, _ := typ.Size(int64(len(x)))
	out := make([]byte, n)
	rb, _ := typ.Size(int64(cols))
	rows := len(x) / cols
	for r := 0; r < rows; r += per {
		var v []float32
		if imp != nil {
			k := r / per
			v = imp[k*cols : (k+1)*cols]
		}
		require.NoError(t, gguf.Quantize(typ, out[int64(r)*rb:int64(r+per)*rb], x[r*cols:(r+per)*cols], v))
	}
	return out
}

func TestGGUFImportance(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	l := ggufGet(t)
	const cols = 256
	x := make([]float32, 2*6*cols)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	imp := make([]float32, 2*cols)
	for i := range imp {
		imp[i] = float32(r.ExpFloat64() * 10)
	}
	for _, c := range []struct {
		typ   gguf.Type
		shape []int
		imp   []float32
		per   int // rows per importance vector
	}{
		{gguf.TypeQ4_K, []int{12, cols}, imp[:cols], 12},
		{gguf.TypeQ6_K, []int{12, cols}, imp[:cols], 12},
		{gguf.TypeIQ4_NL, []int{12, cols}, imp[:cols], 12},
		{gguf.TypeQ5_0, []int{2, 6, cols}, imp, 6}, // one vector per expert
		{gguf.TypeQ3_K, []int{2, 6, cols}, imp, 6},
	} {
		name := c.typ.String()
		dt := ggufDT(t, name)
		want := quantRows(t, c.typ, x, cols, c.per, c.imp)
		assert.NotEqual(t, quantRows(t, c.typ, x, cols, c.per, nil), want, "%s: the importance changes the blocks", name)
		wantV := make([]float32, len(x))
		require.NoError(t, gguf.Dequantize(c.typ, wantV, want))

		// Cast: the view decodes to the importance-weighted blocks' values.
		ct, err := l.Cast(x, c.shape, dt, &tcast.Options{Importance: c.imp})
		require.NoError(t, err, name)
		got, err := tcast.Decompress(ct)
		require.NoError(t, err)
		assert.Equal(t, wantV, got, name)

		// Stream: the rows in pieces that straddle the experts give the
		// same blocks.
		rs, ok, err := l.Stream("w", c.shape, dt, &tcast.Options{Importance: c.imp})
		require.NoError(t, err)
		require.True(t, ok, name)
		size, _ := c.typ.Size(int64(len(x)))
		out := [][]byte{make([]byte, size)}
		for r0 := 0; r0 < 12; r0 += 5 {
			r1 := min(r0+5, 12)
			require.NoError(t, rs.CastRows(out, x[r0*cols:r1*cols], r0, nil, nil), name)
		}
		assert.Equal(t, want, out[0], name)

		requireWeighedRows(t, rs, c.typ, x, cols, c.per, c.imp, want)
	}
	// Without importance, or unquantized, the rows are cast but not weighed.
	for _, c := range []struct {
		dt  string
		imp []float32
	}{{"q4_k", nil}, {"f16", imp[:cols]}} {
		rs, ok, err := l.Stream("w", []int{2, cols}, ggufDT(t, c.dt), &tcast.Options{Importance: c.imp})
		require.NoError(t, err)
		require.True(t, ok, c.dt)
		size, _ := rs.(*ggufStream).typ.Size(int64(2 * cols))
		w := make([]float32, 2*cols)
		weighed, err := rs.(WeighedStream).CastRowsWeighed([][]byte{make([]byte, size)}, x[:2*cols], 0, nil, w, nil)
		require.NoError(t, err, c.dt)
		assert.False(t, weighed, c.dt)
		assert.Equal(t, make([]float32, 2*cols), w, "%s: w left as it was", c.dt)
	}

	// Types whose quantizer does not search ignore it.
	a, err := l.Cast(x[:4*cols], []int{4, cols}, ggufDT(t, "q8_0"), &tcast.Options{Importance: imp[:7]})
	require.NoError(t, err)
	b, err := l.Cast(x[:4*cols], []int{4, cols}, ggufDT(t, "q8_0"), nil)
	require.NoError(t, err)
	assert.Equal(t, b.Data.Bytes, a.Data.Bytes)

	// Importance that does not fit the weight is an error.
	for _, bad := range [][]float32{imp[:cols-32], imp[:3*cols/2], {}, append(make([]float32, cols-1), float32(math.NaN())), append(make([]float32, cols-1), -1)} {
		_, err := l.Cast(x[:4*cols], []int{4, cols}, ggufDT(t, "q4_k"), &tcast.Options{Importance: bad})
		assert.Error(t, err, "%d values", len(bad))
		_, _, err = l.Stream("w", []int{4, cols}, ggufDT(t, "q4_k"), &tcast.Options{Importance: bad})
		assert.Error(t, err, "%d values", len(bad))
	}
	_, err = l.Cast(x[:3*cols], []int{3, cols}, ggufDT(t, "q4_k"), &tcast.Options{Importance: imp})
	assert.ErrorContains(t, err, "importance", "2 vectors do not divide 3 rows")
}

// requireWeighedRows requires CastRowsWeighed of rs, a stream of 12 rows of
// cols values x quantized to typ with imp (one vector per per rows), to
// give the blocks want and Weigh's weights of each vector's rows, in pieces
// of 5 rows that straddle the vectors.
func requireWeighedRows(t *testing.T, rs RowStream, typ gguf.Type, x []float32, cols, per int, imp []float32, want []byte) {
	t.Helper()
	name := typ.String()
	ws, ok := rs.(WeighedStream)
	require.True(t, ok, name)
	wantW := make([]float32, len(x))
	for e := 0; e < 12/per; e++ {
		lo, hi := e*per*cols, (e+1)*per*cols
		v := imp[e*cols%len(imp) : e*cols%len(imp)+cols]
		require.NoError(t, gguf.Weigh(typ, wantW[lo:hi], x[lo:hi], v))
	}
	out := make([]byte, len(want))
	gotW := make([]float32, len(x))
	for r0 := 0; r0 < 12; r0 += 5 {
		r1 := min(r0+5, 12)
		part, _ := typ.Size(int64(r0 * cols))
		end, _ := typ.Size(int64(r1 * cols))
		weighed, err := ws.CastRowsWeighed([][]byte{out[part:end]}, x[r0*cols:r1*cols], r0,
			nil, gotW[r0*cols:r1*cols], nil)
		require.NoError(t, err, name)
		require.True(t, weighed, name)
	}
	assert.Equal(t, want, out, name)
	assert.Equal(t, wantW, gotW, name)
	_, err := ws.CastRowsWeighed([][]byte{out[:0]}, x[:cols], 0, nil, gotW[:1], nil)
	assert.ErrorContains(t, err, "weights", name)
}
