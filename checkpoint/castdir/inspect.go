package castdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tensorcast-go/tensorcast/checkpoint/load"
)

// Inspect builds the report of a cast directory, in the form load.Inspect
// gives for checkpoints: one stored tensor per part (named by its file, with
// its storage, logical shape and bytes) and the cast tensor as the one
// converted weight, with the statistics of its dequantized values when stats
// is set.
func Inspect(d *Dir, stats bool) (*load.Report, error) {
	info := &d.Info
	rep := &load.Report{File: d.Path, Layout: "cast directory", Metadata: map[string]string{
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
	w := load.Weight{Name: name, DataType: d.Name(), Code: info.DataType.Code, Shape: d.Shape(), Axis: info.Axis,
		ScaleMode: d.Mode.String(), BitsPerValue: info.BitsPerValue, Parts: map[string]string{}}
	rep.Totals = load.Totals{Tensors: len(info.Parts), Parameters: 1, Converted: 1}
	for _, n := range w.Shape {
		rep.Totals.Parameters *= int64(n)
	}
	for _, pi := range info.Parts {
		w.Parts[pi.Name] = pi.File
		it := load.StoredTensor{Name: pi.File, DType: pi.Storage, Shape: pi.Shape, Bytes: int64(pi.Bytes),
			PartOf: &load.PartOf{Weight: name, DataType: w.DataType, Part: pi.Name}}
		if pi.Name == "mask" {
			m, err := d.Part("mask")
			if err != nil {
				return nil, err
			}
			dens, err := load.MaskDensity(m.Bytes, m.Len(), m.Packed)
			if err != nil {
				return nil, &FormatError{Dir: d.Path, File: pi.File, Msg: "mask", Err: err}
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
	if stats {
		v, _, err := d.Float32()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Path, err)
		}
		w.Stats = load.ComputeStats(v)
	}
	rep.Converted = []load.Weight{w}
	return rep, nil
}
