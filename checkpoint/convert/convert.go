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
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/internal/ordered"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// ErrNonFinite is matched by the error of Convert for weights to cast
// whose source holds NaN or ±Inf values (Options.AllowNonFinite unset);
// errors.As gives the *NonFiniteError that names them. It is
// tcast.ErrNonFinite, which tcast cast's refusal matches too.
var ErrNonFinite = tcast.ErrNonFinite

// NonFiniteTensor is one weight of a NonFiniteError: its name as the report
// and Options.Exclude know it (the output name: the input's, unless renamed
// by Options.Rename or for a llama.cpp model file) and the counts of its
// NaN, +Inf and −Inf values.
type NonFiniteTensor = tcast.NonFiniteTensor

// NonFiniteError reports the weights to cast whose source holds NaN or ±Inf
// values, in input order (tcast.NonFiniteError). It matches ErrNonFinite,
// and its message says what to do: -allow-nonfinite
// (Options.AllowNonFinite) or -exclude.
type NonFiniteError = tcast.NonFiniteError

// Convert converts the checkpoint at inPath and writes it to out (see
// Destination) in opts.Layout.
func Convert(inPath, out string, opts Options) (*Result, error) {
	start := time.Now()
	if opts.Layout == nil {
		opts.Layout, _ = layout.Get("tcast")
	}
	if err := opts.Check(); err != nil {
		return nil, err
	}
	_, pruned := layout.PruningOf(opts.Layout)
	if opts.DataType == nil && !pruned && opts.GGUFMix.IsZero() {
		return nil, errors.New("no datatype to cast to")
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	lay := opts.Layout
	if opts.DataType != nil {
		if err := layout.Accepts(lay, opts.DataType); err != nil {
			return nil, err
		}
	}
	probe := opts.DataType
	if !opts.GGUFMix.IsZero() {
		if probe == nil {
			var err error
			if probe, err = layout.DataType(lay, strings.ToLower(opts.GGUFMix.Base().String())); err != nil {
				return nil, err
			}
		}
	}
	if c, ok := lay.(layout.Caster); ok && probe != nil {
		// The layout's own quantizer refuses options it cannot honour
		// (GGUF's Q8_0 has no scale modes): say so before reading anything.
		// One row of 256, a whole block of every layout's types.
		if _, err := c.Cast(make([]float32, 256), []int{1, 256}, probe, &tcast.Options{Form: tcast.Actual, Mode: opts.Mode}); err != nil {
			return nil, err
		}
	}
	dest, isDir, err := Destination(out, lay)
	if err != nil {
		return nil, err
	}
	if opts.ShardSize > 0 && (!isDir || lay.Container() != layout.Safetensors) {
		return nil, fmt.Errorf("-shard-size splits safetensors output in a directory; -o %s is not one", out)
	}
	in, err := load.Open(inPath)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	p, err := newPlan(in, &opts)
	if err != nil {
		if msg := err.Error(); !strings.HasPrefix(msg, inPath+":") && !strings.HasPrefix(msg, filepath.Join(inPath, "")+string(filepath.Separator)) {
			err = fmt.Errorf("%s: %w", inPath, err) // unless it names a file of the input already
		}
		return nil, err
	}
	if err := checkOutput(dest, in.Files(), inPath); err != nil {
		return nil, err
	}
	if len(p.files) > 0 && !isDir {
		var names []string
		for n := range p.files {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("the %s layout writes %s beside the weights, so -o must name a directory, not the file %s",
			lay.Name(), strings.Join(names, " and "), out)
	}
	p.nameGeneric(strings.TrimSuffix(filepath.Base(dest), ".gguf"))
	stage, err := beginOutput(dest, isDir, opts.Force)
	if err != nil {
		return nil, err
	}
	defer stage.Abort()
	weightPath := stage.Path()
	if isDir {
		weightPath = filepath.Join(stage.Path(), fileName(lay))
	}
	sink, err := newSink(lay.Container(), weightPath, p.specs, p.meta, append(slices.Clip(p.ggufKV), p.tailKV()...), opts.ShardSize)
	if err != nil {
		return nil, err
	}
	defer sink.Abort()

	res := &Result{Input: inPath, Output: dest, Layout: lay.Name(), DataType: p.dataTypeName(), Generic: p.genericWhy}
	if p.mixed {
		res.Mix = opts.GGUFMix.String()
	}
	if opts.Imatrix != nil {
		res.Imatrix = opts.Imatrix.Path
	}
	res.ScaleSearch = opts.ScaleSearch
	for _, d := range p.tensors {
		res.BytesIn += d.info.Size
	}
	patch := map[string]string{} // metadata values that differ from the plan's
	var bytesDone int64
	tensorsDone := 0
	res.Tensors = make([]TensorResult, len(p.tensors)) // in input order, whatever the order work finishes
	for _, d := range p.tensors {
		d.st = p.streamOf(d)
	}
	items := p.items()
	// The window bounds the items between the start of their work and
	// their emit. Every item writes its own bytes to the output (the emit,
	// in order, only finishes each weight), so a weight cast whole holds
	// its memory only while a worker casts it, and peak memory stays within
	// (workers + 1) × the largest tensor; the window keeps the work near
	// the input's order: workers + 1, one more when every cast weight
	// streams, which keeps the workers busy while the head item finishes.
	window := opts.Workers + 1
	if p.allStreamed() {
		window++
	}
	if wrapSink != nil {
		sink = wrapSink(sink)
	}
	// A spare core writes the output while the workers cast.
	p.out = newWriter(sink, opts.Workers < runtime.GOMAXPROCS(0))
	defer p.out.stop() // before the sink's Abort
	scratches := make(chan *scratch, opts.Workers)
	scs := make([]*scratch, opts.Workers)
	for i := range scs {
		scs[i] = &scratch{}
		scratches <- scs[i]
	}
	// named names the input and tensor d in an error of its work, unless
	// the sink's (a writeError), which names the output and tensor.
	named := func(d *decision, err error) error {
		var we writeError
		switch {
		case errors.As(err, &we):
			return we.error
		case err != nil:
			return fmt.Errorf("%s: tensor %s: %w", inPath, d.source, err)
		}
		return nil
	}
	err = ordered.Run(len(items), opts.Workers, window, func(i int) error {
		it := items[i]
		d := it.d
		sc := <-scratches
		defer func() { scratches <- sc }()
		var err error
		switch {
		case d.st != nil:
			err = p.work(it, sc)
		case d.copied():
			err = p.copyPieces(it, sc)
		default:
			err = p.whole(d, sc)
		}
		return named(d, err)
	}, func(i int) error {
		it := items[i]
		if !it.last {
			return nil
		}
		d := it.d
		switch {
		case d.st != nil:
			if err := p.finish(d); err != nil {
				return named(d, err)
			}
		case d.copied():
			d.result.BytesOut = d.info.Size
		}
		if d.cast {
			d.result.Bits = storedBits(d.result.BytesOut, d.shape)
		}
		in.Release(d.source)
		for k, v := range d.meta {
			if declared := p.meta[k]; declared != v {
				pv, err := fit(v, declared)
				if err != nil {
					return fmt.Errorf("tensor %s: metadata %s: %w", d.source, k, err)
				}
				patch[k] = pv
			}
		}
		res.Tensors[d.index] = d.result
		res.BytesOut += d.result.BytesOut
		bytesDone += d.info.Size
		tensorsDone++
		if opts.Progress != nil {
			opts.Progress(Progress{Tensors: tensorsDone, TotalTensors: len(p.tensors), Bytes: bytesDone, TotalBytes: res.BytesIn, Elapsed: time.Since(start)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The writes still queued (the workers are done).
	if err := p.out.finish(scs); err != nil {
		return nil, errors.Unwrap(err)
	}
	if bad := nonFinite(res.Tensors); len(bad) > 0 {
		// Counted as the error was measured: refuse before the output is
		// published (the deferred Abort removes what was written).
		if !opts.AllowNonFinite {
			return nil, &NonFiniteError{Input: inPath, Tensors: bad}
		}
		names := make([]string, len(bad))
		for i, t := range bad {
			names[i] = fmt.Sprintf("%s (%d NaN, %d +Inf, %d -Inf)", t.Name, t.NaN, t.PosInf, t.NegInf)
		}
		p.warn("%d %s cast with NaN or Inf values in the source, per the block policy (a block holding one is NaN in most datatypes): %s; check the source, or keep them with -exclude RE",
			len(bad), plural(len(bad), "weight was", "weights were"), strings.Join(names, ", "))
	}
	if len(p.rotated) > 0 {
		if err := p.recordUnrotated(res, patch); err != nil {
			return nil, err
		}
	}
	if len(patch) > 0 {
		if err := sink.PatchMetadata(patch); err != nil {
			return nil, err
		}
	}
	if err := sink.Close(); err != nil {
		return nil, err
	}
	if p.pruned {
		// The files again, with the zeros of the weights as written
		// (compressed-tensors' global_sparsity).
		for _, d := range p.tensors {
			if d.cast {
				p.converted[d.conv].Zeros, p.converted[d.conv].Measured = d.zeros, true
			}
		}
		if p.files, err = p.lay.Files(opts.DataType, p.converted, p.kept, in.Config()); err != nil {
			return nil, err
		}
	}
	for _, d := range p.dropped {
		res.Tensors = append(res.Tensors, d.result())
	}
	for name, b := range p.files {
		if err := writeNew(filepath.Join(stage.Path(), name), b); err != nil {
			return nil, err
		}
	}
	if err := stage.Commit(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	p.warnRequantized(res.Tensors)
	res.Warnings = p.warnings
	sum := res.Summarize()
	res.Summary = &sum
	return res, nil
}
