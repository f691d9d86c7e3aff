// Package convert casts the weights of a checkpoint to a datatype and writes them
// in a loader layout: tensors are read from the memory-mapped input, cast in
// parallel, and streamed to a temporary file that is renamed into place only when
// complete, so peak memory stays near (workers + 1) × the largest tensor and a
// failed conversion leaves nothing under the final name.
package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/ordered"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// The __metadata__ keys Convert adds in every layout, so that verify and
// decompress can find the converted weights whatever the layout.
const (
	MetaDataType = "tcast.datatype" // the datatype's name
	MetaLayout   = "tcast.layout"   // the layout's name
	MetaWeights  = "tcast.weights"  // JSON: converted weight name → the output tensors holding it
	// MetaTransposed lists (JSON) the weights stored with their last two axes
	// swapped (layout.Transposer).
	MetaTransposed = "tcast.transposed"
)

// transposed reports whether the layout stores weight name transposed.
func transposed(l layout.Layout, name string, rank int) bool {
	t, ok := l.(layout.Transposer)
	return ok && rank >= 2 && t.Transposed(name, rank)
}

// castShape is the shape a weight is cast in: its own, or with the last two
// axes swapped for a transposing layout.
func castShape(l layout.Layout, ti safetensors.TensorInfo) []int {
	if !transposed(l, ti.Name, len(ti.Shape)) {
		return ti.Shape
	}
	return layout.SwapLast2(ti.Shape)
}

// Options control Convert.
type Options struct {
	DataType *tcast.DataType
	Layout   layout.Layout
	// Include and Exclude override the default choice of tensors to cast:
	// a name matching Include is cast (if it is a float tensor), a name matching
	// Exclude is kept. Exclude wins.
	Include, Exclude *regexp.Regexp
	// Axis is the scaled axis (negative from the end).
	Axis int
	Mode scale.Mode
	// Workers is the number of tensors cast at once; 0 means all cores.
	Workers int
	// Force replaces existing output files.
	Force bool
	// ShardSize, when positive, splits the output into shards of at most this
	// many bytes of tensor data (a tensor larger than that gets a shard of its
	// own) with a model.safetensors.index.json, in the output directory.
	ShardSize int64
	// Progress, when set, is called after each tensor is written, from one
	// goroutine.
	Progress func(Progress)
}

// Progress reports how far a conversion has come.
type Progress struct {
	Tensors, TotalTensors int
	Bytes, TotalBytes     int64 // input bytes done and in all
	Elapsed               time.Duration
}

// TensorResult is one tensor's line of the conversion report.
type TensorResult struct {
	Name     string  `json:"name"`
	Shape    []int   `json:"shape"`
	Source   string  `json:"source_dtype"`
	DataType string  `json:"datatype,omitempty"` // empty when kept
	Bits     float64 `json:"bits_per_value"`
	// SQNR in dB and max abs error of the cast against the source; SQNR is
	// +Inf (null in JSON) when the cast is exact.
	SQNR      *float64 `json:"sqnr_db,omitempty"`
	MaxAbsErr float64  `json:"max_abs_error"`
	BytesIn   int64    `json:"bytes_in"`
	BytesOut  int64    `json:"bytes_out"`
	// Lost counts finite source values that came back NaN or infinite.
	Lost int `json:"nonfinite_outputs,omitempty"`
	// Note says why a weight the default rule picked was kept after all (the
	// layout cannot hold its shape).
	Note string `json:"note,omitempty"`
}

func (r *TensorResult) setErrors(e Errors) { r.SQNR, r.MaxAbsErr, r.Lost = e.SQNR, e.MaxAbs, e.Lost }

// Result is the report of a conversion.
type Result struct {
	Input    string         `json:"input"`
	Output   string         `json:"output"`
	Layout   string         `json:"layout"`
	DataType string         `json:"datatype"`
	Tensors  []TensorResult `json:"tensors"`
	BytesIn  int64          `json:"bytes_in"`
	BytesOut int64          `json:"bytes_out"`
	Seconds  float64        `json:"seconds"`
}

// Ratio returns bytes in over bytes out.
func (r *Result) Ratio() float64 {
	if r.BytesOut == 0 {
		return 0
	}
	return float64(r.BytesIn) / float64(r.BytesOut)
}

