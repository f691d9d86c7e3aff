package safetensors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
)

// IndexFileName is the name of the index of a sharded checkpoint.
const IndexFileName = "model.safetensors.index.json"

// maxIndexSize bounds the size of an index file accepted by OpenIndex.
const maxIndexSize = 1 << 30

// Sharded is a checkpoint split over several safetensors files, opened
// through its index: a unified view of the tensors of all shards.
//
// A Sharded is safe for concurrent use by multiple goroutines, except that
// Close must not run concurrently with other methods.
type Sharded struct {
	path      string
	totalSize int64
	shards    []string         // shard names as in the index, sorted
	files     map[string]*File // by shard name
	where     map[string]string
}

// OpenIndex opens the sharded checkpoint whose index file (usually
// model.safetensors.index.json) is at path. The index is a JSON object
// {"metadata": {"total_size": N, ...}, "weight_map": {tensor: file, ...}};
// shard files are resolved relative to the index's directory and must lie
// inside it, also once symbolic links are resolved. Every shard is opened with Open.
//
// It is an error if a key repeats in the index, if a shard file is missing
// or invalid, if a tensor of the weight map is absent from its shard, or if
// a shard holds a tensor that the weight map does not assign to it
// (including a tensor present in two shards). Errors name the index or the
// shard file concerned.
func OpenIndex(path string) (*Sharded, error) {
	weightMap, total, err := readIndex(path)
	if err != nil {
		return nil, err
	}
	s := &Sharded{
		path:      path,
		totalSize: total,
		files:     make(map[string]*File),
		where:     weightMap,
	}
	s.shards = slices.Sorted(maps.Keys(invert(weightMap)))
	for _, check := range []func() error{s.openShards, s.checkShardTensors, s.checkWeightMap} {
		if err := check(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// openShards opens every shard of the index with Open, until one fails.
func (s *Sharded) openShards() error {
	dir := filepath.Dir(s.path)
	for _, shard := range s.shards {
		f, err := s.openShard(dir, shard)
		if err != nil {
			return err
		}
		s.files[shard] = f
	}
	return nil
}

// openShard opens the shard the index names shard, in the index's
// directory dir, which it must not leave.
func (s *Sharded) openShard(dir, shard string) (*File, error) {
	path := s.path
	if strings.ContainsRune(shard, 0) {
		return nil, &FormatError{Format: formatName, Path: path, Offset: -1,
			Reason: fmt.Sprintf("the index names an invalid file name, %q, as a shard", clip(shard))}
	}
	sp := filepath.Join(dir, filepath.FromSlash(shard))
	if err := checkInside(path, dir, sp); err != nil {
		return nil, err
	}
	f, err := Open(sp)
	if errors.Is(err, fs.ErrNotExist) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe // without Open's "safetensors: " prefix
		}
		return nil, &FormatError{Format: formatName, Path: path, Offset: -1, Kind: fileerr.MissingFile,
			Reason: fmt.Sprintf("shard %s is missing", strconv.Quote(clip(shard))), Err: err}
	}
	var fe *FormatError
	if errors.As(err, &fe) && fe.Path == sp && fe.Index == "" {
		fe.Index = path // a fresh error of Open, naming the shard file
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: shard %s: %w", path, strconv.Quote(shard), err)
	}
	return f, nil
}

// checkShardTensors checks that the weight map assigns every tensor of
// every shard to that shard.
func (s *Sharded) checkShardTensors() error {
	for _, shard := range s.shards {
		f := s.files[shard]
		for _, t := range f.tensors {
			want, ok := s.where[t.Name]
			switch {
			case !ok:
				return &FormatError{Format: formatName, Path: f.path, Tensor: t.Name, Offset: t.Offset,
					Reason: "tensor is not in the weight map of " + s.path}
			case want != shard:
				reason := fmt.Sprintf("tensor is in this shard, but the weight map of %s assigns it to %s",
					s.path, strconv.Quote(want))
				if _, dup := s.files[want].index[t.Name]; dup {
					reason = fmt.Sprintf("tensor is also in shard %s, to which the weight map of %s assigns it",
						strconv.Quote(want), s.path)
				}
				return &FormatError{Format: formatName, Path: f.path, Tensor: t.Name, Offset: t.Offset, Reason: reason}
			}
		}
	}
	return nil
}

// checkWeightMap checks that every tensor of the weight map is in its
// shard.
func (s *Sharded) checkWeightMap() error {
	for _, name := range slices.Sorted(maps.Keys(s.where)) {
		f := s.files[s.where[name]]
		if _, ok := f.index[name]; !ok {
			return &FormatError{Format: formatName, Path: f.path, Tensor: name, Offset: -1,
				Reason: "tensor listed in the weight map of " + s.path + " is absent from the shard"}
		}
	}
	return nil
}

// checkInside refuses shard file sp of the index at path when, its symbolic
// links resolved, it lies outside the index's directory dir (resolved too):
// a link must not take the reader to a file the index could not name. A
// shard inside the directory the index file itself resolves to is accepted
// too: the Hugging Face hub cache links every file of a snapshot
// (snapshots/REV/NAME) to one blobs directory, index and shards alike.
// A shard that does not exist is left to Open to report.
func checkInside(path, dir, sp string) error {
	real, err := resolved(sp)
	if err != nil {
		return nil
	}
	realDir, err := resolved(dir)
	if err != nil {
		return nil
	}
	inside := func(d string) bool {
		rel, err := filepath.Rel(d, real)
		return err == nil && filepath.IsLocal(rel)
	}
	if inside(realDir) {
		return nil
	}
	if idx, err := resolved(path); err == nil && inside(filepath.Dir(idx)) {
		return nil
	}
	return &FormatError{Format: formatName, Path: sp, Offset: -1, Kind: fileerr.LinkOutside,
		Reason: fmt.Sprintf("shard named by %s is a symbolic link to %s, outside the index directory %s",
			path, strconv.Quote(clip(real)), realDir)}
}

// resolved returns p with its symbolic links resolved, made absolute.
func resolved(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if abs, err := filepath.Abs(r); err == nil {
		r = abs
	}
	return r, nil
}

// invert returns the set of values of m.
func invert(m map[string]string) map[string]struct{} {
	out := make(map[string]struct{})
	for _, v := range m {
		out[v] = struct{}{}
	}
	return out
}

// readIndex reads and checks the index file at path, returning its weight
// map and metadata.total_size (-1 if absent).
func readIndex(path string) (map[string]string, int64, error) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIndexSize+1))
	if err != nil {
		return nil, 0, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	if len(b) > maxIndexSize {
		return nil, 0, &FormatError{Format: formatName, Path: path, Offset: maxIndexSize, Kind: fileerr.TooLarge,
			Reason: fmt.Sprintf("index file exceeds %d bytes", maxIndexSize)}
	}
	weightMap, total, err := parseIndex(b)
	if err != nil {
		if fe, ok := err.(*FormatError); ok {
			fe.Path = path
		}
		return nil, 0, err
	}
	return weightMap, total, nil
}

