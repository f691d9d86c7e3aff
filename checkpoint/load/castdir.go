package load

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tensorcast-go/tensorcast/checkpoint/castdir"
)

// InspectCastDir builds the report of a cast directory (package castdir),
// in the form Inspect gives for checkpoints: one stored tensor per part
// (named by its file, with its storage, logical shape and bytes) and the
// cast tensor as the one converted weight, with the statistics of its
// dequantized values with opts.Stats.
func InspectCastDir(d *castdir.Dir, opts InspectOptions) (*Report, error) {
	info := &d.Info
	rep := &Report{File: d.Path, Layout: "cast directory", Metadata: map[string]string{
		"input": info.Input, "input_dtype": info.InputDType, "rounding": info.Rounding, "overflow": info.Overflow}}
	if info.Keep != "" {
		rep.Metadata["keep"] = info.Keep
	}
	if info.Seed != nil {
		rep.Metadata["seed"] = strconv.FormatUint(*info.Seed, 10)
	}
	name := info.Input
	if name == "" {
		name = filepath.Base(d.Path)
	}
	w := Weight{Name: name, DataType: d.Name(), Code: info.DataType.Code, Shape: d.Shape(), Axis: info.Axis,
		ScaleMode: d.Mode.String(), BitsPerValue: info.BitsPerValue, Parts: map[string]string{}}
	rep.Totals = Totals{Tensors: len(info.Parts), Parameters: 1, Converted: 1}
	for _, n := range w.Shape {
		rep.Totals.Parameters *= int64(n)
	}
	for _, pi := range info.Parts {
		w.Parts[pi.Name] = pi.File
		it := StoredTensor{Name: pi.File, DType: pi.Storage, Shape: pi.Shape, Bytes: int64(pi.Bytes),
			PartOf: &PartOf{Weight: name, DataType: w.DataType, Part: pi.Name}}
		if pi.Name == "mask" {
			m, err := d.Part("mask")
			if err != nil {
				return nil, err
			}
			dens, err := maskDensity(m.Bytes, m.Len(), m.Packed)
			if err != nil {
				return nil, &castdir.FormatError{Format: "castdir", Path: filepath.Join(d.Path, pi.File),
					Offset: -1, Reason: "mask", Err: err}
			}
			it.Density, w.Density = &dens, &dens
		}
		rep.Tensors = append(rep.Tensors, it)
		rep.Totals.Bytes += it.Bytes
	}
	for _, f := range d.Files() {
		if st, err := os.Stat(filepath.Join(d.Path, f)); err == nil {
			rep.Totals.FileBytes += st.Size()
		}
	}
	if opts.Stats {
		v, _, err := d.Float32()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Path, err)
		}
		w.Stats = computeStats(v)
	}
	rep.Converted = []Weight{w}
	return rep, nil
}
