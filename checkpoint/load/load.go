// Package load opens any checkpoint this module writes, and the same layouts
// written by other tools, and gives its logical tensors: what a model's
// modules hold, whatever the bytes on disk look like.
//
// Open takes a .safetensors file, a sharded model.safetensors.index.json, a
// directory holding either, or a .gguf file. It detects the layout from the
// files themselves: our __metadata__ when present (tcast convert's output in
// any layout), else config.json's quantization_config, hf_quant_config.json,
// and the tensors' names and dtypes (compressed-tensors, gpt-oss *_blocks /
// *_scales, ModelOpt NVFP4, DeepSeek-style FP8 with weight_scale_inv), else a
// plain float checkpoint. A quantized weight stored as several tensors
// (codes, scales, zero points, ...) is one logical tensor under its module's
// name. For each logical tensor Tensor gives the cast tensor (tcast.Tensor,
// whose parts view the mapped file where the bytes allow) and Float32 the
// dequantized values in the module's orientation.
package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/filetype"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/names"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ErrNotFound is matched (errors.Is) by the error for a tensor name the
// checkpoint does not hold, whichever layer reported it.
var ErrNotFound = errors.New("tensor not found")

// ErrNotQuantized is matched by the error of Tensor for a tensor that has no
// cast form (an integer tensor, or a GGUF type with no tcast datatype).
var ErrNotQuantized = errors.New("no cast form")

// NotFoundError reports a tensor name a checkpoint does not hold, with the
// closest names it does.
type NotFoundError struct {
	Path    string // the checkpoint
	Name    string // the name asked for
	Closest []string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%s: no tensor %q", e.Path, e.Name)
	if len(e.Closest) > 0 {
		msg += fmt.Sprintf(" (closest: %s)", strings.Join(e.Closest, ", "))
	}
	return msg
}

// Is makes errors.Is match ErrNotFound and the not-found errors of the
// safetensors and gguf packages.
func (e *NotFoundError) Is(target error) bool {
	return target == ErrNotFound || target == safetensors.ErrNotFound || target == gguf.ErrNoTensor
}

// Plain is the Layout name of a checkpoint without quantized weights.
const Plain = "plain"

// Info describes one logical tensor.
type Info struct {
	Name  string
	Shape []int // in the module's orientation
	// Type is how the tensor is stored: its safetensors dtype ("BF16"), its
	// ggml type ("Q4_K"), or the datatype of a quantized weight ("mxfp4").
	Type string
	// DType is the safetensors dtype whose bytes (Bytes) hold the tensor as
	// it is, 0 when it is quantized (read it with Float32).
	DType safetensors.DType
	// DataType is the datatype of a quantized weight, nil otherwise.
	DataType *tcast.DataType
	// Float reports whether Float32 reads the tensor.
	Float bool
	// Stored lists the stored tensors holding it.
	Stored []string
	// Size is the number of stored bytes.
	Size int64
	// Transposed reports a weight stored with its last two axes swapped
	// (gpt-oss experts): Tensor gives it as stored, Float32 as the module
	// holds it.
	Transposed bool
	// Rotation is the rotation of a weight whose values were rotated before
	// they were cast (tcast convert -rotate; "hadamard:32"), "" for none:
	// Tensor gives the rotated values as cast, Float32 undoes the rotation.
	Rotation string
}

// Quantized reports whether the tensor is stored in a cast form.
func (i *Info) Quantized() bool { return i.DataType != nil || (i.DType == 0 && i.Float) }

// Checkpoint is an opened checkpoint. Its methods are safe for concurrent
// use until Close.
type Checkpoint struct {
	path    string
	file    string // the file opened
	files   []string
	lay     layout.Layout
	st      *safetensors.File
	sh      *safetensors.Sharded
	gf      *gguf.File
	stored  []safetensors.TensorInfo
	sindex  map[string]int
	meta    map[string]string
	config  []byte
	dir     string // the directory of config.json and the other config files
	size    int64
	tensors []Info
	index   map[string]int
	broken  map[string]error // weights whose stored tensors do not decode
	rotated map[string]layout.Rotated
}

