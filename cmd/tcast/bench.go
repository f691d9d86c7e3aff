package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/kbench"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

const benchUsage = "tcast bench [-size dram,l2] [-kernels NAME,...|none] [-workers W] [-rounds R] [-dtype NAME,...] [-scale-search] [-n N]\n\n" +
	"Times the kernels of `go test -bench . ./kernels` (the same set, sizes and inputs) in one\n" +
	"process, one core, and prints for each its speed in GB/s of float32 (4 bytes per value,\n" +
	"read by a quantizer, written by a dequantizer) and its ratio to MemRead, a plain read of the\n" +
	"same number of floats measured in the same run: DRAM is 64 Mi floats (256 MiB, beyond the\n" +
	"caches), L2 is 64 Ki floats (256 KiB). With -workers 2 (or more), the kernel table also times\n" +
	"that many goroutines running each kernel at once, each on its own copy of the input, and prints\n" +
	"their total speed and its ratio to one worker. With -dtype, a second table times the slice codecs of\n" +
	"number formats and tcast.Cast (compressed) and tcast.Decompress of scaled datatypes on\n" +
	"-n values; -kernels none prints that table alone. With -scale-search, each scaled datatype whose scales\n" +
	"the search chooses (mxfp4, nvfp4, int4_g128, fp8e4_block128, ...) gets a second row, \"+ scale search\":\n" +
	"the same Cast with convert's -scale-search, and its cost as a multiple of the plain Cast's time."

// sink keeps benchmark results alive.
var sink uint64

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	sizes := fs.String("size", "dram,l2", "comma-separated input `SIZES` of the kernel table: dram, l2")
	only := fs.String("kernels", "all", "comma-separated `NAMES` of kernels of the kernel table ("+strings.Join(workloadNames(), ", ")+
		"), all, or none; MemRead is always timed")
	workers := fs.Int("workers", 1, "number `W` of goroutines running each kernel at once for a second column of the kernel table (1: none)")
	rounds := fs.Int("rounds", 5, "`R` repetitions; the kernel table reports the median, the -dtype table the best")
	names := fs.String("dtype", "", "comma-separated `NAMES` of number formats and scaled datatypes for the second table, "+
		"e.g. float8_e4m3fn,float4_e2m1fn,bfloat16,mxfp4,nvfp4")
	search := fs.Bool("scale-search", false, "with -dtype, also time each scaled datatype's Cast with the scale search and print its cost against the plain Cast")
	n := fs.Int("n", 1<<24, "number `N` of float32 values of the -dtype table; the default, 16 Mi values (64 MiB), lies beyond the caches")
	pos, err := parseArgs(fs, benchUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *n <= 0 || *rounds <= 0 || *workers <= 0 {
		return usagef("-n, -rounds and -workers must be positive")
	}
	sel, err := selectWorkloads(*only)
	if err != nil {
		return err
	}
	var sizeList []benchSize
	for _, s := range strings.Split(*sizes, ",") {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "dram":
			sizeList = append(sizeList, benchSize{"DRAM", kbench.BenchDRAM})
		case "l2":
			sizeList = append(sizeList, benchSize{"L2", kbench.BenchL2})
		default:
			return usagef("-size: unknown size %q (want dram, l2 or both)", s)
		}
	}
	entries, err := benchEntries(*names)
	if err != nil {
		return err
	}
	switch {
	case *search && len(entries) == 0:
		return usagef("-scale-search times the casts of the -dtype table: add -dtype with datatypes that search their scales (e.g. -dtype mxfp4,nvfp4,int4_g128,fp8e4_block128)")
	case *search && !slices.ContainsFunc(entries, func(e benchEntry) bool { return e.dt != nil && e.dt.SearchesScales() }):
		return usagef("-scale-search: none of the -dtype datatypes searches its scales (want e.g. mxfp4, nvfp4, int4_g128, fp8e4_block128)")
	}
	if len(sel) > 0 {
		if err := kernelTable(stdout, sel, sizeList, *workers, *rounds); err != nil {
			return err
		}
	}
	if len(entries) == 0 {
		return nil
	}
	if len(sel) > 0 {
		fmt.Fprintln(stdout)
	}
	return formatTable(stdout, entries, *n, *rounds, *search)
}

// benchSize is one input size of the kernel table.
type benchSize struct {
	name string
	n    int
}

func workloadNames() []string {
	var out []string
	for _, w := range kbench.Workloads() {
		out = append(out, w.Name)
	}
	return out
}

// selectWorkloads returns the workloads -kernels names, MemRead first (none
// for "none").
func selectWorkloads(list string) ([]kbench.Workload, error) {
	all := kbench.Workloads()
	switch strings.ToLower(strings.TrimSpace(list)) {
	case "all", "":
		return all, nil
	case "none":
		return nil, nil
	}
	sel := []kbench.Workload{all[0]} // MemRead, the baseline
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(w kbench.Workload) bool { return strings.EqualFold(w.Name, name) })
		if i < 0 {
			return nil, usagef("-kernels: unknown kernel %q (want %s, all or none)", name, strings.Join(workloadNames(), ", "))
		}
		if i > 0 && !slices.ContainsFunc(sel, func(w kbench.Workload) bool { return w.Name == all[i].Name }) {
			sel = append(sel, all[i])
		}
	}
	return sel, nil
}