// indexParser walks an index file's JSON token by token to detect duplicate
// keys. Offsets are relative to the start of the index file.
type indexParser struct {
	dec       *json.Decoder
	weightMap map[string]string // the weight_map, nil until it is met
	total     int64             // metadata.total_size, -1 until it is met
}

func (p *indexParser) fail(reason string, args ...any) *FormatError {
	return &FormatError{Format: formatName, Offset: p.dec.InputOffset(), Reason: fmt.Sprintf(reason, args...)}
}

// token returns the next JSON token. The JSON ending early is a
// truncated index.
func (p *indexParser) token() (json.Token, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.malformed(err)
	}
	return tok, nil
}

// malformed is the error of a JSON decoding failure.
func (p *indexParser) malformed(err error) *FormatError {
	off := p.dec.InputOffset()
	if se, ok := err.(*json.SyntaxError); ok {
		off = se.Offset
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fileerr.New(formatName, off, err, "malformed index JSON")
}

// object walks a JSON object, calling value for each key after checking
// that no key repeats; value must consume the key's value.
func (p *indexParser) object(what string, value func(key string) error) error {
	tok, err := p.token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return p.fail("%s is %s, not an object", what, describe(tok))
	}
	seen := make(map[string]struct{})
	for p.dec.More() {
		tok, err := p.token()
		if err != nil {
			return err
		}
		k := tok.(string)
		if _, dup := seen[k]; dup {
			return p.fail("duplicate key %s in %s", strconv.Quote(clip(k)), what)
		}
		seen[k] = struct{}{}
		if err := value(k); err != nil {
			return err
		}
	}
	_, err = p.token()
	return err
}

