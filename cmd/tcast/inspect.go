package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

const inspectUsage = "tcast inspect [-json] [-stats=true] FILE\n\n" +
	"FILE is a .safetensors file, a model.safetensors.index.json, or a directory holding either,\n" +
	"or a directory written by tcast cast (its parts and the dequantized tensor are shown).\n" +
	"Prints each tensor's name, dtype, shape and bytes; for float tensors (F64, F32, F16, BF16, F8_*)\n" +
	"the min, max, mean and std of the finite values, the fraction of zeros and the NaN and Inf counts;\n" +
	"for the parts of weights converted to the tcast layout the weight, datatype and part they hold\n" +
	"(and a mask's density: the fraction of kept elements), with the statistics of each dequantized\n" +
	"weight; then totals. -stats=false reads the headers only"

// inspectReport is what tcast inspect prints (as JSON with -json).
type inspectReport struct {
	File      string            `json:"file"`
	Shards    []string          `json:"shards,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"` // __metadata__ without the tcast:WEIGHT entries
	Tensors   []inspectTensor   `json:"tensors"`
	Converted []inspectWeight   `json:"converted,omitempty"`
	Totals    inspectTotals     `json:"totals"`
}

// inspectTensor describes one stored tensor.
type inspectTensor struct {
	Name   string         `json:"name"`
	DType  string         `json:"dtype"`
	Shape  []int          `json:"shape"`
	Bytes  int64          `json:"bytes"`
	Shard  string         `json:"shard,omitempty"`
	PartOf *inspectPartOf `json:"part_of,omitempty"`
	Stats  *valueStats    `json:"stats,omitempty"`
	// Density is the fraction of kept flags of a mask part.
	Density *float64 `json:"density,omitempty"`
}

// inspectPartOf names the converted weight a tensor is a part of.
type inspectPartOf struct {
	Weight   string `json:"weight"`
	DataType string `json:"datatype"`
	Part     string `json:"part"` // data, scale, zero, tensor_scale, meta, mask
}

// inspectWeight describes one weight converted to the tcast layout.
type inspectWeight struct {
	Name         string            `json:"name"`
	DataType     string            `json:"datatype"`      // registered name
	Code         string            `json:"datatype_code"` // the code tcast.Lookup accepts
	Shape        []int             `json:"shape"`
	Axis         int               `json:"axis"`
	ScaleMode    string            `json:"scale_mode"`
	BitsPerValue float64           `json:"bits_per_value"`
	Parts        map[string]string `json:"parts"` // part → tensor
	// Stats are those of the dequantized weight.
	Stats   *valueStats `json:"dequantized,omitempty"`
	Density *float64    `json:"mask_density,omitempty"`
}

// inspectTotals sums the report. Parameters counts the elements of the
// tensors that are no converted weight's parts plus the logical elements of
// the converted weights.
type inspectTotals struct {
	Tensors    int   `json:"tensors"`
	Bytes      int64 `json:"bytes"`      // tensor data
	FileBytes  int64 `json:"file_bytes"` // whole files, headers included
	Parameters int64 `json:"parameters"`
	Converted  int   `json:"converted_weights"`
}

// valueStats summarizes float values. Min, Max, Mean and Std are over the
// finite values (null when there are none); Zeros is the fraction of all
// values that are ±0.
type valueStats struct {
	Count int64    `json:"count"`
	Min   *float64 `json:"min"`
	Max   *float64 `json:"max"`
	Mean  *float64 `json:"mean"`
	Std   *float64 `json:"std"`
	Zeros float64  `json:"zeros"`
	NaN   int64    `json:"nan"`
	Inf   int64    `json:"inf"`
}

func computeStats(v []float32) *valueStats {
	s := &valueStats{Count: int64(len(v))}
	lo, hi := math.Inf(1), math.Inf(-1)
	var sum float64
	var zeros, finite int64
	for _, x := range v {
		switch {
		case x != x:
			s.NaN++
			continue
		case math.IsInf(float64(x), 0):
			s.Inf++
			continue
		case x == 0:
			zeros++
		}
		finite++
		f := float64(x)
		sum += f
		lo, hi = min(lo, f), max(hi, f)
	}
	if len(v) > 0 {
		s.Zeros = float64(zeros) / float64(len(v))
	}
	if finite == 0 {
		return s
	}
	mean := sum / float64(finite)
	var ss float64
	for _, x := range v {
		if d := float64(x) - mean; !math.IsNaN(d) && !math.IsInf(d, 0) {
			ss += d * d
		}
	}
	std := math.Sqrt(ss / float64(finite))
	s.Min, s.Max, s.Mean, s.Std = &lo, &hi, &mean, &std
	return s
}