// Open opens the checkpoint at path (see the package comment).
func Open(path string) (*Checkpoint, error) {
	file, dir, err := resolve(path)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{path: path, file: file, dir: dir}
	kind, err := sniff(file)
	if err != nil {
		return nil, err
	}
	switch {
	case kind == "gguf":
		err = c.openGGUF(file)
	case kind == "index":
		err = c.openIndex(file)
	default:
		err = c.openFile(file)
	}
	if err != nil {
		return nil, err
	}
	c.sindex = make(map[string]int, len(c.stored))
	for i, t := range c.stored {
		c.sindex[t.Name] = i
	}
	if c.gf == nil {
		cfg := filepath.Join(dir, "config.json")
		b, err := inputfile.ReadFile(cfg)
		switch {
		case err == nil:
			c.config = b
			c.files = append(c.files, cfg)
		case errors.Is(err, inputfile.ErrNotRegular), errors.Is(err, inputfile.ErrTooLarge):
			c.Close()
			return nil, err
		}
		if hq := filepath.Join(dir, "hf_quant_config.json"); exists(hq) {
			c.files = append(c.files, hq)
		}
	}
	if err := c.detect(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// resolve finds the file to open for path, and the directory of its configs.
func resolve(path string) (file, dir string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("checkpoint %s does not exist: %w", path, err)
		}
		return "", "", err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return "", "", &inputfile.NotRegularError{Path: path, Mode: st.Mode()}
		}
		return path, filepath.Dir(path), nil
	}
	for _, n := range []string{safetensors.IndexFileName, "model.safetensors", "model.gguf"} {
		if p := filepath.Join(path, n); exists(p) {
			return p, path, nil
		}
	}
	m, _ := filepath.Glob(filepath.Join(path, "*.safetensors"))
	g, _ := filepath.Glob(filepath.Join(path, "*.gguf"))
	if first, ok := firstSplit(g); ok && len(m) == 0 {
		return first, path, nil
	}
	m = append(m, g...)
	switch len(m) {
	case 0:
		return "", "", notCheckpoint(path, "the directory holds no .safetensors or .gguf file and no "+safetensors.IndexFileName)
	case 1:
	default:
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		return "", "", fmt.Errorf("%s holds %d checkpoint files (%s) and no %s: name the one to read", path, len(m), strings.Join(m, ", "), safetensors.IndexFileName)
	}
	return m[0], path, nil
}

// firstSplit returns the first split of a split GGUF model when paths are
// all splits of one (NAME-00001-of-0000N.gguf, ...), some maybe missing
// (opening it then names the first one missing).
func firstSplit(paths []string) (string, bool) {
	if len(paths) == 0 {
		return "", false
	}
	prefix, _, count, ok := gguf.SplitOf(paths[0])
	if !ok || count < len(paths) || count < 2 {
		return "", false
	}
	for _, p := range paths {
		if q, _, c, ok := gguf.SplitOf(p); !ok || q != prefix || c != count {
			return "", false
		}
	}
	return gguf.SplitPath(prefix, 0, count), true
}

// ErrNotCheckpoint is matched by the error of Open for a file that is not a
// checkpoint (a NumPy array, a zip archive, a PyTorch pickle, a JSON file
// that is no index, a directory that holds none): a *safetensors.FormatError
// (the error type of every reader of the module) that says what the file
// is, of Format "load", or the error of the reader of the format the file
// seemed to have. It is the same value as safetensors.ErrNotFormat and
// gguf.ErrNotFormat.
var ErrNotCheckpoint = fileerr.ErrNotFormat

// notCheckpoint is the error of a file or directory at path that is not a
// checkpoint, for the reason given.
func notCheckpoint(path, reason string) error {
	return &fileerr.FormatError{Format: "load", Path: path, Offset: -1, Kind: fileerr.NotFormat,
		Reason: "not a checkpoint: " + reason}
}