// GBps returns input gigabytes per second.
func (r *Result) GBps() float64 {
	if r.Seconds == 0 {
		return 0
	}
	return float64(r.BytesIn) / r.Seconds / 1e9
}

// Input is an opened source checkpoint: one safetensors file or a sharded set.
type Input struct {
	Path     string
	file     *safetensors.File
	sharded  *safetensors.Sharded
	gf       *gguf.File
	ggufRaw  map[string]bool // GGUF tensors whose bytes are usable as they are
	config   []byte
	tensors  []safetensors.TensorInfo
	file0    string         // the file opened
	index    map[string]int // tensor name → position in tensors
	metadata map[string]string
	size     int64 // bytes of the file(s), headers included
}

// OpenInput opens path: a .safetensors file, a model.safetensors.index.json, a
// .gguf file, or a directory holding one of them (the index first).
func OpenInput(path string) (*Input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	in := &Input{Path: path}
	dir := filepath.Dir(path)
	if st.IsDir() {
		dir = path
		switch {
		case exists(filepath.Join(path, safetensors.IndexFileName)):
			path = filepath.Join(path, safetensors.IndexFileName)
		case exists(filepath.Join(path, "model.safetensors")):
			path = filepath.Join(path, "model.safetensors")
		default:
			m, _ := filepath.Glob(filepath.Join(path, "*.safetensors"))
			if len(m) == 0 {
				m, _ = filepath.Glob(filepath.Join(path, "*.gguf"))
			}
			if len(m) != 1 {
				return nil, fmt.Errorf("convert: %s: want one .safetensors or .gguf file, or an index, found %d", in.Path, len(m))
			}
			path = m[0]
		}
	}
	in.file0 = path
	switch {
	case strings.HasSuffix(path, ".gguf"):
		if err := in.openGGUF(path); err != nil {
			return nil, err
		}
	case strings.HasSuffix(path, ".json"):
		in.sharded, err = safetensors.OpenIndex(path)
		if err != nil {
			return nil, err
		}
		in.tensors, in.metadata = in.sharded.Tensors(), map[string]string{}
		for _, sh := range in.sharded.Shards() {
			f := in.sharded.File(sh)
			maps.Copy(in.metadata, f.Metadata()) // every shard's, merged
			in.size += f.Size()
		}
	default:
		in.file, err = safetensors.Open(path)
		if err != nil {
			return nil, err
		}
		in.tensors, in.metadata, in.size = in.file.Tensors(), in.file.Metadata(), in.file.Size()
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
		in.config = b
	}
	in.index = make(map[string]int, len(in.tensors))
	for i, t := range in.tensors {
		in.index[t.Name] = i
	}
	return in, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// ggufDTypes maps the GGUF types whose bytes a safetensors dtype reads as they
// are; other types (the block formats) are dequantized to F32.
var ggufDTypes = map[gguf.Type]safetensors.DType{
	gguf.TypeF32: safetensors.F32, gguf.TypeF16: safetensors.F16, gguf.TypeBF16: safetensors.BF16,
	gguf.TypeF64: safetensors.F64, gguf.TypeI8: safetensors.I8, gguf.TypeI16: safetensors.I16,
	gguf.TypeI32: safetensors.I32, gguf.TypeI64: safetensors.I64,
}

// openGGUF reads a GGUF file as the input: shapes in row-major order, block
// types seen as F32 (dequantized on read).
func (in *Input) openGGUF(path string) error {
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	in.gf, in.ggufRaw, in.metadata = f, map[string]bool{}, map[string]string{"source": "gguf", "general.architecture": f.Architecture()}
	if st, err := os.Stat(path); err == nil {
		in.size = st.Size()
	}
	for _, t := range f.Tensors {
		d, raw := ggufDTypes[t.Type]
		size := t.Size
		if !raw {
			d, size = safetensors.F32, 4*t.NumElements()
		}
		in.ggufRaw[t.Name] = raw
		in.tensors = append(in.tensors, safetensors.TensorInfo{Name: t.Name, DType: d, Shape: t.Shape(), Offset: t.Offset, Size: size})
	}
	return nil
}

// Close releases the input.
func (in *Input) Close() error {
	switch {
	case in.file != nil:
		return in.file.Close()
	case in.gf != nil:
		return in.gf.Close()
	}
	return in.sharded.Close()
}

// File returns the path of the file opened: the .safetensors, index or .gguf
// file (inside the directory given, for a directory).
func (in *Input) File() string { return in.file0 }

// Size returns the bytes of the input's file or files, headers included.
func (in *Input) Size() int64 { return in.size }

// Shards returns the shard file names of a sharded input, nil otherwise.
func (in *Input) Shards() []string {
	if in.sharded == nil {
		return nil
	}
	return in.sharded.Shards()
}

// Shard returns the shard holding tensor name ("" when not sharded).
func (in *Input) Shard(name string) string {
	if in.sharded == nil {
		return ""
	}
	s, _ := in.sharded.Shard(name)
	return s
}

// Stored returns how tensor name is stored on disk: its type name (a
// safetensors dtype, or a ggml type such as Q8_0 for a GGUF input, whose block
// types Tensors reports as F32) and its bytes.
func (in *Input) Stored(name string) (string, int64) {
	if in.gf != nil {
		if t, ok := in.gf.Tensor(name); ok {
			return t.Type.String(), t.Size
		}
	}
	if i, ok := in.index[name]; ok {
		return in.tensors[i].DType.String(), in.tensors[i].Size
	}
	return "", 0
}

// Tensors returns the input's tensors in file order.
func (in *Input) Tensors() []safetensors.TensorInfo { return in.tensors }

// Metadata returns the input's __metadata__.
func (in *Input) Metadata() map[string]string { return in.metadata }

// Bytes returns a tensor's bytes (a view of the mapped file where possible).
func (in *Input) Bytes(name string) ([]byte, error) {
	switch {
	case in.file != nil:
		return in.file.Bytes(name)
	case in.gf != nil && in.ggufRaw[name]:
		return in.gf.TensorBytes(name)
	case in.gf != nil:
		v, err := in.gf.Float32s(name)
		if err != nil {
			return nil, err
		}
		return floatBytes(v, dtype.MustParse("float32")), nil
	}
	return in.sharded.Bytes(name)
}

// Release drops a tensor's mapped pages from resident memory once it is done
// with (they stay in the page cache).
func (in *Input) Release(name string) {
	switch {
	case in.file != nil:
		in.file.Release(name)
	case in.sharded != nil:
		in.sharded.Release(name)
	}
}

// Float32s returns a float tensor's values.
func (in *Input) Float32s(name string) ([]float32, error) {
	switch {
	case in.file != nil:
		return in.file.Float32s(name)
	case in.gf != nil:
		return in.gf.Float32s(name)
	}
	return in.sharded.Float32s(name)
}

// Tensor implements layout.Source.
func (in *Input) Tensor(name string) (safetensors.TensorInfo, []byte, bool) {
	i, ok := in.index[name]
	if !ok {
		return safetensors.TensorInfo{}, nil, false
	}
	b, err := in.Bytes(name)
	if err != nil {
		return safetensors.TensorInfo{}, nil, false
	}
	return in.tensors[i], b, true
}

func isFloat(d safetensors.DType) bool {
	switch d {
	case safetensors.F32, safetensors.F16, safetensors.BF16, safetensors.F64:
		return true
	}
	return false
}

// keepByDefault names the tensors people expect a conversion to leave alone:
// biases, norms, embeddings and the output head.
var keepByDefault = regexp.MustCompile(`(?i)(bias|norm|embed|lm_head|wte|wpe|\.ln_|_ln\b|layernorm|batchnorm|\.bn|running_|gamma|beta)`)

// Decide reports whether tensor t is cast, and why not: float tensors of rank 2
// and more whose scaled axis holds at least one tile, except biases, norms and
// embeddings, with Include and Exclude overriding, and then only what the
// layout accepts.
func Decide(t safetensors.TensorInfo, opts *Options) (bool, string) {
	if ok, why := decideBase(t, opts, lastTile(opts.DataType)); !ok {
		return false, why
	}
	if err := opts.Layout.Check(opts.DataType, normAxis(opts.Axis, len(t.Shape)), len(t.Shape)); err != nil {
		return false, "layout: " + err.Error()
	}
	return true, ""
}

// decideBase is Decide without the layout's own check; tile is the block size
// along the scaled axis (0 for none).
func decideBase(t safetensors.TensorInfo, opts *Options, tile int) (bool, string) {
	included := opts.Include != nil && opts.Include.MatchString(t.Name)
	switch {
	case !isFloat(t.DType):
		return false, "not a float tensor"
	case opts.Exclude != nil && opts.Exclude.MatchString(t.Name):
		return false, "excluded"
	case included:
	case len(t.Shape) < 2:
		return false, "fewer than 2 dimensions"
	case keepByDefault.MatchString(t.Name):
		return false, "bias, norm or embedding"
	}
	if len(t.Shape) == 0 {
		return false, "a scalar"
	}
	a := normAxis(opts.Axis, len(t.Shape))
	if a < 0 || a >= len(t.Shape) {
		return false, fmt.Sprintf("axis %d out of range", opts.Axis)
	}
	if tile > 0 && t.Shape[a] < tile && !included {
		return false, fmt.Sprintf("axis %d holds %d elements, less than one tile of %d", a, t.Shape[a], tile)
	}
	return true, ""
}

// lastTile returns the tile size along the scaled axis, 0 for tensor or channel
// scaling.
func lastTile(dt *tcast.DataType) int {
	if s := dt.Spec(); s != nil && len(s.Tiles) > 0 {
		return s.Tiles[len(s.Tiles)-1].Size
	}
	return 0
}

func normAxis(a, rank int) int {
	if a < 0 {
		a += rank
	}
	return a
}

// job is one tensor on its way through the pipeline.
type job struct {
	info   safetensors.TensorInfo
	cast   bool
	out    []safetensors.Tensor
	meta   map[string]string // metadata the layout wrote for the real data
	result TensorResult
}

// OutputPath returns the safetensors file a conversion to out writes: out itself
// when it ends in .safetensors, else out/model.safetensors.
func OutputPath(out string) string {
	if strings.HasSuffix(out, ".safetensors") {
		return out
	}
	return filepath.Join(out, "model.safetensors")
}

// Convert converts the checkpoint at in to out (see OutputPath) in opts.Layout.
func Convert(inPath, out string, opts Options) (*Result, error) {
	start := time.Now()
	if opts.DataType == nil || opts.Layout == nil {
		return nil, errors.New("convert: a datatype and a layout are required")
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	in, err := OpenInput(inPath)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	dst := OutputPath(out)
	if opts.ShardSize > 0 {
		if strings.HasSuffix(out, ".safetensors") {
			return nil, fmt.Errorf("convert: sharded output goes to a directory, not %s", out)
		}
		dst = filepath.Join(out, safetensors.IndexFileName)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, fmt.Errorf("convert: %v", err)
	}
	if !opts.Force && exists(dst) {
		return nil, fmt.Errorf("convert: %s exists (use -force to replace it)", dst)
	}
	if opts.ShardSize > 0 {
		dst = filepath.Join(out, "model.safetensors") // shards are named from its directory
	}

	// Plan: what each tensor becomes, so the header can be written first.
	tensors := in.Tensors()
	jobs := make([]*job, len(tensors))
	meta := map[string]string{}
	for k, v := range in.Metadata() {
		if !strings.HasPrefix(k, layout.MetaPrefix) {
			meta[k] = v
		}
	}
	var specs []safetensors.TensorSpec
	var converted []layout.Converted
	var kept []string
	res := &Result{Input: inPath, Output: dst, Layout: opts.Layout.Name(), DataType: opts.DataType.Name()}
	// Template casts and encodes run in parallel; each gets its own metadata map.
	planned := make([][]safetensors.TensorSpec, len(tensors))
	plannedMeta := make([]map[string]string, len(tensors))
	planErr := make([]error, len(tensors))
	var pwg sync.WaitGroup
	psem := make(chan struct{}, opts.Workers)
	for i, ti := range tensors {
		j := &job{info: ti}
		j.cast, _ = Decide(ti, &opts)
		jobs[i] = j
		if !j.cast {
			continue
		}
		pwg.Add(1)
		psem <- struct{}{}
		go func(i int, ti safetensors.TensorInfo) {
			defer func() { <-psem; pwg.Done() }()
			tmpl, err := tcast.Template(castShape(opts.Layout, ti), opts.DataType, &tcast.Options{Axis: opts.Axis, Mode: opts.Mode})
			var ts []safetensors.Tensor
			if err == nil {
				plannedMeta[i] = map[string]string{}
				ts, err = opts.Layout.Encode(ti.Name, tmpl, plannedMeta[i])
			}
			// Keep the declarations only: the template's bytes go now.
			for _, t := range ts {
				planned[i] = append(planned[i], t.Spec())
			}
			planErr[i] = err
		}(i, ti)
	}
	pwg.Wait()
	seen := map[string]string{}
	weights := map[string][]string{} // converted weight → its output tensors
	var transposedNames []string
	for i, ti := range tensors {
		j := jobs[i]
		j.result = TensorResult{Name: ti.Name, Shape: ti.Shape, Source: ti.DType.String(), BytesIn: ti.Size}
		var outSpecs []safetensors.TensorSpec
		if j.cast && planErr[i] != nil {
			// Explicitly included tensors must convert; the default choice
			// keeps what the layout cannot hold, and says so.
			if opts.Include != nil && opts.Include.MatchString(ti.Name) {
				return nil, fmt.Errorf("convert: %s: tensor %s: %v", inPath, ti.Name, planErr[i])
			}
			j.cast = false
			j.result.Note = "kept: " + planErr[i].Error()
		}
		if j.cast {
			for k, v := range plannedMeta[i] {
				meta[k] = v
			}
			for _, sp := range planned[i] {
				outSpecs = append(outSpecs, sp)
				weights[ti.Name] = append(weights[ti.Name], sp.Name)
			}
			planned[i] = nil
			converted = append(converted, layout.Converted{Name: ti.Name, Shape: ti.Shape})
			if transposed(opts.Layout, ti.Name, len(ti.Shape)) {
				transposedNames = append(transposedNames, ti.Name)
			}
			j.result.DataType = opts.DataType.Name()
		} else {
			outSpecs = []safetensors.TensorSpec{{Name: ti.Name, DType: ti.DType, Shape: ti.Shape}}
			kept = append(kept, ti.Name)
			j.result.Bits = float64(ti.DType.BitSize())
		}
		for _, sp := range outSpecs {
			if other, dup := seen[sp.Name]; dup {
				return nil, fmt.Errorf("convert: %s: output tensor %q of %s collides with one of %s", inPath, sp.Name, ti.Name, other)
			}
			seen[sp.Name] = ti.Name
			specs = append(specs, sp)
		}
		res.BytesIn += ti.Size
	}
	files, err := opts.Layout.Files(opts.DataType, converted, kept, in.config)
	if err != nil {
		return nil, fmt.Errorf("convert: %v", err)
	}
	meta[MetaDataType] = opts.DataType.Name()
	meta[MetaLayout] = opts.Layout.Name()
	wj, err := json.Marshal(weights)
	if err != nil {
		return nil, err
	}
	meta[MetaWeights] = string(wj)
	if len(transposedNames) > 0 {
		tj, _ := json.Marshal(transposedNames)
		meta[MetaTransposed] = string(tj)
	}

	w, err := createOutput(dst, specs, meta, opts.ShardSize)
	if err != nil {
		return nil, err
	}
	if w.index != "" {
		res.Output = w.index
	}
	ok := false
	defer func() {
		if !ok {
			w.Abort()
		}
	}()

	// Execute: workers cast, this goroutine writes in input order; at most
	// Workers+1 tensors are in flight.
	patch := map[string]string{} // metadata values that differ from the plan's
	var bytesDone int64
	err = ordered.Run(len(jobs), opts.Workers, opts.Workers+1, func(i int) error {
		return run(in, jobs[i], &opts)
	}, func(i int) error {
		pj := jobs[i]
		for _, t := range pj.out {
			if err := w.Write(t.Name, t.Data); err != nil {
				return fmt.Errorf("convert: writing %s: %v", dst, err)
			}
			pj.result.BytesOut += int64(len(t.Data))
		}
		pj.out = nil // release the tensor's memory
		in.Release(pj.info.Name)
		for k, v := range pj.meta {
			old, ok := meta[k]
			switch {
			case !ok:
				return fmt.Errorf("convert: tensor %s: layout %s wrote metadata %q it did not declare", pj.info.Name, opts.Layout.Name(), k)
			case old != v:
				patch[k] = v
			}
		}
		res.Tensors = append(res.Tensors, pj.result)
		res.BytesOut += pj.result.BytesOut
		bytesDone += pj.info.Size
		if opts.Progress != nil {
			opts.Progress(Progress{Tensors: i + 1, TotalTensors: len(jobs), Bytes: bytesDone, TotalBytes: res.BytesIn, Elapsed: time.Since(start)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(patch) > 0 {
		if err := w.PatchMetadata(patch); err != nil {
			return nil, err
		}
	}
	// The config files go first: if one fails nothing is published, and if
	// the checkpoint then fails they are removed again.
	var written []string
	for name, b := range files {
		p := filepath.Join(filepath.Dir(dst), name)
		if err := atomicfile.WriteFile(p, b); err != nil {
			for _, q := range written {
				os.Remove(q)
			}
			return nil, fmt.Errorf("convert: %v", err)
		}
		written = append(written, p)
	}
	if err := w.Close(); err != nil {
		for _, q := range written {
			os.Remove(q)
		}
		return nil, err
	}
	ok = true
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// run casts (or copies) one tensor.
func run(in *Input, j *job, opts *Options) error {
	name := j.info.Name
	if !j.cast {
		b, err := in.Bytes(name)
		if err != nil {
			return err
		}
		j.out = []safetensors.Tensor{{Name: name, DType: j.info.DType, Shape: j.info.Shape, Data: b}}
		return nil
	}
	x, err := in.Float32s(name)
	if err != nil {
		return err
	}
	shape := j.info.Shape
	if transposed(opts.Layout, name, len(shape)) {
		x, shape = layout.TransposeLast2(x, shape)
	}
	copts := tcast.Options{Form: tcast.Actual, Axis: opts.Axis, Mode: opts.Mode}
	t, err := tcast.Cast(x, shape, opts.DataType, &copts)
	if err != nil {
		return fmt.Errorf("convert: tensor %s: %v", name, err)
	}
	j.meta = map[string]string{}
	if j.out, err = opts.Layout.Encode(name, t, j.meta); err != nil {
		return fmt.Errorf("convert: tensor %s: %v", name, err)
	}
	j.result.Bits = t.BitsPerValue()
	v, err := tcast.Decompress(t)
	if err != nil {
		return fmt.Errorf("convert: tensor %s: %v", name, err)
	}
	j.result.setErrors(Compare(x, v))
	return nil
}

// Errors compares dequantized values with their source.
type Errors struct {
	// SQNR in dB over elements where both are finite; nil when the error is
	// zero or the source is all zero.
	SQNR *float64
	// MaxAbs and MSE are the largest and the mean squared absolute error over
	// the same elements.
	MaxAbs, MSE float64
	// Lost counts finite source values that came back NaN or infinite.
	Lost int
}

// Compare measures got against want.
func Compare(want, got []float32) Errors {
	var e Errors
	var sig, noise float64
	n := 0
	for i, w := range want {
		g := got[i]
		wf := !math.IsNaN(float64(w)) && !math.IsInf(float64(w), 0)
		gf := !math.IsNaN(float64(g)) && !math.IsInf(float64(g), 0)
		if wf && !gf {
			e.Lost++
		}
		if !wf || !gf {
			continue
		}
		d := float64(g) - float64(w)
		sig += float64(w) * float64(w)
		noise += d * d
		e.MaxAbs = max(e.MaxAbs, math.Abs(d))
		n++
	}
	if n > 0 {
		e.MSE = noise / float64(n)
	}
	if noise != 0 && sig != 0 {
		s := 10 * math.Log10(sig/noise)
		e.SQNR = &s
	}
	return e
}
