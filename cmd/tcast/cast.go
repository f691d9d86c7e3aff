package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/dtype"
)

const castUsage = "tcast cast -dtype NAME [-round even|away|zero|stochastic] [-seed N] [-overflow sat|ieee] [-full-range] -o DIR IN.npy"

var roundingNames = map[string]dtype.Rounding{
	"even": dtype.RoundEven, "away": dtype.RoundAway, "zero": dtype.RoundZero, "stochastic": dtype.RoundStochastic,
}

var overflowNames = map[string]dtype.Overflow{"sat": dtype.Saturate, "ieee": dtype.OverflowIEEE}

// castInfo is the info.json written by tcast cast.
type castInfo struct {
	Format     dtype.Info `json:"format"`
	Input      string     `json:"input"`
	InputDType string     `json:"input_dtype"`
	Shape      []int      `json:"shape"`
	CodesDType string     `json:"codes_dtype"`
	Rounding   string     `json:"rounding"`
	Overflow   string     `json:"overflow"`
	Seed       *uint64    `json:"seed,omitempty"`
	FullRange  bool       `json:"full_range,omitempty"`
	Stats      castStats  `json:"stats"`
}

// castStats compares the dequantized values with the input.
type castStats struct {
	Count       int     `json:"count"`
	NaNInputs   int     `json:"nan_inputs"`
	Clipped     int     `json:"clipped"` // finite inputs beyond ±max finite
	MaxAbsError float64 `json:"max_abs_error"`
	// SQNR in dB over finite inputs with finite outputs; null when it is not a
	// number (no error at all, or an all-zero input).
	SQNR *float64 `json:"sqnr_db"`
}

func runCast(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cast", flag.ContinueOnError)
	name := fs.String("dtype", "", "number format `NAME` (see tcast formats)")
	round := fs.String("round", "even", "rounding: even, away, zero or stochastic")
	seed := fs.Uint64("seed", 0, "seed of stochastic rounding")
	overflow := fs.String("overflow", "sat", "overflow: sat (to ±max finite) or ieee (to Inf/NaN)")
	fullRange := fs.Bool("full-range", false, "let signed integers use their most negative code")
	out := fs.String("o", "", "output `DIR` (created if missing)")
	pos, err := parseArgs(fs, castUsage, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return usagef("want exactly one input .npy file, got %d", len(pos))
	case *name == "":
		return usagef("-dtype is required")
	case *out == "":
		return usagef("-o DIR is required")
	}
	mode, ok := roundingNames[*round]
	if !ok {
		return usagef("-round %q: want even, away, zero or stochastic", *round)
	}
	ov, ok := overflowNames[*overflow]
	if !ok {
		return usagef("-overflow %q: want sat or ieee", *overflow)
	}
	f, err := dtype.Parse(*name)
	if err != nil {
		return usagef("-dtype: %v", err)
	}
	in := pos[0]
	arr, err := npy.ReadFile(in)
	if err != nil {
		return err
	}
	if arr.Fortran {
		return fmt.Errorf("%s: Fortran-order arrays are not supported; save it in C order (numpy.ascontiguousarray)", in)
	}
	src, err := arr.Float32s()
	if err != nil {
		return fmt.Errorf("%s: %s input not supported, want float16, float32 or float64", in, arr.DType)
	}

	opts := dtype.Options{Rounding: mode, Overflow: ov, Seed: *seed, FullRange: *fullRange}
	var codes bytes.Buffer
	deq := make([]float32, len(src))
	var codesDType string
	switch f.CodeBytes() {
	case 1:
		codesDType, err = "uint8", encodeTo[uint8](&codes, f, src, deq, arr.Shape, opts)
	case 2:
		codesDType, err = "uint16", encodeTo[uint16](&codes, f, src, deq, arr.Shape, opts)
	default:
		codesDType, err = "uint32", encodeTo[uint32](&codes, f, src, deq, arr.Shape, opts)
	}
	if err != nil {
		return err
	}
	var dequant bytes.Buffer
	if err := npy.WriteSlice(&dequant, arr.Shape, deq); err != nil {
		return err
	}
	info := castInfo{
		Format:     f.Info(),
		Input:      in,
		InputDType: arr.DType.String(),
		Shape:      arr.Shape,
		CodesDType: codesDType,
		Rounding:   *round,
		Overflow:   *overflow,
		FullRange:  *fullRange,
		Stats:      compare(src, deq, f.MaxFinite()),
	}
	if mode == dtype.RoundStochastic {
		info.Seed = seed
	}
	if info.Shape == nil {
		info.Shape = []int{}
	}
	js, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	files := []outFile{{"codes.npy", codes.Bytes()}, {"dequant.npy", dequant.Bytes()}, {"info.json", js}}
	if err := writeAll(*out, files); err != nil {
		return err
	}
	sqnr := "exact"
	if db := info.Stats.SQNR; db != nil {
		sqnr = fmt.Sprintf("SQNR %.2f dB", *db)
	}
	fmt.Fprintf(stdout, "%s: %d values %v → %s (%d bits) in %s: codes.npy (%s), dequant.npy, info.json; max abs error %g, %s, %d clipped\n",
		in, len(src), arr.Shape, f.Name(), f.Bits(), *out, codesDType, info.Stats.MaxAbsError, sqnr, info.Stats.Clipped)
	if n := f.Note(); strings.Contains(n, "TensorCast") { // a spelling whose meaning differs elsewhere

		fmt.Fprintf(stderr, "note: %s: %s\n", f.Name(), n)
	}
	return nil
}