// skip consumes one JSON value.
func (p *indexParser) skip() error {
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		return p.malformed(err)
	}
	return nil
}

// parseIndex parses the JSON of an index file.
func parseIndex(b []byte) (map[string]string, int64, error) {
	// encoding/json would replace invalid UTF-8 with U+FFFD: a tensor or
	// shard name would then silently not be the one in the file.
	if !utf8.Valid(b) {
		return nil, 0, &FormatError{Format: formatName, Offset: int64(invalidUTF8(b)),
			Reason: "index is not valid UTF-8"}
	}
	p := &indexParser{dec: json.NewDecoder(bytes.NewReader(b)), total: -1}
	p.dec.UseNumber()
	err := p.object("index", p.indexEntry)
	if fe, ok := err.(*FormatError); ok && fe.Kind == fileerr.Invalid && !startsObject(b) {
		fe.Kind = fileerr.NotFormat // no JSON object at all
	}
	if err != nil {
		return nil, 0, err
	}
	if tok, err := p.dec.Token(); err != io.EOF {
		reason := "unexpected data after the index JSON object"
		if err == nil {
			reason += " (" + describe(tok) + ")"
		}
		return nil, 0, p.fail("%s", reason)
	}
	if p.weightMap == nil {
		// A JSON object without one is another file: a config.json, a
		// tokenizer.json.
		return nil, 0, &FormatError{Format: formatName, Offset: -1, Kind: fileerr.NotFormat, Reason: "index has no weight_map"}
	}
	return p.weightMap, p.total, nil
}

// indexEntry parses the value of key of the index object: the metadata,
// the weight_map, or a value it skips.
func (p *indexParser) indexEntry(key string) error {
	switch key {
	case "metadata":
		return p.object("metadata", p.metadataEntry)
	case "weight_map":
		p.weightMap = make(map[string]string)
		return p.object("weight_map", p.weightMapEntry)
	}
	return p.skip()
}

// metadataEntry parses the value of key of the index's metadata: the
// total_size, or a value it skips.
func (p *indexParser) metadataEntry(key string) error {
	if key != "total_size" {
		return p.skip()
	}
	tok, err := p.token()
	if err != nil {
		return err
	}
	n, ok := tok.(json.Number)
	if !ok {
		return p.fail("total_size is %s, not a number", describe(tok))
	}
	if v, err := strconv.ParseInt(string(n), 10, 64); err == nil && v >= 0 {
		p.total = v
	} else if f, err := n.Float64(); err == nil && f >= 0 && f < 1<<63 && f == float64(int64(f)) {
		p.total = int64(f) // some writers store it as a float such as 1.2e9
	} else {
		return p.fail("total_size %s is not a non-negative integer", clip(string(n)))
	}
	return nil
}

// weightMapEntry parses the file of tensor name in the weight_map: a name
// inside the index directory.
func (p *indexParser) weightMapEntry(name string) error {
	if len(p.weightMap) == MaxTensors {
		e := p.fail("weight_map names more than %d tensors, the limit: the index is damaged or hostile", MaxTensors)
		e.Kind = fileerr.TooLarge
		return e
	}
	tok, err := p.token()
	if err != nil {
		return err
	}
	file, ok := tok.(string)
	if !ok {
		return p.fail("weight_map entry for tensor %s is %s, not a file name",
			strconv.Quote(clip(name)), describe(tok))
	}
	if file == "" || !filepath.IsLocal(filepath.FromSlash(file)) {
		return p.fail("weight_map entry for tensor %s names file %s outside the index directory",
			strconv.Quote(clip(name)), strconv.Quote(clip(file)))
	}
	p.weightMap[name] = file
	return nil
}