// sniff tells a GGUF file from the others by its magic bytes (or its name),
// and refuses the files people mistake for checkpoints with a message that
// says what they are.
func sniff(path string) (string, error) {
	if strings.HasSuffix(path, ".json") {
		return "index", nil
	}
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var head [9]byte
	n, _ := io.ReadFull(f, head[:])
	b, size := head[:n], fi.Size()
	kind := filetype.Head(b, size)
	switch kind {
	case filetype.GGUF:
		return "gguf", nil
	case filetype.NPY:
		return "", notCheckpoint(path, "it is a NumPy .npy array")
	case filetype.Zip:
		return "", notCheckpoint(path, "it is a zip archive (a .npz, or a PyTorch .pt/.bin); Open reads safetensors and GGUF checkpoints")
	case filetype.Pickle:
		return "", notCheckpoint(path, "it looks like a Python pickle (PyTorch .bin/.pt); save it as safetensors first")
	}
	switch {
	case strings.HasSuffix(path, ".gguf"):
		return "gguf", nil // for its reader to report the magic it lacks
	case kind != filetype.Safetensors && !filetype.HeaderFits(b, size):
		// A safetensors file cut short (kind Safetensors, a length
		// that does not fit) is opened, for its reader to report.
		return "", notCheckpoint(path, "neither a safetensors file (its first 8 bytes are no header length that fits the file) nor a GGUF file")
	}
	return "safetensors", nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func (c *Checkpoint) openFile(path string) error {
	f, err := safetensors.Open(path)
	if err != nil {
		return err
	}
	c.st, c.stored, c.meta, c.size = f, f.Tensors(), f.Metadata(), f.Size()
	c.files = append(c.files, path)
	return nil
}

func (c *Checkpoint) openIndex(path string) error {
	s, err := safetensors.OpenIndex(path)
	if err != nil {
		return err
	}
	c.sh, c.stored, c.meta = s, s.Tensors(), map[string]string{}
	c.files = append(c.files, path)
	for _, name := range s.Shards() {
		f := s.File(name)
		maps.Copy(c.meta, f.Metadata()) // every shard's, merged
		c.size += f.Size()
		c.files = append(c.files, f.Name())
	}
	return nil
}

func (c *Checkpoint) openGGUF(path string) error {
	f, err := gguf.OpenModel(path)
	if err != nil {
		return err
	}
	c.gf, c.meta = f, map[string]string{}
	for _, kv := range f.KV {
		if v, ok := kv.Value.Str(); ok {
			c.meta[kv.Key] = v
		}
	}
	for _, p := range f.Splits() {
		c.files = append(c.files, p)
		if st, err := os.Stat(p); err == nil {
			c.size += st.Size()
		}
	}
	for _, t := range f.Tensors {
		// Block types have no safetensors dtype: they are described as U8
		// bytes here and read through Float32 or Tensor.
		d := layout.SafetensorsDType(t.Type)
		c.stored = append(c.stored, safetensors.TensorInfo{Name: t.Name, DType: d, Shape: t.Shape(), Offset: t.Offset, Size: t.Size})
	}
	return nil
}

// Close releases the files.
func (c *Checkpoint) Close() error {
	switch {
	case c.st != nil:
		return c.st.Close()
	case c.gf != nil:
		return c.gf.Close()
	case c.sh != nil:
		return c.sh.Close()
	}
	return nil
}

// Path returns the path given to Open.
func (c *Checkpoint) Path() string { return c.path }

// File returns the file opened: the .safetensors, index or .gguf file.
func (c *Checkpoint) File() string { return c.file }

// Files returns every file the checkpoint was read from: weights, index and
// config files.
func (c *Checkpoint) Files() []string { return slices.Clone(c.files) }

// Size returns the bytes of the weight files, headers included.
func (c *Checkpoint) Size() int64 { return c.size }

// Layout returns the name of the detected layout, or Plain.
func (c *Checkpoint) Layout() string {
	if c.lay == nil {
		return Plain
	}
	return c.lay.Name()
}

// Metadata returns the safetensors __metadata__ (merged over the shards), or
// the GGUF file's string key/values.
func (c *Checkpoint) Metadata() map[string]string { return maps.Clone(c.meta) }

// Config returns the config.json beside the weights, nil when there is none.
func (c *Checkpoint) Config() []byte { return c.config }

// Dir returns the directory that holds the checkpoint's config.json and its
// other configuration files (tokenizer.json, ...), whether they exist or
// not.
func (c *Checkpoint) Dir() string { return c.dir }

// GGUF returns the GGUF file of a .gguf checkpoint, nil otherwise.
func (c *Checkpoint) GGUF() *gguf.File { return c.gf }

// Shards returns the shard file names of a sharded checkpoint, nil otherwise.
func (c *Checkpoint) Shards() []string {
	if c.sh == nil {
		return nil
	}
	return c.sh.Shards()
}

// Stored returns the stored tensors in file order, as the files hold them
// (GGUF block types have DType 0).
func (c *Checkpoint) Stored() []safetensors.TensorInfo { return slices.Clone(c.stored) }

// StoredType returns how stored tensor name is held: its safetensors dtype or
// ggml type name, and its shard ("" when not sharded).
func (c *Checkpoint) StoredType(name string) (typ, shard string) {
	if c.gf != nil {
		if t, ok := c.gf.Tensor(name); ok {
			return t.Type.String(), ""
		}
	}
	if i, ok := c.sindex[name]; ok {
		typ = c.stored[i].DType.String()
	}
	if c.sh != nil {
		shard, _ = c.sh.Shard(name)
	}
	return typ, shard
}

// Tensors returns the logical tensors in file order (of their first stored
// tensor).
func (c *Checkpoint) Tensors() []Info {
	out := slices.Clone(c.tensors)
	for i := range out {
		out[i].Shape = slices.Clone(out[i].Shape)
		out[i].Stored = slices.Clone(out[i].Stored)
	}
	return out
}

// Info returns the description of logical tensor name.
func (c *Checkpoint) Info(name string) (Info, error) {
	i, ok := c.index[name]
	if !ok {
		return Info{}, c.notFound(name)
	}
	return c.tensors[i], nil
}

func (c *Checkpoint) notFound(name string) error {
	all := make([]string, len(c.tensors))
	for i, t := range c.tensors {
		all[i] = t.Name
	}
	return &NotFoundError{Path: c.path, Name: name, Closest: names.Closest(name, all, 3)}
}

// Tensor returns quantized weight name as a cast tensor (in the orientation it
// is stored in; see Info.Transposed; a weight rotated before its cast,
// Info.Rotation, as the cast of the rotated values, which Float32 rotates
// back), and plain float tensors as a tensor of
// their own unscaled datatype (float32, float16, bfloat16) whose data part is
// a view of the file's bytes. Other tensors give an error matching
// ErrNotQuantized.
func (c *Checkpoint) Tensor(name string) (*tcast.Tensor, error) {
	info, err := c.Info(name)
	if err != nil {
		return nil, err
	}
	if err := c.broken[name]; err != nil {
		return nil, fmt.Errorf("%s: %w", c.file, err)
	}
	if info.DataType != nil {
		t, ok, err := c.lay.Decode(name, source{c})
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %w", c.path, err)
		case !ok:
			return nil, fmt.Errorf("%s: %w", c.path, notOfLayout(c.lay, name))
		}
		return t, nil
	}
	dt, ok := plainDataTypes[info.DType]
	if !ok {
		return nil, fmt.Errorf("%s: tensor %s (%s): %w", c.path, name, info.Type, ErrNotQuantized)
	}
	b, err := c.storedBytes(name)
	if err != nil {
		return nil, err
	}
	d := tcast.MustLookup(dt)
	return &tcast.Tensor{DataType: d, Form: tcast.Actual, Shape: slices.Clone(info.Shape), Axis: max(len(info.Shape)-1, 0),
		Data: &tcast.Part{Format: d.Elem(), Bits: d.Elem().Bits(), Shape: slices.Clone(info.Shape), Bytes: b}}, nil
}