// encodeTo encodes src with codes of type C, writes them to w as an .npy array of
// the given shape, and decodes them into deq.
func encodeTo[C uint8 | uint16 | uint32](w io.Writer, f *dtype.Format, src, deq []float32, shape []int, o dtype.Options) error {
	c := make([]C, len(src))
	dtype.EncodeSlice(f, c, src, o)
	dtype.DecodeSlice(f, deq, c)
	return npy.WriteSlice(w, shape, c)
}

// compare returns the error statistics of dequantized values against the input.
func compare(src, deq []float32, maxFinite float32) castStats {
	s := castStats{Count: len(src)}
	var sig, noise float64
	for i, x := range src {
		switch {
		case x != x:
			s.NaNInputs++
			continue
		case math.IsInf(float64(x), 0):
			continue
		}
		if x > maxFinite || x < -maxFinite {
			s.Clipped++
		}
		y := float64(deq[i])
		if math.IsInf(y, 0) || y != y {
			continue
		}
		d := math.Abs(float64(x) - y)
		s.MaxAbsError = math.Max(s.MaxAbsError, d)
		sig += float64(x) * float64(x)
		noise += d * d
	}
	if noise > 0 && sig > 0 {
		db := 10 * math.Log10(sig/noise)
		s.SQNR = &db
	}
	return s
}

type outFile struct {
	name string
	data []byte
}

// writeAll writes every file into dir atomically as a set: each goes to a
// temporary file in dir, fsynced, and only when all are written are they renamed
// into place. On failure the temporary files are removed and no file of the set
// appears under its final name.
func writeAll(dir string, files []outFile) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var temps []string
	defer func() {
		if err != nil {
			for _, t := range temps {
				os.Remove(t)
			}
		}
	}()
	for _, f := range files {
		t, err := os.CreateTemp(dir, "."+f.name+".tmp*")
		if err != nil {
			return err
		}
		temps = append(temps, t.Name())
		_, err = t.Write(f.data)
		if err == nil {
			err = t.Sync()
		}
		if cerr := t.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.name), err)
		}
		if err := os.Chmod(t.Name(), 0o644); err != nil {
			return err
		}
	}
	for i, f := range files {
		if err := os.Rename(temps[i], filepath.Join(dir, f.name)); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.name), err)
		}
	}
	return nil
}
