package convert

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
)

// awkwardCheckpoint writes a safetensors file of BF16, F16 and F32 weights
// whose shapes the pipeline splits in awkward places: one row, rows longer
// than a chunk, row counts that are no multiple of a chunk's, weights of
// several work items, a last axis that is no whole number of blocks, and
// NaN, ±Inf, −0, subnormals and huge values in some rows.
func awkwardCheckpoint(t *testing.T) string {
	t.Helper()
	r := rand.New(rand.NewPCG(61, 62))
	f16, bf16 := dtype.MustParse("float16"), dtype.MustParse("bfloat16")
	type w struct {
		name  string
		dt    safetensors.DType
		shape []int
	}
	ws := []w{
		{"a.one_row.weight", safetensors.BF16, []int{1, 64}},
		{"a.long_row.weight", safetensors.BF16, []int{2, 3 * chunkElems / 2}},
		{"a.odd_rows.weight", safetensors.BF16, []int{5000, 32}},
		{"a.items.weight", safetensors.BF16, []int{70001, 32}},
		{"a.three_d.weight", safetensors.F16, []int{3, 5, 4096}},
		{"a.f32.weight", safetensors.F32, []int{300, 96}},
		{"a.not_blocks.weight", safetensors.BF16, []int{7, 48}},
		{"a.specials.weight", safetensors.BF16, []int{9, 128}},
		{"model.norm.weight", safetensors.BF16, []int{64}},
	}
	var ts []safetensors.Tensor
	for _, x := range ws {
		n := 1
		for _, d := range x.shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(12)-6)))
		}
		if x.name == "a.specials.weight" {
			copy(v[3*128:], []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
				float32(math.Copysign(0, -1)), math.Float32frombits(1), 1e38, -3e38})
			clear(v[5*128 : 6*128])
		}
		if x.name == "a.items.weight" {
			v[n-1] = float32(math.NaN()) // in the last chunk of the last item
		}
		var b []byte
		switch x.dt {
		case safetensors.F32:
			b = make([]byte, 4*n)
			for i, f := range v {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
			}
		default:
			format := bf16
			if x.dt == safetensors.F16 {
				format = f16
			}
			codes := make([]uint16, n)
			dtype.EncodeSlice(format, codes, v, dtype.Options{Overflow: dtype.OverflowIEEE})
			b = make([]byte, 2*n)
			for i, c := range codes {
				binary.LittleEndian.PutUint16(b[2*i:], c)
			}
		}
		ts = append(ts, safetensors.Tensor{Name: x.name, DType: x.dt, Shape: x.shape, Data: b})
	}
	path := filepath.Join(t.TempDir(), "awkward.safetensors")
	require.NoError(t, safetensors.WriteFile(path, ts, nil))
	return path
}