// startsObject reports whether b's first byte after white space opens a
// JSON object.
func startsObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// Close closes every shard. It returns the first error.
func (s *Sharded) Close() error {
	var first error
	for _, shard := range s.shards {
		if f := s.files[shard]; f != nil {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// TotalSize returns metadata.total_size from the index, or -1 if the index
// has none. It is informational and is not checked against the shards.
func (s *Sharded) TotalSize() int64 { return s.totalSize }

// Shards returns the shard file names as written in the index (relative to
// its directory), sorted.
func (s *Sharded) Shards() []string { return slices.Clone(s.shards) }

// Shard returns the name of the shard holding the named tensor, as written
// in the index, and whether the tensor exists.
func (s *Sharded) Shard(name string) (string, bool) {
	shard, ok := s.where[name]
	return shard, ok
}

// File returns the open shard of the given name (as returned by Shards), or
// nil if there is none. It is closed by Close.
func (s *Sharded) File(shard string) *File { return s.files[shard] }

// Metadata returns a copy of the __metadata__ of the first shard, or nil if
// it has none.
func (s *Sharded) Metadata() map[string]string {
	if len(s.shards) == 0 {
		return nil
	}
	return s.files[s.shards[0]].Metadata()
}

// Tensors returns descriptions of every tensor of every shard, shard by
// shard in the order of Shards, and in offset order within a shard. Each
// Offset is relative to the start of its shard file.
func (s *Sharded) Tensors() []TensorInfo {
	var out []TensorInfo
	for _, shard := range s.shards {
		out = append(out, s.files[shard].Tensors()...)
	}
	return out
}

// Tensor returns the description of the named tensor and whether it
// exists; its Offset is relative to the start of its shard (see Shard).
func (s *Sharded) Tensor(name string) (TensorInfo, bool) {
	shard, ok := s.where[name]
	if !ok {
		return TensorInfo{}, false
	}
	return s.files[shard].Tensor(name)
}

// Bytes returns the raw bytes of the named tensor, as File.Bytes does.
func (s *Sharded) Bytes(name string) ([]byte, error) {
	shard, ok := s.where[name]
	if !ok {
		return nil, fmt.Errorf("safetensors: %s: tensor %s: %w", s.path, strconv.Quote(clip(name)), ErrNotFound)
	}
	return s.files[shard].Bytes(name)
}

// Float32s returns the elements of the named tensor converted to float32,
// as File.Float32s does.
func (s *Sharded) Float32s(name string) ([]float32, error) {
	shard, ok := s.where[name]
	if !ok {
		return nil, fmt.Errorf("safetensors: %s: tensor %s: %w", s.path, strconv.Quote(clip(name)), ErrNotFound)
	}
	return s.files[shard].Float32s(name)
}

// ShardName returns the file name of shard i (1-based) of n in the Hugging
// Face convention: "model-00001-of-00003.safetensors".
func ShardName(i, n int) string {
	return fmt.Sprintf("model-%05d-of-%05d.safetensors", i, n)
}

// WriteSharded writes tensors as a sharded checkpoint in dir: shard files
// named by ShardName plus the index IndexFileName, always, even for a
// single shard; see CreateSharded for the rules. If writing fails, the files
// already written by this call are removed.
func WriteSharded(dir string, maxShardBytes int64, tensors []Tensor, metadata map[string]string) error {
	specs := make([]TensorSpec, len(tensors))
	for i, t := range tensors {
		specs[i] = t.Spec()
		if want := specBytes(specs[i]); want != int64(len(t.Data)) {
			return fmt.Errorf("safetensors: tensor %s: %d bytes of data for %v %v, which takes %d",
				strconv.Quote(clip(t.Name)), len(t.Data), t.DType, t.Shape, want)
		}
	}
	w, err := CreateSharded(dir, specs, metadata, maxShardBytes)
	if err != nil {
		return err
	}
	for _, t := range tensors {
		if err := w.Write(t.Name, t.Data); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// ShardedWriter streams a sharded checkpoint: the shards' headers are
// written first, then tensor data in any order (see Writer), then Close
// publishes every shard and the index. It is the one sharded writer of the
// module; WriteSharded is built on it.
type ShardedWriter struct {
	dir     string
	writers []*Writer
	paths   []string
	shardOf map[string]int
	total   int64
	done    int  // shards published
	closed  bool // Close succeeded
}

// specBytes is the data size of a declared tensor.
func specBytes(s TensorSpec) int64 {
	n := int64(1)
	for _, d := range s.Shape {
		n *= int64(d)
	}
	return n * int64(s.DType.BitSize()) / 8
}

// CreateSharded starts writing the declared tensors as shards of at most
// maxShardBytes of tensor data in dir. Tensors are assigned to shards
// greedily in the order given: a shard is closed when the next tensor's data
// would take it past maxShardBytes, and a tensor larger than maxShardBytes
// gets a shard of its own. Each shard carries metadata (which may be nil) as
// its __metadata__, so that any shard describes the checkpoint, and uses the
// layout of Create. The index holds total_size, the sum of the tensors' data
// sizes, and the weight map, as JSON indented by two spaces with sorted keys.
func CreateSharded(dir string, specs []TensorSpec, metadata map[string]string, maxShardBytes int64) (*ShardedWriter, error) {
	if maxShardBytes <= 0 {
		return nil, fmt.Errorf("safetensors: maximum shard size %d is not positive", maxShardBytes)
	}
	w := &ShardedWriter{dir: dir, shardOf: make(map[string]int, len(specs))}
	var groups [][]TensorSpec
	var cur []TensorSpec
	var size int64
	for _, s := range specs {
		if _, dup := w.shardOf[s.Name]; dup {
			return nil, fmt.Errorf("safetensors: tensor %s: duplicate tensor name", strconv.Quote(clip(s.Name)))
		}
		w.shardOf[s.Name] = -1
		b := specBytes(s)
		if len(cur) > 0 && b > maxShardBytes-size {
			groups, cur, size = append(groups, cur), nil, 0
		}
		cur, size = append(cur, s), size+b
		w.total += b
	}
	if len(cur) > 0 || len(groups) == 0 {
		groups = append(groups, cur)
	}
	for i, g := range groups {
		p := filepath.Join(dir, ShardName(i+1, len(groups)))
		sw, err := Create(p, g, metadata)
		if err != nil {
			w.Abort()
			return nil, err
		}
		w.writers, w.paths = append(w.writers, sw), append(w.paths, p)
		for _, s := range g {
			w.shardOf[s.Name] = i
		}
	}
	return w, nil
}

// Write appends data to the named tensor (see Writer.Write).
func (w *ShardedWriter) Write(name string, data []byte) error {
	i, ok := w.shardOf[name]
	if !ok {
		return fmt.Errorf("safetensors: tensor %s: %w", strconv.Quote(clip(name)), ErrNotFound)
	}
	return w.writers[i].Write(name, data)
}

// WriteAt writes data at byte off of the named tensor (see Writer.WriteAt).
func (w *ShardedWriter) WriteAt(name string, data []byte, off int64) error {
	i, ok := w.shardOf[name]
	if !ok {
		return fmt.Errorf("safetensors: tensor %s: %w", strconv.Quote(clip(name)), ErrNotFound)
	}
	return w.writers[i].WriteAt(name, data, off)
}

// PatchMetadata patches every shard's metadata (see Writer.PatchMetadata).
func (w *ShardedWriter) PatchMetadata(p map[string]string) error {
	for _, sw := range w.writers {
		if err := sw.PatchMetadata(p); err != nil {
			return err
		}
	}
	return nil
}

// Paths returns the shard files, in order.
func (w *ShardedWriter) Paths() []string { return slices.Clone(w.paths) }

// Close publishes every shard and then the index. If one fails, the shards
// already published are removed and the rest abandoned.
func (w *ShardedWriter) Close() error {
	for i, sw := range w.writers {
		if err := sw.Close(); err != nil {
			w.Abort()
			return err
		}
		w.done = i + 1
	}
	weightMap := make(map[string]string, len(w.shardOf))
	for name, i := range w.shardOf {
		weightMap[name] = filepath.Base(w.paths[i])
	}
	index := struct {
		Metadata  map[string]int64  `json:"metadata"`
		WeightMap map[string]string `json:"weight_map"`
	}{map[string]int64{"total_size": w.total}, weightMap}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(index)
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(w.dir, IndexFileName), buf.Bytes())
	}
	if err != nil {
		w.Abort()
		return fmt.Errorf("safetensors: writing the index: %w", err)
	}
	w.closed = true
	return nil
}

// Abort abandons the checkpoint: unpublished shards are discarded and
// published ones removed. After a successful Close it does nothing.
func (w *ShardedWriter) Abort() {
	if w.closed {
		return
	}
	for _, sw := range w.writers {
		sw.Abort()
	}
	for _, p := range w.paths[:w.done] {
		os.Remove(p)
	}
	w.done = 0
}