// plainDataTypes are the unscaled datatypes of the float dtypes Tensor views.
var plainDataTypes = map[safetensors.DType]string{
	safetensors.F32: "float32", safetensors.F16: "float16", safetensors.BF16: "bfloat16",
}

// Float32 returns the values of logical tensor name as float32, dequantized
// exactly, in the module's orientation, and its shape. A weight rotated
// before its cast (Info.Rotation) is rotated back: its values are then the
// dequantized ones times the rotation, each rounded once to float32 (see
// rotate.Rotation.Apply).
func (c *Checkpoint) Float32(name string) ([]float32, []int, error) {
	info, err := c.Info(name)
	if err != nil {
		return nil, nil, err
	}
	if info.DataType != nil || c.broken[name] != nil {
		t, err := c.Tensor(name)
		if err != nil {
			return nil, nil, err
		}
		v, err := tcast.Decompress(t)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: weight %s: %w", c.path, name, err)
		}
		if r, ok := c.rotated[name]; ok {
			if err := r.Rotation.Apply(v, t.Shape, r.Axis); err != nil {
				return nil, nil, fmt.Errorf("%s: weight %s: undoing %s %s: %w", c.path, name, layout.KeyRotated, r.Rotation, err)
			}
		}
		if info.Transposed {
			v, _ = layout.TransposeLast2(v, t.Shape)
		}
		return v, slices.Clone(info.Shape), nil
	}
	var v []float32
	switch {
	case c.gf != nil:
		v, err = c.gf.Float32s(name)
	case c.st != nil:
		v, err = c.st.Float32s(name)
	default:
		v, err = c.sh.Float32s(name)
	}
	if err != nil {
		return nil, nil, err
	}
	return v, slices.Clone(info.Shape), nil
}

