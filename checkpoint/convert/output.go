package convert

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// output is where a conversion writes: one safetensors file, or shards of at
// most shardSize bytes of tensor data named model-0000i-of-0000n.safetensors
// with a model.safetensors.index.json. Every shard carries the full
// __metadata__, so any shard describes the checkpoint. Nothing appears under a
// final name until Close, and a failed Close removes what it had renamed.
type output struct {
	dir     string
	index   string // index path, "" for a single file
	writers []*safetensors.Writer
	paths   []string
	shardOf map[string]int
	total   int64
}

// specBytes is the data size of a declared tensor.
func specBytes(s safetensors.TensorSpec) int64 {
	n := int64(1)
	for _, d := range s.Shape {
		n *= int64(d)
	}
	return n * int64(s.DType.BitSize()) / 8
}

// createOutput starts writing specs (in order) at dst, or as shards in dst's
// directory when shardSize > 0.
func createOutput(dst string, specs []safetensors.TensorSpec, meta map[string]string, shardSize int64) (*output, error) {
	o := &output{dir: filepath.Dir(dst), shardOf: map[string]int{}}
	var groups [][]safetensors.TensorSpec
	if shardSize <= 0 {
		groups = [][]safetensors.TensorSpec{specs}
		o.paths = []string{dst}
	} else {
		var cur []safetensors.TensorSpec
		var size int64
		for _, s := range specs {
			b := specBytes(s)
			if len(cur) > 0 && size+b > shardSize {
				groups, cur, size = append(groups, cur), nil, 0
			}
			cur, size = append(cur, s), size+b
		}
		if len(cur) > 0 || len(groups) == 0 {
			groups = append(groups, cur)
		}
		for i := range groups {
			o.paths = append(o.paths, filepath.Join(o.dir, safetensors.ShardName(i+1, len(groups))))
		}
		o.index = filepath.Join(o.dir, safetensors.IndexFileName)
	}
	for i, g := range groups {
		w, err := safetensors.Create(o.paths[i], g, meta)
		if err != nil {
			o.Abort()
			return nil, err
		}
		o.writers = append(o.writers, w)
		for _, s := range g {
			o.shardOf[s.Name] = i
			o.total += specBytes(s)
		}
	}
	return o, nil
}

// Write appends data to the named tensor.
func (o *output) Write(name string, data []byte) error {
	return o.writers[o.shardOf[name]].Write(name, data)
}

// PatchMetadata patches every shard's metadata.
func (o *output) PatchMetadata(p map[string]string) error {
	for _, w := range o.writers {
		if err := w.PatchMetadata(p); err != nil {
			return err
		}
	}
	return nil
}

// Close publishes every shard and then the index.
func (o *output) Close() error {
	for i, w := range o.writers {
		if err := w.Close(); err != nil {
			for _, rest := range o.writers[i+1:] {
				rest.Abort()
			}
			o.removeShards(i)
			return err
		}
	}
	if o.index == "" {
		return nil
	}
	weightMap := map[string]string{}
	for name, i := range o.shardOf {
		weightMap[name] = filepath.Base(o.paths[i])
	}
	b, err := json.MarshalIndent(map[string]any{"metadata": map[string]int64{"total_size": o.total}, "weight_map": weightMap}, "", "  ")
	if err == nil {
		err = atomicfile.WriteFile(o.index, append(b, '\n'))
	}
	if err != nil {
		o.removeShards(len(o.paths))
		return fmt.Errorf("convert: %v", err)
	}
	return nil
}

// removeShards deletes the first n published shards.
func (o *output) removeShards(n int) {
	for _, p := range o.paths[:n] {
		os.Remove(p)
	}
}

// Abort discards everything not yet published.
func (o *output) Abort() {
	for _, w := range o.writers {
		w.Abort()
	}
}
