package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tensorcast-go/tensorcast/tcast"
)

// publish is the last step of a conversion: the weights checked for lost
// values, the metadata patched, the sink closed, the config files written
// and the output renamed into place; then the report is finished.
func (c *conversion) publish() error {
	p, res := c.p, c.res
	if err := c.checkNonFinite(); err != nil {
		return err
	}
	if len(p.rotated) > 0 {
		if err := p.recordUnrotated(res, c.patch); err != nil {
			return err
		}
	}
	if len(c.patch) > 0 {
		if err := c.sink.PatchMetadata(c.patch); err != nil {
			return err
		}
	}
	if err := c.sink.Close(); err != nil {
		return err
	}
	if err := c.writeFiles(); err != nil {
		return err
	}
	if err := c.stage.Commit(); err != nil {
		return err
	}
	for _, d := range p.dropped {
		res.Tensors = append(res.Tensors, d.result())
	}
	res.Seconds = time.Since(c.start).Seconds()
	p.warnRequantized(res.Tensors)
	res.Warnings = p.warnings
	sum := res.Summarize()
	res.Summary = &sum
	return nil
}

// checkNonFinite refuses weights whose source holds NaN or Inf, counted as
// the error was measured, before the output is published (close removes
// what was written); with Options.AllowNonFinite it warns.
func (c *conversion) checkNonFinite() error {
	bad := nonFinite(c.res.Tensors)
	if len(bad) == 0 {
		return nil
	}
	if !c.opts.AllowNonFinite {
		return &tcast.NonFiniteError{Input: c.inPath, Tensors: bad}
	}
	names := make([]string, len(bad))
	for i, t := range bad {
		names[i] = fmt.Sprintf("%s (%d NaN, %d +Inf, %d -Inf)", t.Name, t.NaN, t.PosInf, t.NegInf)
	}
	c.p.warn(Warning{Text: fmt.Sprintf("%d %s cast with NaN or Inf values in the source, per "+
		"the block policy (a block holding one is NaN in most datatypes): %s; check the source",
		len(bad), plural(len(bad), "weight was", "weights were"), strings.Join(names, ", ")),
		Fixes: []Fix{{Option: "Exclude", Choose: "a pattern of the weights to keep as they are"}}})
	return nil
}

// writeFiles writes the layout's files beside the weights (config.json,
// ...); a pruning layout makes them again with the zeros of the weights as
// written (compressed-tensors' global_sparsity).
func (c *conversion) writeFiles() error {
	p := c.p
	if p.pruned {
		for _, d := range p.tensors {
			if d.cast {
				p.converted[d.conv].Zeros, p.converted[d.conv].Measured = d.zeros, true
			}
		}
		var err error
		if p.files, err = p.lay.Files(c.opts.DataType, p.converted, p.kept, c.in.Config()); err != nil {
			return err
		}
	}
	for name, b := range p.files {
		if err := writeNew(filepath.Join(c.stage.Path(), name), b); err != nil {
			return err
		}
	}
	return nil
}

// writeNew writes a new file inside a staging directory (mode 0666 less the
// umask).
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