// floatDType reports whether Float32s converts dtype d.
func floatDType(d safetensors.DType) bool {
	switch d {
	case safetensors.F64, safetensors.F32, safetensors.F16, safetensors.BF16,
		safetensors.F8E4M3, safetensors.F8E5M2, safetensors.F8E4M3FNUZ, safetensors.F8E5M2FNUZ, safetensors.F8E8M0:
		return true
	}
	return false
}

// maskDensity returns the fraction of set flags among the n logical elements
// of a mask part: LSB-first bits when packed, one byte per flag otherwise.
func maskDensity(b []byte, n int, packed bool) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	var set int
	if packed {
		if len(b) < (n+7)/8 {
			return 0, fmt.Errorf("mask holds %d bytes, want %d for %d flags", len(b), (n+7)/8, n)
		}
		for _, x := range b[:n/8] {
			set += bits.OnesCount8(x)
		}
		if r := n % 8; r != 0 {
			set += bits.OnesCount8(b[n/8] & (1<<r - 1))
		}
	} else {
		if len(b) < n {
			return 0, fmt.Errorf("mask holds %d bytes, want %d", len(b), n)
		}
		for _, x := range b[:n] {
			if x != 0 {
				set++
			}
		}
	}
	return float64(set) / float64(n), nil
}

// naturalLess orders names with their digit runs compared as numbers, so
// model.layers.2 comes before model.layers.10.
func naturalLess(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			i, j := digitRun(a), digitRun(b)
			da, db := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
			if c := len(da) - len(db); c != 0 {
				return c
			}
			if c := strings.Compare(da, db); c != 0 {
				return c
			}
			if c := i - j; c != 0 { // equal values: fewer leading zeros first
				return c
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func runInspect(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fset.Bool("json", false, "print the report as JSON")
	withStats := fset.Bool("stats", true, "compute value statistics (reads every tensor); false reads the headers only")
	pos, err := parseArgs(fset, inspectUsage, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one FILE (a .safetensors file, an index or a directory), got %d arguments", len(pos))
	}
	path := pos[0]
	rep, err := inspect(path, *withStats)
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return err
	}
	if *asJSON {
		js, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(js, '\n'))
		return err
	}
	return printInspect(stdout, rep)
}

