// Package convert casts the weights of a checkpoint to a datatype and writes
// them in a loader layout (package layout): safetensors layouts (tcast,
// compressed-tensors, gpt-oss, modelopt, fp8-block) and GGUF alike.
//
// The input is any checkpoint package load opens, quantized ones included
// (their weights are dequantized exactly, then cast). Tensors are read from
// the memory-mapped input, cast in parallel and written in parallel, each
// piece by the worker that made it, at its place in the output, which the
// layout fixes before any data is written; they are finished in input
// order, so peak memory stays within (workers + 1) × the largest tensor. A
// weight the layout streams (layout.Streamer: the tcast layout for the
// datatypes the one-pass kernels cast, and the gguf layout) from a plain
// BF16, F16 or F32 source goes through the pipeline of pipeline.go: one
// pass over the data a cache-sized chunk at a time (widen, cast, dequantize
// and measure), shared by all workers, with only the pieces in flight in
// memory. The output (one
// file, or a directory of weights, shards, index and config files) is built
// under a temporary name beside its destination and published with one
// rename: it appears whole or not at all, also when it replaces an earlier
// output, and never mixes old and new files. No input file is ever written:
// an output that is an input, holds one, or would replace a config file of
// the input is refused.
package convert

import (
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/internal/atomicfile"
)

// Convert converts the checkpoint at inPath and writes it to out in
// opts.Layout: to the file out when it names a file of the layout's
// container (.safetensors, .gguf), else to the directory out. An out that
// names a file of another kind is an *OutputError.
func Convert(inPath, out string, opts Options) (*Result, error) {
	c := &conversion{start: time.Now(), inPath: inPath, out: out, opts: opts}
	defer c.close()
	steps := []func() error{c.check, c.plan, c.begin, c.run, c.publish}
	if opts.DryRun {
		steps = []func() error{c.check, c.plan, c.dryRun}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return c.res, nil
}

// conversion is one run of Convert. Its steps, in order, are check
// (check.go: the options, before anything is read), plan (plan.go: the
// input opened and every tensor decided), begin and run (run.go: the
// output staged and every tensor written) and publish (publish.go: the
// output checked, finished and renamed into place); each fills in what
// the next one takes.
type conversion struct {
	start       time.Time
	inPath, out string
	opts        Options
	dest        string // where the output goes (destination)
	isDir       bool   // dest is a directory
	in          *load.Checkpoint
	p           *plan
	stage       *atomicfile.Output
	sink        sink
	res         *Result
	// patch holds the metadata values that differ from the plan's.
	patch map[string]string
}

// close releases what the steps took, in the reverse order: the writer,
// the sink and the staged output (both removed unless published), and the
// input.
func (c *conversion) close() {
	if c.p != nil && c.p.out != nil {
		c.p.out.stop()
	}
	if c.sink != nil {
		c.sink.Abort()
	}
	if c.stage != nil {
		c.stage.Abort()
	}
	if c.in != nil {
		c.in.Close()
	}
}