// Bytes returns the stored bytes of a logical tensor that is not quantized
// (Info.DType is set): a view of the mapped file where possible, which must
// not be modified.
func (c *Checkpoint) Bytes(name string) ([]byte, error) {
	info, err := c.Info(name)
	if err != nil {
		return nil, err
	}
	if info.DType == 0 {
		return nil, fmt.Errorf("%s: tensor %s is stored as %s; read it with Float32", c.path, name, info.Type)
	}
	return c.storedBytes(name)
}

// StoredBytes returns the bytes of a stored tensor (see Stored).
func (c *Checkpoint) StoredBytes(name string) ([]byte, error) { return c.storedBytes(name) }

// StoredRange returns n bytes of a stored tensor from byte off, so that a
// large tensor can be taken a piece at a time: a view of the mapped file
// where possible, which must not be modified, else a copy of just those
// bytes.
func (c *Checkpoint) StoredRange(name string, off, n int64) ([]byte, error) {
	if c.gf != nil {
		return c.gf.TensorRange(name, off, n)
	}
	b, err := c.storedBytes(name)
	if err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || off > int64(len(b)) || n > int64(len(b))-off {
		return nil, fmt.Errorf("%s: tensor %s: bytes [%d, %d+%d) outside its %d", c.path, name, off, off, n, len(b))
	}
	return b[off : off+n], nil
}

func (c *Checkpoint) storedBytes(name string) ([]byte, error) {
	switch {
	case c.gf != nil:
		return c.gf.TensorData(name)
	case c.st != nil:
		return c.st.Bytes(name)
	}
	return c.sh.Bytes(name)
}

// Release drops the mapped pages of logical tensor name from resident memory
// (they stay in the page cache), once a caller is done with them.
func (c *Checkpoint) Release(name string) {
	i, ok := c.index[name]
	if !ok {
		return
	}
	for _, s := range c.tensors[i].Stored {
		switch {
		case c.gf != nil:
			c.gf.ReleaseRange(s, 0, math.MaxInt64)
		case c.st != nil:
			c.st.Release(s)
		case c.sh != nil:
			c.sh.Release(s)
		}
	}
}

// ReleaseRange is Release for n bytes from byte off of the stored bytes of
// a tensor that is not quantized (those Bytes returns), for streaming
// readers done with one piece of a large tensor.
func (c *Checkpoint) ReleaseRange(name string, off, n int64) {
	i, ok := c.index[name]
	if !ok || len(c.tensors[i].Stored) != 1 {
		return
	}
	s := c.tensors[i].Stored[0]
	switch {
	case c.gf != nil:
		c.gf.ReleaseRange(s, off, n)
	case c.st != nil:
		c.st.ReleaseRange(s, off, n)
	case c.sh != nil:
		c.sh.ReleaseRange(s, off, n)
	}
}