// TestPipelineEqualsWholeCast converts the fixtures and a checkpoint of
// awkward shapes with every datatype the pipeline streams, through the
// pipeline on one and on three workers and through the whole-tensor path,
// and compares the output files byte for byte and the reports: equal but for
// the last bits of SQNR, whose sums the pipeline adds per chunk.
func TestPipelineEqualsWholeCast(t *testing.T) {
	awkward := awkwardCheckpoint(t)
	cases := []struct{ lay, dt string }{
		{"tcast", "mxfp4"}, {"tcast", "mxfp8e4"}, {"tcast", "mxint8"}, {"tcast", "nvfp4"},
		{"gguf", "mxfp4"}, {"gguf", "q8_0"}, {"gguf", "q4_0"},
	}
	for _, in := range []string{iris, awkward} {
		for _, c := range cases {
			name := fmt.Sprintf("%s %s %s", filepath.Base(in), c.lay, c.dt)
			l, err := layout.Get(c.lay)
			require.NoError(t, err)
			dt, err := layout.DataType(l, c.dt)
			require.NoError(t, err)
			o := Options{DataType: dt, Layout: l, Include: regexp.MustCompile(`^a\.`), AllowNonFinite: true}
			ext := ".safetensors"
			if c.lay == "gguf" {
				ext = ".gguf"
				o.Exclude = regexp.MustCompile(`not_blocks`) // GGUF takes whole blocks only
			}

			// The pipeline streams the weights it can.
			src, err := load.Open(in)
			require.NoError(t, err)
			p, err := newPlan(src, &o)
			require.NoError(t, err, name)
			streamed := 0
			for _, d := range p.tensors {
				if p.streamOf(d) != nil {
					streamed++
				}
			}
			src.Close()
			assert.Greater(t, streamed, 0, name)

			convert := func(whole bool, workers int) ([]byte, *Result) {
				forceWhole = whole
				defer func() { forceWhole = false }()
				out := filepath.Join(t.TempDir(), "out"+ext)
				o.Workers = workers
				res, err := Convert(in, out, o)
				require.NoError(t, err, name)
				b, err := os.ReadFile(out)
				require.NoError(t, err)
				return b, res
			}
			wantBytes, want := convert(true, 2)
			for _, workers := range []int{1, 3} {
				msg := fmt.Sprintf("%s on %d workers", name, workers)
				gotBytes, got := convert(false, workers)
				require.Equal(t, len(wantBytes), len(gotBytes), msg)
				if i := firstDiff(wantBytes, gotBytes); i >= 0 {
					t.Fatalf("%s: output byte %d differs", msg, i)
				}
				require.Len(t, got.Tensors, len(want.Tensors), msg)
				assert.Equal(t, want.BytesOut, got.BytesOut, msg)
				for i, w := range want.Tensors {
					g := got.Tensors[i]
					m := msg + " " + w.Name
					assert.Equal(t, w.Name, g.Name, m)
					assert.Equal(t, w.Bits, g.Bits, m)
					assert.Equal(t, w.MaxAbsErr, g.MaxAbsErr, m)
					assert.Equal(t, w.Lost, g.Lost, m)
					assert.Equal(t, [3]int{w.SourceNaN, w.SourcePosInf, w.SourceNegInf}, [3]int{g.SourceNaN, g.SourcePosInf, g.SourceNegInf}, m)
					switch w.Name { // as awkwardCheckpoint put them
					case "a.specials.weight":
						assert.Equal(t, [3]int{1, 1, 1}, [3]int{g.SourceNaN, g.SourcePosInf, g.SourceNegInf}, m)
					case "a.items.weight":
						assert.Equal(t, [3]int{1, 0, 0}, [3]int{g.SourceNaN, g.SourcePosInf, g.SourceNegInf}, m)
					}
					assert.Equal(t, w.BytesOut, g.BytesOut, m)
					assert.Equal(t, w.Note, g.Note, m)
					if w.SQNR == nil {
						assert.Nil(t, g.SQNR, m)
					} else if assert.NotNil(t, g.SQNR, m) {
						assert.InDelta(t, *w.SQNR, *g.SQNR, 1e-9, m)
					}
				}
			}
		}
	}
}

