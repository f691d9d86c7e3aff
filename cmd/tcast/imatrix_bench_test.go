package main

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/imatrix"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
)

// imatrixBenchTypes are the GGUF types whose quantizers take an importance
// vector and that model files use.
var imatrixBenchTypes = []gguf.Type{
	gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
	gguf.TypeIQ4_XS, gguf.TypeIQ4_NL, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1,
}

// benchMatrix is one layer matrix of the benchmark's checkpoint.
type benchMatrix struct {
	name string
	w    []float32
	cols int
	imp  []float32
}

// BenchmarkImatrixQuantize quantizes every layer matrix of a Llama
// checkpoint to each GGUF type, without and with its importance matrix, on
// all cores, and reports the input speed (MB/s of float32 values), the bits
// per value, and two SQNRs over all the matrices together: weighted by the
// importance (wSQNR-dB: the error the calibration activations see) and
// plain (SQNR-dB). Matrices whose rows are not whole blocks of a type are
// left out of its figures; %values is the share of the values kept.
//
// By default it runs on the synth checkpoint of imatrixSynth with
// testdata/llama_imatrix.npz. TCAST_IMATRIX_MODEL (a directory with
// model.safetensors and config.json) and TCAST_IMATRIX (a GGUF or .dat
// imatrix, or an .npz of llama_imatrix.py) name another pair, such as a
// 1 GiB synth -arch llama and the matrix llama_imatrix.py computed for it:
//
//	go test -run '^$' -bench ImatrixQuantize -benchtime 1x ./cmd/tcast
func BenchmarkImatrixQuantize(b *testing.B) {
	dir, imPath := os.Getenv("TCAST_IMATRIX_MODEL"), os.Getenv("TCAST_IMATRIX")
	if dir == "" {
		dir, imPath = b.TempDir(), "testdata/llama_imatrix.npz"
		require.NoError(b, runSynth(append([]string{"-o", filepath.Join(dir, "model.safetensors")}, imatrixSynth...),
			io.Discard, io.Discard))
	}
	var m *imatrix.Imatrix
	var err error
	if strings.HasSuffix(imPath, ".npz") {
		s, err := imatrix.ReadNPZ(imPath)
		require.NoError(b, err)
		p := filepath.Join(b.TempDir(), "im.gguf")
		require.NoError(b, imatrix.WriteFile(p, s, imatrix.FormatGGUF))
		imPath = p
	}
	m, err = imatrix.Read(imPath)
	require.NoError(b, err)

	shapes, hf := synthMatrices(b, filepath.Join(dir, "model.safetensors"))
	require.NotEmpty(b, shapes)
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	require.NoError(b, err)
	defer f.Close()
	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	var mats []benchMatrix
	var values int64
	for _, n := range names {
		w, err := f.Float32s(hf[n])
		require.NoError(b, err)
		imp, err := m.Importance(n, shapes[n][1], 1)
		require.NoError(b, err, n)
		mats = append(mats, benchMatrix{name: n, w: w, cols: shapes[n][1], imp: imp[0]})
		values += int64(len(w))
	}

	for _, typ := range imatrixBenchTypes {
		for _, withImp := range []bool{false, true} {
			mode := "plain"
			if withImp {
				mode = "imatrix"
			}
			b.Run(typ.String()+"/"+mode, func(b *testing.B) {
				// Matrices whose rows are not whole blocks of typ (llama-quantize
				// gives them another type) are left out.
				var fit []benchMatrix
				var n int64
				for _, mt := range mats {
					if mt.cols%typ.BlockSize() == 0 {
						fit = append(fit, mt)
						n += int64(len(mt.w))
					}
				}
				if len(fit) == 0 {
					b.Skipf("no matrix has rows of whole %v blocks", typ)
				}
				blocks := make([][]byte, len(fit))
				for i, mt := range fit {
					size, _ := typ.Size(int64(len(mt.w)))
					blocks[i] = make([]byte, size)
				}
				b.SetBytes(4 * n)
				b.ResetTimer()
				for range b.N {
					quantizeAll(b, typ, fit, blocks, withImp)
				}
				b.StopTimer()
				var sig, noise, wsig, wnoise float64
				var bytes int64
				for i, mt := range fit {
					out := make([]float32, len(mt.w))
					require.NoError(b, gguf.Dequantize(typ, out, blocks[i]))
					for j, x := range mt.w {
						d := float64(x) - float64(out[j])
						k := float64(mt.imp[j%mt.cols])
						sig += float64(x) * float64(x)
						noise += d * d
						wsig += k * float64(x) * float64(x)
						wnoise += k * d * d
					}
					bytes += int64(len(blocks[i]))
				}
				b.ReportMetric(10*math.Log10(wsig/wnoise), "wSQNR-dB")
				b.ReportMetric(10*math.Log10(sig/noise), "SQNR-dB")
				b.ReportMetric(8*float64(bytes)/float64(n), "bits/value")
				b.ReportMetric(100*float64(n)/float64(values), "%values")
			})
		}
	}
}

// quantizeAll quantizes every matrix in pieces of whole rows on all cores.
func quantizeAll(b *testing.B, typ gguf.Type, mats []benchMatrix, blocks [][]byte, withImp bool) {
	type piece struct{ m, r0, r1 int }
	const rows = 32
	work := make(chan piece)
	var wg sync.WaitGroup
	var failed sync.Once
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				mt := mats[p.m]
				var imp []float32
				if withImp {
					imp = mt.imp
				}
				rowBytes, _ := typ.Size(int64(mt.cols))
				err := gguf.Quantize(typ, blocks[p.m][int64(p.r0)*rowBytes:int64(p.r1)*rowBytes],
					mt.w[p.r0*mt.cols:p.r1*mt.cols], imp)
				if err != nil {
					failed.Do(func() { b.Error(err) })
				}
			}
		}()
	}
	for i, mt := range mats {
		n := len(mt.w) / mt.cols
		for r := 0; r < n; r += rows {
			work <- piece{i, r, min(r+rows, n)}
		}
	}
	close(work)
	wg.Wait()
}