// source is the layout.Source view of a checkpoint.
type source struct{ c *Checkpoint }

func (s source) Tensor(name string) (safetensors.TensorInfo, []byte, bool) {
	i, ok := s.c.sindex[name]
	if !ok {
		return safetensors.TensorInfo{}, nil, false
	}
	b, err := s.c.storedBytes(name)
	if err != nil {
		return safetensors.TensorInfo{}, nil, false
	}
	return s.c.stored[i], b, true
}

func (s source) Metadata() map[string]string { return s.c.meta }

// Config gives layouts the checkpoint's config.json (see layout.Source).
func (s source) Config() []byte { return s.c.config }

func (s source) Names() []string {
	out := make([]string, len(s.c.stored))
	for i, t := range s.c.stored {
		out[i] = t.Name
	}
	return out
}

// GGUFInfo gives GGUF layouts the description of a stored tensor.
func (s source) GGUFInfo(name string) (gguf.TensorInfo, bool) {
	if s.c.gf == nil {
		return gguf.TensorInfo{}, false
	}
	return s.c.gf.Tensor(name)
}

// GGUFTensor gives GGUF layouts a stored tensor's description and bytes.
func (s source) GGUFTensor(name string) (gguf.TensorInfo, []byte, bool) {
	if s.c.gf == nil {
		return gguf.TensorInfo{}, nil, false
	}
	t, ok := s.c.gf.Tensor(name)
	if !ok {
		return gguf.TensorInfo{}, nil, false
	}
	b, err := s.c.gf.TensorData(name)
	if err != nil {
		return gguf.TensorInfo{}, nil, false
	}
	return t, b, true
}

// detect finds the layout and groups the stored tensors into logical ones.
func (c *Checkpoint) detect() error {
	var weights map[string][]string
	var swapped map[string]bool
	if c.gf == nil {
		if err := layout.CheckFormatVersion(c.meta); err != nil {
			return fmt.Errorf("%s: %w", c.file, err)
		}
	}
	switch {
	case c.gf != nil:
		if l, err := layout.Get("gguf"); err == nil {
			c.lay, weights = l, l.Find(source{c})
		}
	case c.meta[layout.KeyLayout] != "":
		l, err := layout.Get(c.meta[layout.KeyLayout])
		if err != nil {
			return fmt.Errorf("%s: __metadata__ %s: %w", c.file, layout.KeyLayout, err)
		}
		c.lay = l
		if err := json.Unmarshal([]byte(c.meta[layout.KeyWeights]), &weights); err != nil {
			return fmt.Errorf("%s: __metadata__ %s: %w", c.file, layout.KeyWeights, err)
		}
		if js, ok := c.meta[layout.KeyTransposed]; ok {
			var list []string
			if err := json.Unmarshal([]byte(js), &list); err != nil {
				return fmt.Errorf("%s: __metadata__ %s: %w", c.file, layout.KeyTransposed, err)
			}
			swapped = map[string]bool{}
			for _, n := range list {
				swapped[n] = true
			}
		}
		rot, err := layout.ReadRotated(c.meta)
		if err != nil {
			return fmt.Errorf("%s: %w", c.file, err)
		}
		if len(rot) > 0 && !layout.RecordsRotation(l) {
			return fmt.Errorf("%s: __metadata__ %s: the %s layout records no rotation", c.file, layout.KeyRotated, l.Name())
		}
		c.rotated = rot
	default:
		c.lay, weights = c.foreign()
	}
	return c.group(weights, swapped)
}

// quantMethods maps config.json's quantization_config.quant_method to the
// layout that reads it.
var quantMethods = map[string]string{
	"compressed-tensors": "compressed-tensors",
	"mxfp4":              "gpt-oss",
	"modelopt":           "modelopt",
	"fp8":                "fp8-block",
}