// inspect builds the report of a checkpoint or a cast directory.
func inspect(path string, withStats bool) (*inspectReport, error) {
	if castdir.Is(path) {
		return inspectCastDir(path, withStats)
	}
	in, err := convert.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	rep := &inspectReport{File: in.File(), Metadata: map[string]string{}}
	rep.Shards = in.Shards()

	// The converted weights, and which weight each part tensor belongs to.
	partOf := map[string]*inspectPartOf{}
	masks := map[string]layout.PartInfo{} // mask tensor → its part description
	for k, v := range in.Metadata() {
		name, ok := strings.CutPrefix(k, layout.MetaPrefix)
		if !ok {
			rep.Metadata[k] = v
			continue
		}
		info, _, err := layout.ReadWeightInfo(in.Metadata(), name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.File(), err)
		}
		dtName := info.Name
		if dtName == "" {
			dtName = info.DataType
		}
		w := inspectWeight{Name: name, DataType: dtName, Code: info.DataType, Shape: info.Shape, Axis: info.Axis,
			ScaleMode: info.ScaleMode, BitsPerValue: info.Bits, Parts: map[string]string{}}
		for pn, pi := range info.Parts {
			w.Parts[pn] = pi.Tensor
			partOf[pi.Tensor] = &inspectPartOf{Weight: name, DataType: dtName, Part: pn}
			if pn == "mask" {
				masks[pi.Tensor] = pi
			}
		}
		rep.Converted = append(rep.Converted, w)
	}
	// Other layouts: tcast convert records which tensors hold each weight.
	decodeWith := "tcast"
	if ln := in.Metadata()[convert.MetaLayout]; ln != "" && ln != "tcast" {
		if _, err := layout.Get(ln); err != nil {
			return nil, fmt.Errorf("%s: %w", in.File(), err)
		}
		decodeWith = ln
		var ws map[string][]string
		if err := json.Unmarshal([]byte(in.Metadata()[convert.MetaWeights]), &ws); err != nil {
			return nil, fmt.Errorf("%s: metadata %s: %v", in.File(), convert.MetaWeights, err)
		}
		dtName := in.Metadata()[convert.MetaDataType]
		for name, tensors := range ws {
			w := inspectWeight{Name: name, DataType: dtName, Parts: map[string]string{}}
			if dt, err := tc.Lookup(dtName); err == nil {
				w.Code, w.BitsPerValue = dt.Code(), dt.BitsPerValue()
			}
			for _, tn := range tensors {
				part := strings.TrimPrefix(strings.TrimPrefix(tn, strings.TrimSuffix(name, ".weight")), ".")
				if part == "" {
					part = tn
				}
				w.Parts[part] = tn
				partOf[tn] = &inspectPartOf{Weight: name, DataType: dtName, Part: part}
			}
			rep.Converted = append(rep.Converted, w)
		}
	}
	if len(rep.Metadata) == 0 {
		rep.Metadata = nil
	}
	slices.SortFunc(rep.Converted, func(a, b inspectWeight) int { return naturalLess(a.Name, b.Name) })

	rep.Totals = inspectTotals{Tensors: len(in.Tensors()), FileBytes: in.Size(), Converted: len(rep.Converted)}
	readable := map[string]bool{}
	for _, t := range in.Tensors() {
		stored, size := in.Stored(t.Name)
		if floatDType(t.DType) {
			readable[t.Name] = true // Float32s reads it (GGUF block types included)
		}
		it := inspectTensor{Name: t.Name, DType: stored, Shape: t.Shape, Bytes: size, PartOf: partOf[t.Name]}
		if it.Shape == nil {
			it.Shape = []int{}
		}
		it.Shard = in.Shard(t.Name)
		rep.Tensors = append(rep.Tensors, it)
		rep.Totals.Bytes += size
		if it.PartOf == nil {
			rep.Totals.Parameters += t.NumElements()
		}
	}
	for _, w := range rep.Converted {
		if w.Shape == nil {
			continue // counted once decoded
		}
		n := int64(1)
		for _, d := range w.Shape {
			n *= int64(d)
		}
		rep.Totals.Parameters += n
	}
	slices.SortFunc(rep.Tensors, func(a, b inspectTensor) int { return naturalLess(a.Name, b.Name) })

	// Mask densities need only the (small) mask bytes: always computed.
	density := map[string]float64{}
	for tn, pi := range masks {
		b, err := in.Bytes(tn)
		if err != nil {
			if errors.Is(err, safetensors.ErrNotFound) {
				continue // reported by Decode when statistics are on
			}
			return nil, err
		}
		n := 1
		for _, d := range pi.Shape {
			n *= d
		}
		d, err := maskDensity(b, n, pi.Packed)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %v", in.File(), tn, err)
		}
		density[tn] = d
	}
	for i := range rep.Tensors {
		if d, ok := density[rep.Tensors[i].Name]; ok {
			rep.Tensors[i].Density = &d
		}
	}
	for i := range rep.Converted {
		if d, ok := density[rep.Converted[i].Parts["mask"]]; ok {
			rep.Converted[i].Density = &d
		}
	}
	if !withStats {
		return rep, nil
	}

	// Statistics, on every CPU: float tensors (not parts) and dequantized weights.
	type job struct {
		tensor *inspectTensor
		weight *inspectWeight
	}
	var jobs []job
	for i := range rep.Tensors {
		t := &rep.Tensors[i]
		if readable[t.Name] && t.PartOf == nil {
			jobs = append(jobs, job{tensor: t})
		}
	}
	for i := range rep.Converted {
		jobs = append(jobs, job{weight: &rep.Converted[i]})
	}
	decoder, err := layout.Get(decodeWith)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(jobs), 1)) {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				if j.tensor != nil {
					v, err := in.Float32s(j.tensor.Name)
					if err != nil {
						errs[i] = err
						continue
					}
					j.tensor.Stats = computeStats(v)
					continue
				}
				t, ok, err := decoder.Decode(j.weight.Name, in)
				if err == nil && !ok {
					err = fmt.Errorf("not found in the %s layout", decoder.Name())
				}
				if err == nil && j.weight.Shape == nil {
					j.weight.Shape = t.Shape // as stored (gpt-oss experts: [E, out, in])
				}
				var v []float32
				if err == nil {
					v, err = tc.Decompress(t)
				}
				if err != nil {
					errs[i] = fmt.Errorf("%s: weight %q: %v", in.File(), j.weight.Name, err)
					continue
				}
				j.weight.Stats = computeStats(v)
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if decodeWith != "tcast" {
		// Shapes of other layouts' weights are known only once decoded.
		for _, w := range rep.Converted {
			n := int64(1)
			for _, d := range w.Shape {
				n *= int64(d)
			}
			rep.Totals.Parameters += n
		}
	}
	return rep, nil
}

