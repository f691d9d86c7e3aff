package convert

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
)

// GGUF output in splits, as llama.cpp's gguf-split writes them: in the
// output directory, model-00001-of-0000N.gguf and the rest, each a GGUF
// file with split.no, split.count and split.tensors.count, the first with
// all the other metadata. The directory is staged and published whole.

// splitOf returns the split of each of the plan's specs for GGUF output
// in splits: by size (Options.ShardSize, as gguf.SplitBySize cuts), or as
// the input's (GGUF.KeepSplit); nil for one file.
func (p *plan) splitOf() []int {
	o := p.opts
	if p.lay.Container() != layout.GGUF || (o.ShardSize <= 0 && !o.GGUF.KeepSplit) {
		return nil
	}
	if o.GGUF.KeepSplit && !p.in.GGUF().IsSplit() {
		return nil // one file in, one file out
	}
	if o.GGUF.KeepSplit {
		out := make([]int, len(p.specs))
		from := map[string]int{}
		for _, d := range p.tensors {
			for _, sp := range d.specs {
				from[sp.Name] = p.in.GGUF().TensorSplit(d.source)
			}
		}
		for i, sp := range p.specs {
			out[i] = from[sp.Name] // 0 for a tensor the input does not have
		}
		return out
	}
	sizes := make([]int64, len(p.specs))
	for i, sp := range p.specs {
		sizes[i] = sp.Bytes(layout.GGUF)
	}
	return gguf.SplitBySize(sizes, o.ShardSize)
}

// splitSink writes a GGUF model in splits.
type splitSink struct {
	parts []sink
	of    map[string]int // the split of each tensor
}

// newSplitSink starts the splits of a GGUF model in the directory of path
// (model.gguf), spec i in split splitOf[i].
func newSplitSink(path string, specs []layout.Spec, splitOf []int, kv []gguf.KV, meta map[string]string) (sink, error) {
	count := 1 // a model of no tensors is one split of metadata
	for _, s := range splitOf {
		count = max(count, s+1)
	}
	if count > 1<<16-1 {
		return nil, fmt.Errorf("%d splits; split.count holds at most %d: give a larger split size", count, 1<<16-1)
	}
	prefix := strings.TrimSuffix(path, filepath.Ext(path))
	s := &splitSink{of: map[string]int{}}
	for i := range count {
		var part []layout.Spec
		for j, sp := range specs {
			if splitOf[j] == i {
				part = append(part, sp)
				s.of[sp.Name] = i
			}
		}
		keys := []gguf.KV{{Key: gguf.KeySplitNo, Value: gguf.Uint16(uint16(i))},
			{Key: gguf.KeySplitCount, Value: gguf.Uint16(uint16(count))},
			{Key: gguf.KeySplitTensors, Value: gguf.Int32(int32(len(specs)))}}
		var m map[string]string
		if i == 0 {
			keys, m = gguf.SetKV(kv, keys...), meta
		}
		w, err := newGGUFSink(gguf.SplitPath(prefix, i, count), part, keys, m)
		if err != nil {
			s.Abort()
			return nil, err
		}
		s.parts = append(s.parts, w)
	}
	return s, nil
}

func (s *splitSink) WriteAt(name string, data []byte, off int64) error {
	i, ok := s.of[name]
	if !ok {
		return fmt.Errorf("tensor %s was not declared", name)
	}
	return s.parts[i].WriteAt(name, data, off)
}

func (s *splitSink) PatchMetadata(map[string]string) error { return errNoGGUFPatch }

func (s *splitSink) Close() error {
	for i, p := range s.parts {
		if err := p.Close(); err != nil {
			for _, q := range s.parts[i+1:] {
				q.Abort()
			}
			return err
		}
	}
	return nil
}

func (s *splitSink) Abort() {
	for _, p := range s.parts {
		p.Abort()
	}
}