// TestPipelineReportIsDeterministic checks that the report of a streamed
// conversion, SQNR bits included, does not depend on the number of workers.
func TestPipelineReportIsDeterministic(t *testing.T) {
	awkward := awkwardCheckpoint(t)
	var first *Result
	for _, workers := range []int{1, 2, 5} {
		o := opts(t, "mxfp4", "tcast")
		o.Workers, o.Include, o.AllowNonFinite = workers, regexp.MustCompile(`^a\.`), true
		res, err := Convert(awkward, filepath.Join(t.TempDir(), "o.safetensors"), o)
		require.NoError(t, err)
		if first == nil {
			first = res
			continue
		}
		for i, w := range first.Tensors {
			assert.Equal(t, w.SQNR, res.Tensors[i].SQNR, "%s on %d workers", w.Name, workers)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// failingSink fails the write after the first ok ones.
type failingSink struct {
	sink
	ok   int64
	done *atomic.Int64
}

var errInjected = errors.New("injected write failure")

func (s failingSink) WriteAt(name string, data []byte, off int64) error {
	if s.done.Add(1) > s.ok {
		return errInjected
	}
	return s.sink.WriteAt(name, data, off)
}

// TestPipelineWriteFailure makes the output's writes fail at several points
// of streamed conversions (the workers' writes, the tails the emit writes)
// and checks that the error says so, that no output and no temporary is
// left, and that an output the conversion was to replace is as it was.
//
// On two cores, one worker hands its writes to a writing goroutine, and two
// take turns to write themselves: both ways are tried.
func TestPipelineWriteFailure(t *testing.T) {
	awkward := awkwardCheckpoint(t)
	defer func() { wrapSink = nil }()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, c := range []struct {
		lay, dt, ext string
		workers      int
	}{
		{"tcast", "nvfp4", ".safetensors", 2}, {"gguf", "q8_0", ".gguf", 2},
		{"tcast", "mxfp4", ".safetensors", 1}, {"gguf", "mxfp4", ".gguf", 1},
	} {
		l, err := layout.Get(c.lay)
		require.NoError(t, err)
		dt, err := layout.DataType(l, c.dt)
		require.NoError(t, err)
		o := Options{DataType: dt, Layout: l, Workers: c.workers, Force: true, AllowNonFinite: true,
			Include: regexp.MustCompile(`^a\.`), Exclude: regexp.MustCompile(`not_blocks`)}
		convert := func(ok int64, out string) (int64, error) {
			var done atomic.Int64
			wrapSink = func(s sink) sink { return failingSink{s, ok, &done} }
			_, err := Convert(awkward, out, o)
			return done.Load(), err
		}
		n, err := convert(math.MaxInt64, filepath.Join(t.TempDir(), "out"+c.ext))
		require.NoError(t, err)
		require.Greater(t, n, int64(8), "%s %s: writes", c.lay, c.dt)
		for _, ok := range []int64{0, 1, n / 2, n - 1} {
			for _, replace := range []bool{false, true} {
				name := fmt.Sprintf("%s %s on %d workers: fail after %d of %d writes, replace %v", c.lay, c.dt, c.workers, ok, n, replace)
				dir := t.TempDir()
				out := filepath.Join(dir, "out"+c.ext)
				if replace {
					require.NoError(t, os.WriteFile(out, []byte("old"), 0o644))
				}
				_, err = convert(ok, out)
				require.ErrorIs(t, err, errInjected, name)
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				if !replace {
					assert.Empty(t, entries, name)
					continue
				}
				require.Len(t, entries, 1, name)
				b, err := os.ReadFile(out)
				require.NoError(t, err)
				assert.Equal(t, "old", string(b), name)
			}
		}
	}
}

// TestSpread checks the order in which copies are put among casts: each
// list in its order, the copies' share of their bytes keeping up with the
// casts' share of theirs (derived by hand).
func TestSpread(t *testing.T) {
	mk := func(n int, c0 int) []item {
		its := make([]item, n)
		for i := range its {
			its[i].c0 = c0 + i
		}
		return its
	}
	order := func(its []item) []int {
		var o []int
		for _, it := range its {
			o = append(o, it.c0)
		}
		return o
	}
	// Casts 0..3 of 4 bytes each, copies 10 and 11 of 2: a copy goes first
	// (0 ≤ 0), then casts until they are half done (4/8 ≥ 8/16).
	assert.Equal(t, []int{10, 0, 1, 11, 2, 3}, order(spread(mk(4, 0), []int64{4, 4, 4, 4}, mk(2, 10), []int64{2, 2})))
	assert.Equal(t, []int{0, 1}, order(spread(mk(2, 0), []int64{1, 1}, nil, nil)))
	// Casts that read nothing (amax items of a weight of zeros) come last.
	assert.Equal(t, []int{10, 11, 0}, order(spread(mk(1, 0), []int64{0}, mk(2, 10), []int64{3, 3})))

	// Without spreading, the items keep their tensors' order.
	ds := []*decision{{index: 0}, {index: 1}, {index: 2}, {index: 3}}
	a := []item{{d: ds[0], c0: 0}, {d: ds[2], c0: 2}, {d: ds[2], c0: 3}}
	b := []item{{d: ds[1], c0: 10}, {d: ds[1], c0: 11}, {d: ds[3], c0: 12}}
	assert.Equal(t, []int{0, 10, 11, 2, 3, 12}, order(inOrder(a, b)))
}

// TestCopiedInPieces converts a checkpoint whose kept tensors span several
// pieces, among weights that stream, and checks the kept bytes against the
// input, the report's order (the input's) and the progress calls.
func TestCopiedInPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	var ts []safetensors.Tensor
	for _, x := range []struct {
		name  string
		shape []int
	}{
		{"a.embed_tokens.weight", []int{2*keptPiece/(2*512) + 3, 512}}, // three pieces, the last short
		{"b.proj.weight", []int{3000, 256}},
		{"c.lm_head.weight", []int{keptPiece / (2 * 1024), 1024}}, // one whole piece
		{"d.norm.weight", []int{0}},
		{"e.up.weight", []int{70, 4096}},
	} {
		n := 1
		for _, d := range x.shape {
			n *= d
		}
		b := make([]byte, 2*n)
		for i := range n {
			// bfloat16 values of magnitude 2^-8 to 2^7, either sign.
			b[2*i], b[2*i+1] = byte(r.Uint32()), byte(0x3b+r.IntN(8))|byte(r.IntN(2)<<7)
		}
		ts = append(ts, safetensors.Tensor{Name: x.name, DType: safetensors.BF16, Shape: x.shape, Data: b})
	}
	in := filepath.Join(t.TempDir(), "in.safetensors")
	require.NoError(t, safetensors.WriteFile(in, ts, nil))
	for _, workers := range []int{1, 2, 3} {
		out := filepath.Join(t.TempDir(), "out.safetensors")
		o := opts(t, "mxfp4", "tcast")
		o.Workers = workers
		var seen []int
		o.Progress = func(p Progress) { seen = append(seen, p.Tensors) }
		res, err := Convert(in, out, o)
		require.NoError(t, err)
		var names []string
		for _, tr := range res.Tensors {
			names = append(names, tr.Name)
		}
		assert.Equal(t, []string{"a.embed_tokens.weight", "b.proj.weight", "c.lm_head.weight", "d.norm.weight", "e.up.weight"}, names)
		assert.Equal(t, []int{1, 2, 3, 4, 5}, seen)
		f, err := safetensors.Open(out)
		require.NoError(t, err)
		for _, x := range []safetensors.Tensor{ts[0], ts[2], ts[3]} {
			b, err := f.Bytes(x.Name)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(x.Data, b), "%s on %d workers", x.Name, workers)
		}
		require.NoError(t, f.Close())
		assert.Equal(t, "kept: bias, norm, embedding or output head", res.Tensors[0].Note)
		assert.Equal(t, "mxfp4e2", res.Tensors[1].DataType)
	}
}

// recordingSink records the offsets written, to see writes repeated.
type recordingSink struct {
	sink
	offs []int64
}

func (s *recordingSink) WriteAt(name string, data []byte, off int64) error {
	s.offs = append(s.offs, off)
	return nil
}

// TestWriterDropsFailedQueue checks that the writes of a failed turn leave
// the worker's queue: a scratch used again after the error (the next item
// of a worker, before the conversion stops) must not write them again,
// which the output reported as overlapping writes instead of the error.
func TestWriterDropsFailedQueue(t *testing.T) {
	rec := &recordingSink{}
	var done atomic.Int64
	o := newWriter(failingSink{rec, 0, &done}, false)
	sc := &scratch{}
	ran := false
	err := o.put(sc, write{name: "t", data: make([]byte, 8), off: 0, done: func() { ran = true }}, true)
	require.ErrorIs(t, err, errInjected)
	require.False(t, ran, "done ran for a failed write")
	require.Empty(t, sc.pending)
	require.Zero(t, sc.pendingBytes)

	o = newWriter(rec, false)
	require.NoError(t, o.put(sc, write{name: "t", data: make([]byte, 8), off: 8}, true))
	require.Equal(t, []int64{8}, rec.offs)
}