// inspectCastDir builds the report of a directory written by tcast cast: one
// tensor per part (named by its file, with its storage, logical shape and
// compressed bytes) and the cast tensor as the one converted weight.
func inspectCastDir(path string, withStats bool) (*inspectReport, error) {
	d, err := castdir.Open(path)
	if err != nil {
		return nil, err
	}
	info := &d.Info
	rep := &inspectReport{File: path, Metadata: map[string]string{
		"input": info.Input, "input_dtype": info.InputDType, "rounding": info.Rounding, "overflow": info.Overflow}}
	if info.Keep != "" {
		rep.Metadata["keep"] = info.Keep
	}
	if info.Seed != nil {
		rep.Metadata["seed"] = strconv.FormatUint(*info.Seed, 10)
	}
	name := info.Input
	if name == "" {
		name = filepath.Base(path)
	}
	w := inspectWeight{Name: name, DataType: d.Name(), Code: info.DataType.Code, Shape: d.Shape(), Axis: info.Axis,
		ScaleMode: d.Mode.String(), BitsPerValue: info.BitsPerValue, Parts: map[string]string{}}
	rep.Totals = inspectTotals{Tensors: len(info.Parts), Parameters: 1, Converted: 1}
	for _, n := range w.Shape {
		rep.Totals.Parameters *= int64(n)
	}
	for _, pi := range info.Parts {
		w.Parts[pi.Name] = pi.File
		it := inspectTensor{Name: pi.File, DType: pi.Storage, Shape: pi.Shape, Bytes: int64(pi.Bytes),
			PartOf: &inspectPartOf{Weight: name, DataType: w.DataType, Part: pi.Name}}
		if pi.Name == "mask" {
			m, err := d.Part("mask")
			if err != nil {
				return nil, err
			}
			dens, err := maskDensity(m.Bytes, m.Len(), m.Packed)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(path, pi.File), err)
			}
			it.Density, w.Density = &dens, &dens
		}
		rep.Tensors = append(rep.Tensors, it)
		rep.Totals.Bytes += it.Bytes
	}
	for _, f := range d.Files() {
		if st, err := os.Stat(filepath.Join(path, f)); err == nil {
			rep.Totals.FileBytes += st.Size()
		}
	}
	if withStats {
		v, _, err := d.Float32()
		if err != nil {
			return nil, err
		}
		w.Stats = computeStats(v)
	}
	rep.Converted = []inspectWeight{w}
	return rep, nil
}

// printInspect prints the report as tables, without trailing blanks.
func printInspect(w io.Writer, rep *inspectReport) error {
	var buf bytes.Buffer
	if err := printInspectTo(&buf, rep); err != nil {
		return err
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimSuffix(l, "\n"), " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func printInspectTo(w io.Writer, rep *inspectReport) error {
	head := rep.File
	if len(rep.Shards) > 0 {
		head += fmt.Sprintf(" (%d shards)", len(rep.Shards))
	}
	if len(rep.Metadata) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(rep.Metadata)) {
			v := rep.Metadata[k]
			if len(v) > 60 {
				v = v[:57] + "..."
			}
			kv = append(kv, k+"="+strconv.Quote(v))
		}
		head += "; metadata: " + strings.Join(kv, ", ")
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tdtype\tshape\tbytes\tmin\tmax\tmean\tstd\tzeros\tnan\tinf\tnote")
	for _, t := range rep.Tensors {
		var note []string
		if p := t.PartOf; p != nil {
			note = append(note, fmt.Sprintf("weight %s: datatype %s, part %s", p.Weight, p.DataType, p.Part))
		}
		if t.Density != nil {
			note = append(note, fmt.Sprintf("density %.4f", *t.Density))
		}
		if t.Shard != "" {
			note = append(note, "in "+t.Shard)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", t.Name, t.DType, shapeString(t.Shape), t.Bytes, statsCells(t.Stats), strings.Join(note, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Converted) > 0 {
		fmt.Fprintln(w, "\nconverted weights (statistics of the dequantized values):")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "name\tdatatype\tshape\tbits/value\tmin\tmax\tmean\tstd\tzeros\tnan\tinf\tnote")
		for _, c := range rep.Converted {
			note := "code " + c.Code
			if c.Density != nil {
				note += fmt.Sprintf("; mask density %.4f", *c.Density)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\t%s\n", c.Name, c.DataType, shapeString(c.Shape), c.BitsPerValue, statsCells(c.Stats), note)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	tt := rep.Totals
	_, err := fmt.Fprintf(w, "\ntotal: %d tensors, %d bytes of data (%d with headers), %d parameters; converted weights: %d\n",
		tt.Tensors, tt.Bytes, tt.FileBytes, tt.Parameters, tt.Converted)
	return err
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// statsCells formats min, max, mean, std, zeros, nan and inf as tab-separated cells.
func statsCells(s *valueStats) string {
	if s == nil {
		return "-\t-\t-\t-\t-\t-\t-"
	}
	num := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatFloat(*p, 'g', 4, 64)
	}
	return strings.Join([]string{num(s.Min), num(s.Max), num(s.Mean), num(s.Std),
		strconv.FormatFloat(s.Zeros, 'g', 4, 64), strconv.FormatInt(s.NaN, 10), strconv.FormatInt(s.Inf, 10)}, "\t")
}
