package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// sink keeps benchmark results alive.
var sink uint64

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	n := fs.Int("n", 1<<24, "number of float32 values (the default is 64 MiB, beyond the caches)")
	names := fs.String("dtype", "float8_e4m3fn,float4_e2m1fn,bfloat16,mxfp4,nvfp4", "comma-separated number formats and scaled datatypes")
	rounds := fs.Int("rounds", 5, "repetitions; the best is reported")
	pos, err := parseArgs(fs, "tcast bench [-n N] [-dtype NAME,...] [-rounds R]", args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *n <= 0 || *rounds <= 0 {
		return usagef("-n and -rounds must be positive")
	}
	// Plain number formats time the slice codecs; scaled datatypes time
	// tcast.Cast (to the compressed form) and tcast.Decompress on a
	// [n/4096, 4096] tensor scaled along its rows.
	type entry struct {
		f  *dtype.Format
		dt *tc.DataType
	}
	var entries []entry
	for _, name := range strings.Split(*names, ",") {
		if f, err := dtype.Parse(name); err == nil {
			entries = append(entries, entry{f: f})
			continue
		}
		dt, err := tc.Lookup(name)
		if err != nil {
			return usagef("-dtype: %v", err)
		}
		entries = append(entries, entry{dt: dt})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, *n)
	for i := range src {
		src[i] = float32(rng.NormFloat64())
	}
	gbps := func(fn func()) float64 {
		best := time.Duration(1 << 62)
		for range *rounds {
			t := time.Now()
			fn()
			best = min(best, time.Since(t))
		}
		return float64(4*len(src)) / best.Seconds() / 1e9
	}
	base := gbps(func() { sink += kernels.SumFloat32(src) })
	deq := make([]float32, len(src))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "format\tencode GB/s\t× mem-read\tdecode GB/s\t× mem-read\t\n")
	fmt.Fprintf(tw, "memory read (sum)\t%.2f\t1.00\t\t\t\n", base)
	for _, e := range entries {
		if e.dt != nil {
			enc, dec, err := benchDataType(e.dt, src, gbps)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s (Cast, Decompress)\t%.2f\t%.3f\t%.2f\t%.3f\t\n", e.dt.Name(), enc, enc/base, dec, dec/base)
			continue
		}
		f := e.f
		var enc, dec float64
		switch f.CodeBytes() {
		case 1:
			enc, dec = benchFormat[uint8](f, src, deq, gbps)
		case 2:
			enc, dec = benchFormat[uint16](f, src, deq, gbps)
		default:
			enc, dec = benchFormat[uint32](f, src, deq, gbps)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.3f\t%.2f\t%.3f\t\n", f.Name(), enc, enc/base, dec, dec/base)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%d float32 values, one core, GB/s of float32 (4 bytes per value), best of %d\n", len(src), *rounds)
	return err
}

func benchFormat[C dtype.Code](f *dtype.Format, src, deq []float32, gbps func(func()) float64) (enc, dec float64) {
	codes := make([]C, len(src))
	enc = gbps(func() { dtype.EncodeSlice(f, codes, src, dtype.Options{}) })
	dec = gbps(func() { dtype.DecodeSlice(f, deq, codes) })
	return enc, dec
}

// benchDataType times a compressed Cast and a Decompress of src.
func benchDataType(dt *tc.DataType, src []float32, gbps func(func()) float64) (enc, dec float64, err error) {
	cols := 4096
	if len(src)%cols != 0 {
		cols = len(src)
	}
	shape := []int{len(src) / cols, cols}
	opts := tc.DefaultOptions()
	opts.Form = tc.Compressed
	t, err := tc.Cast(src, shape, dt, &opts)
	if err != nil {
		return 0, 0, err
	}
	enc = gbps(func() { t, err = tc.Cast(src, shape, dt, &opts) })
	if err != nil {
		return 0, 0, err
	}
	dec = gbps(func() { _, err = tc.Decompress(t) })
	return enc, dec, err
}