// foreign detects the layout of a checkpoint without our metadata.
func (c *Checkpoint) foreign() (layout.Layout, map[string][]string) {
	var cfg struct {
		Q struct {
			Method string `json:"quant_method"`
		} `json:"quantization_config"`
	}
	order := []string{"tcast", "compressed-tensors", "modelopt", "gpt-oss", "fp8-block"}
	if c.config != nil && json.Unmarshal(c.config, &cfg) == nil {
		if n, ok := quantMethods[cfg.Q.Method]; ok {
			order = append([]string{n}, order...)
		}
	}
	for _, n := range order {
		l, err := layout.Get(n)
		if err != nil {
			continue // a layout this build does not have
		}
		if w := l.Find(source{c}); len(w) > 0 {
			return l, w
		}
	}
	return nil, nil
}

// group builds the logical tensors: each weight of the layout under its name,
// every other stored tensor under its own.
func (c *Checkpoint) group(weights map[string][]string, swapped map[string]bool) error {
	partOf := map[string]string{}
	c.broken = map[string]error{}
	for w, parts := range weights {
		for _, p := range parts {
			if _, ok := c.sindex[p]; !ok {
				c.broken[w] = &layout.FormatError{Layout: c.lay.Name(), Weight: w, Msg: fmt.Sprintf("stored tensor %q is missing", p)}
				continue
			}
			partOf[p] = w
		}
	}
	c.index = map[string]int{}
	tr, _ := c.lay.(layout.Transposer)
	for _, st := range c.stored {
		name, isWeight := partOf[st.Name]
		if !isWeight {
			name = st.Name
		}
		if i, done := c.index[name]; done {
			c.tensors[i].Size += st.Size
			continue
		}
		info := Info{Name: name, Shape: slices.Clone(st.Shape), DType: st.DType, Type: st.DType.String(), Size: st.Size, Stored: []string{st.Name}}
		switch {
		case isWeight:
			info.DType, info.Float = 0, true
			info.Stored = slices.Clone(weights[name])
			dt, shape, err := c.describe(name)
			if c.broken[name] != nil {
				err = c.broken[name]
			}
			if err != nil {
				// Reported when the weight is read; its header is listed.
				c.broken[name] = err
				info.Type = "invalid " + c.lay.Name() + " weight"
				break
			}
			info.DataType, info.Type, info.Shape = dt, dt.Name(), shape
			if swapped != nil {
				info.Transposed = swapped[name]
			} else if tr != nil {
				info.Transposed = tr.Transposed(name, len(shape))
			}
			if info.Transposed && len(shape) < 2 {
				c.broken[name] = &layout.FormatError{Layout: c.lay.Name(), Weight: name,
					Msg: fmt.Sprintf("listed as transposed, but its shape %v has fewer than 2 axes", shape)}
				info.DataType, info.Transposed = nil, false
			}
			if info.Transposed {
				info.Shape = layout.SwapLast2(info.Shape)
			}
			if r, ok := c.rotated[name]; ok {
				info.Rotation = r.Rotation.String()
			}
		case c.gf != nil:
			gt, _ := c.gf.Tensor(st.Name)
			info.Type = gt.Type.String()
			info.Float = gguf.CanFloat32(gt.Type) && (st.DType == 0 || st.DType.Float())
		default:
			info.Float = st.DType.Float()
		}
		c.index[name] = len(c.tensors)
		c.tensors = append(c.tensors, info)
	}
	return nil
}

// notOfLayout is the error for weight name, which the layout lists (by its
// metadata or its tensors' names) but whose stored tensors it does not
// decode: a dtype, rank or shape the layout does not use.
func notOfLayout(l layout.Layout, name string) error {
	return &layout.FormatError{Layout: l.Name(), Weight: name,
		Msg: "its stored tensors are not a weight of the layout (a dtype, rank or shape it does not use); the checkpoint is damaged or was edited"}
}

// describe returns the datatype and stored shape of weight name: from the
// layout's description when it has one (no tensor is read), else decoded.
func (c *Checkpoint) describe(name string) (*tcast.DataType, []int, error) {
	if d, ok := c.lay.(layout.Describer); ok {
		dt, shape, err := d.Describe(name, source{c})
		if err != nil {
			return nil, nil, err
		}
		return dt, shape, nil
	}
	t, ok, err := c.lay.Decode(name, source{c})
	if err == nil && !ok {
		err = notOfLayout(c.lay, name)
	}
	if err != nil {
		return nil, nil, err
	}
	return t.DataType, t.Shape, nil
}