// kernelTable times every workload at every size, a size at a time with
// MemRead first, and prints one row per kernel and size; with workers > 1,
// each is timed a second time with that many workers at once.
func kernelTable(stdout io.Writer, sel []kbench.Workload, sizes []benchSize, workers, rounds int) error {
	type cell struct{ one, many float64 }
	gbps := make([][]cell, len(sel)) // [workload][size]
	for i := range gbps {
		gbps[i] = make([]cell, len(sizes))
	}
	for j, s := range sizes {
		src := kbench.BenchInput(s.n)
		for i, w := range sel {
			gbps[i][j].one = w.Measure(src, 1, rounds)
			if workers > 1 {
				gbps[i][j].many = w.Measure(src, workers, rounds)
			}
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "kernel\tsize\tGB/s\t× MemRead\t")
	if workers > 1 {
		fmt.Fprintf(tw, "GB/s, %d workers\t× 1 worker\t", workers)
	}
	fmt.Fprintln(tw)
	for i, w := range sel {
		for j, s := range sizes {
			c := gbps[i][j]
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.3f\t", w.Name, s.name, c.one, c.one/gbps[0][j].one)
			if workers > 1 {
				fmt.Fprintf(tw, "%.2f\t%.2f\t", c.many, c.many/c.one)
			}
			fmt.Fprintln(tw)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var desc []string
	for _, s := range sizes {
		desc = append(desc, fmt.Sprintf("%s %d", s.name, s.n))
	}
	_, err := fmt.Fprintf(stdout, "float32 values: %s (per worker); GB/s of float32 (4 bytes per value), median of %s\n",
		strings.Join(desc, ", "), count(rounds, "round"))
	return err
}

// benchEntry is one line of the -dtype table: a number format or a scaled
// datatype.
type benchEntry struct {
	f  *dtype.Format
	dt *tc.DataType
}

func benchEntries(list string) ([]benchEntry, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var entries []benchEntry
	for _, name := range strings.Split(list, ",") {
		if f, err := dtype.Parse(name); err == nil {
			entries = append(entries, benchEntry{f: f})
			continue
		}
		dt, err := tc.Lookup(name)
		if err != nil {
			return nil, usagef("-dtype: %v", err)
		}
		entries = append(entries, benchEntry{dt: dt})
	}
	return entries, nil
}

// formatTable times the slice codecs of number formats and the Cast and
// Decompress of scaled datatypes on n values (a [n/4096, 4096] tensor scaled
// along its rows), against a memory read of the same values; with search, a
// scale-searching Cast of each datatype that searches too, against the
// plain Cast.
func formatTable(stdout io.Writer, entries []benchEntry, n, rounds int, search bool) error {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(rng.NormFloat64())
	}
	gbps := func(fn func()) float64 {
		best := time.Duration(1 << 62)
		for range rounds {
			t := time.Now()
			fn()
			best = min(best, time.Since(t))
		}
		return float64(4*len(src)) / best.Seconds() / 1e9
	}
	base := gbps(func() { sink += kbench.SumFloat32(src) })
	deq := make([]float32, len(src))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "format\tencode GB/s\t× mem-read\tdecode GB/s\t× mem-read\t%s\n", map[bool]string{true: "cost × plain Cast\t"}[search])
	fmt.Fprintf(tw, "memory read (sum)\t%.2f\t1.00\t\t\t\n", base)
	for _, e := range entries {
		if e.dt != nil {
			enc, dec, err := benchDataType(e.dt, src, false, gbps)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s (Cast, Decompress)\t%.2f\t%.3f\t%.2f\t%.3f\t\n", e.dt.Name(), enc, enc/base, dec, dec/base)
			if search && e.dt.SearchesScales() {
				senc, _, err := benchDataType(e.dt, src, true, gbps)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s + scale search (Cast)\t%.2f\t%.3f\t\t\t%.2f\t\n", e.dt.Name(), senc, senc/base, enc/senc)
			}
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
	_, err := fmt.Fprintf(stdout, "%d float32 values, one core, GB/s of float32 (4 bytes per value), best of %d\n", len(src), rounds)
	return err
}

func benchFormat[C dtype.Code](f *dtype.Format, src, deq []float32, gbps func(func()) float64) (enc, dec float64) {
	codes := make([]C, len(src))
	enc = gbps(func() { dtype.EncodeSlice(f, codes, src, dtype.Options{}) })
	dec = gbps(func() { dtype.DecodeSlice(f, deq, codes) })
	return enc, dec
}

// benchDataType times a compressed Cast (with the scale search when search
// is set) and a Decompress of src.
func benchDataType(dt *tc.DataType, src []float32, search bool, gbps func(func()) float64) (enc, dec float64, err error) {
	cols := 4096
	if len(src)%cols != 0 {
		cols = len(src)
	}
	shape := []int{len(src) / cols, cols}
	opts := tc.DefaultOptions()
	opts.Form = tc.Compressed
	opts.ScaleSearch = search
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
