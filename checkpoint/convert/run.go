package convert

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/internal/measure"
	"github.com/tensorcast-go/tensorcast/internal/ordered"
)

// begin is the third step of a conversion: the output staged beside its
// destination, the sink that writes the weights, and the report.
func (c *conversion) begin() error {
	p, opts, lay := c.p, &c.opts, c.opts.Layout
	var err error
	if c.stage, err = beginOutput(c.dest, c.isDir, opts.Force); err != nil {
		return err
	}
	weightPath := c.stage.Path()
	if c.isDir {
		weightPath = filepath.Join(c.stage.Path(), fileName(lay))
	}
	if c.sink, err = newSink(lay.Container(), weightPath, p.specs, p.meta, p.outputKV(), opts.ShardSize, p.splits); err != nil {
		return err
	}
	if wrapSink != nil {
		c.sink = wrapSink(c.sink)
	}
	res := c.newResult()
	// In input order, whatever the order work finishes.
	res.Tensors = make([]TensorResult, len(p.tensors))
	c.res, c.patch = res, map[string]string{}
	return nil
}

// newResult starts the report of the conversion: what it reads, writes and
// casts to, and the bytes of its input.
func (c *conversion) newResult() *Result {
	p, opts := c.p, &c.opts
	res := &Result{Input: c.inPath, Output: c.dest, Layout: opts.Layout.Name(), DataType: p.dataTypeName(),
		Generic: p.genericWhy, ScaleSearch: opts.ScaleSearch, DryRun: opts.DryRun}
	if p.mixed {
		res.Mix = opts.GGUF.Mix.String()
	}
	if opts.Imatrix != nil {
		res.Imatrix = opts.Imatrix.Path
	}
	for _, d := range p.tensors {
		res.BytesIn += d.info.Size
	}
	return res
}

// run is the fourth step of a conversion: every tensor cast or copied by
// the workers and written to the sink, and finished in input order (emit).
//
// The window bounds the items between the start of their work and their
// emit. Every item writes its own bytes to the output (the emit, in order,
// only finishes each weight), so a weight cast whole holds its memory only
// while a worker casts it, and peak memory stays within (workers + 1) × the
// largest tensor; the window keeps the work near the input's order:
// workers + 1, one more when every cast weight streams, which keeps the
// workers busy while the head item finishes.
func (c *conversion) run() error {
	p, workers := c.p, c.opts.Workers
	for _, d := range p.tensors {
		d.st = p.streamOf(d)
	}
	items := p.items()
	window := workers + 1
	if p.allStreamed() {
		window++
	}
	// A spare core writes the output while the workers cast.
	p.out = newWriter(c.sink, workers < runtime.GOMAXPROCS(0))
	scratches := make(chan *scratch, workers)
	scs := make([]*scratch, workers)
	for i := range scs {
		scs[i] = &scratch{}
		scratches <- scs[i]
	}
	var done progress
	err := ordered.Run(len(items), workers, window, func(i int) error {
		sc := <-scratches
		defer func() { scratches <- sc }()
		return c.work(items[i], sc)
	}, func(i int) error {
		if !items[i].last {
			return nil
		}
		return c.emit(items[i].d, &done)
	})
	if err != nil {
		return err
	}
	// The writes still queued (the workers are done).
	if err := p.out.finish(scs); err != nil {
		return errors.Unwrap(err)
	}
	return nil
}

// work casts or copies one item of the plan.
func (c *conversion) work(it item, sc *scratch) error {
	p, d := c.p, it.d
	var err error
	switch {
	case d.st != nil:
		err = p.work(it, sc)
	case d.copied():
		err = p.copyPieces(it, sc)
	default:
		err = p.whole(d, sc)
	}
	return c.named(d, err)
}

// progress counts what emit finished.
type progress struct {
	tensors int
	bytes   int64
}

// emit finishes tensor d once its last item is written: its report, the
// metadata values it changed, the input it may release, and the progress.
func (c *conversion) emit(d *decision, done *progress) error {
	p, res := c.p, c.res
	switch {
	case d.st != nil:
		if err := p.finish(d); err != nil {
			return c.named(d, err)
		}
	case d.copied():
		d.result.BytesOut = d.info.Size
	}
	if d.cast {
		d.result.Bits = measure.StoredBits(d.result.BytesOut, d.shape)
	}
	c.in.Release(d.source)
	for k, v := range d.meta {
		if declared := p.meta[k]; declared != v {
			pv, err := fit(v, declared)
			if err != nil {
				return fmt.Errorf("tensor %s: metadata %s: %w", d.source, k, err)
			}
			c.patch[k] = pv
		}
	}
	res.Tensors[d.index] = d.result
	res.BytesOut += d.result.BytesOut
	done.bytes += d.info.Size
	done.tensors++
	if c.opts.Progress != nil {
		c.opts.Progress(Progress{Tensors: done.tensors, TotalTensors: len(p.tensors), Bytes: done.bytes,
			TotalBytes: res.BytesIn, Elapsed: time.Since(c.start)})
	}
	return nil
}

// named names the input and tensor d in an error of its work, unless the
// sink's (a writeError), which names the output and tensor.
func (c *conversion) named(d *decision, err error) error {
	var we writeError
	switch {
	case errors.As(err, &we):
		return we.error
	case err != nil:
		return fmt.Errorf("%s: tensor %s: %w", c.inPath, d.source, err)
	}
	return nil
}
