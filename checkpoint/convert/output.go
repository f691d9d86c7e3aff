package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// sink writes the declared tensors of a conversion: one safetensors file,
// safetensors shards with an index, or one GGUF file. WriteAt writes a
// piece of a tensor at its place, in any order and from any goroutine (the
// layouts fix every tensor's place before data is written); every byte of
// every tensor is written once. PatchMetadata, Close and Abort come after
// every WriteAt has returned.
type sink interface {
	WriteAt(name string, data []byte, off int64) error
	PatchMetadata(map[string]string) error
	Close() error
	Abort()
}

// wrapSink, set by tests, wraps the sink of every conversion (to make
// writes fail).
var wrapSink func(sink) sink

// newSink starts writing specs at path: a file, or (shardSize > 0) shards in
// path's directory; for GGUF, the splits of splitOf (the split of each
// spec; nil for one file) in path's directory.
func newSink(c layout.Container, path string, specs []layout.Spec, meta map[string]string, kv []gguf.KV,
	shardSize int64, splitOf []int) (sink, error) {
	if c == layout.GGUF && splitOf != nil {
		return newSplitSink(path, specs, splitOf, kv, meta)
	}
	if c == layout.GGUF {
		return newGGUFSink(path, specs, kv, meta)
	}
	ss := make([]safetensors.TensorSpec, len(specs))
	for i, s := range specs {
		ss[i] = safetensors.TensorSpec{Name: s.Name, DType: s.DType, Shape: s.Shape}
	}
	if shardSize > 0 {
		w, err := safetensors.CreateSharded(filepath.Dir(path), ss, meta, shardSize)
		if err != nil {
			return nil, err
		}
		return shardSink{w}, nil
	}
	w, err := safetensors.Create(path, ss, meta)
	if err != nil {
		return nil, err
	}
	return fileSink{w}, nil
}

type fileSink struct{ *safetensors.Writer }

func (s fileSink) Abort() { s.Writer.Abort() }

type shardSink struct{ *safetensors.ShardedWriter }

type ggufSink struct{ *gguf.Stream }

func (ggufSink) PatchMetadata(map[string]string) error { return errNoGGUFPatch }

// errNoGGUFPatch is PatchMetadata's error for GGUF output, whose metadata
// the plan fixes whole.
var errNoGGUFPatch = errors.New("GGUF output declares no metadata to patch")

// newGGUFSink starts a GGUF file: the typed metadata kv, then our own
// tcast.* keys from meta, in layout.GGUFKeys' order.
func newGGUFSink(path string, specs []layout.Spec, kv []gguf.KV, meta map[string]string) (sink, error) {
	w, err := ggufWriter(specs, kv, meta)
	if err != nil {
		return nil, err
	}
	st, err := w.Create(path)
	if err != nil {
		return nil, err
	}
	return ggufSink{st}, nil
}

// ggufWriter declares a GGUF file: the typed metadata kv, then our own
// tcast.* keys from meta, in layout.GGUFKeys' order, and the tensors of
// specs.
func ggufWriter(specs []layout.Spec, kv []gguf.KV, meta map[string]string) (*gguf.Writer, error) {
	var w gguf.Writer
	for _, p := range kv {
		if err := w.AddKV(p.Key, p.Value); err != nil {
			return nil, err
		}
	}
	keys := layout.GGUFKeys()
	for k := range meta {
		if !slices.Contains(keys, k) {
			return nil, fmt.Errorf("metadata %q has no place in GGUF output (layout.GGUFKeys)", k)
		}
	}
	for _, k := range keys {
		if v, ok := meta[k]; ok {
			if err := w.AddKV(k, gguf.String(v)); err != nil {
				return nil, err
			}
		}
	}
	for _, s := range specs {
		if err := w.DeclareTensor(s.Name, s.GGML, s.Shape); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", s.Name, err)
		}
	}
	return &w, nil
}

// jsonString returns v as JSON (v is a map or slice of strings, which always
// encodes).
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkOutput refuses a destination that is one of the input's files or
// directories, or holds one of them.
func checkOutput(dest string, inputs []string, inPath string) error {
	if st, err := os.Stat(inPath); err == nil && st.IsDir() {
		inputs = append(inputs, inPath)
	}
	return atomicfile.CheckOutput(dest, inputs...)
}

// checkpointFile matches the files a checkpoint output directory may hold,
// which -force may replace: weights, shards, index and config files.
var checkpointFile = regexp.MustCompile(`^(.*\.safetensors|.*\.gguf|.*\.json)$`)

// beginOutput starts writing dest (a directory when isDir): an existing
// empty directory is taken as new; with force, an existing directory is
// replaced only if it holds nothing but checkpoint files.
func beginOutput(dest string, isDir, force bool) (*atomicfile.Output, error) {
	if err := os.MkdirAll(filepath.Dir(dest), 0o777); err != nil {
		return nil, err
	}
	return atomicfile.Begin(dest, atomicfile.Options{Dir: isDir, Force: force, Replaceable: checkpointFile.MatchString})
}
