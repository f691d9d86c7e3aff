package layout

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// FormatVersion is the version of the tcast layout this package writes, in
// __metadata__[KeyFormat]. Version 1 described weight W under "tcast:W";
// version 2 uses KeyWeightPrefix + W. Both are read.
const FormatVersion = "2"

// WeightInfo is the JSON description of one converted weight in the tcast layout
// (docs/FORMAT.md).
type WeightInfo struct {
	DataType  string              `json:"datatype"`      // the datatype code, which tcast.Lookup accepts
	Name      string              `json:"datatype_name"` // the registered name, informative
	Shape     []int               `json:"shape"`         // the weight's logical shape
	Axis      int                 `json:"axis"`          // the scaled axis
	ScaleMode string              `json:"scale_mode"`
	Bits      float64             `json:"bits_per_value"`
	Parts     map[string]PartInfo `json:"parts"`
}

// PartInfo describes one stored part of a weight.
type PartInfo struct {
	Tensor string `json:"tensor"`           // the safetensors tensor holding it
	Format string `json:"format,omitempty"` // number format of its entries; none for meta and mask
	Bits   int    `json:"bits"`             // bits per entry
	Shape  []int  `json:"shape"`            // logical shape (entries)
	Packed bool   `json:"packed"`           // an LSB-first bit stream of Bits-wide entries
}

type tcastLayout struct{}

func init() { register(tcastLayout{}) }

func (tcastLayout) Name() string { return "tcast" }

func (tcastLayout) Container() Container { return Safetensors }

func (tcastLayout) Check(*tcast.DataType, int, int) error { return nil }

// partTensorName is where a part of weight name is stored: the data under the
// weight's own name, the others under name + "." + part.
func partTensorName(name, part string) string {
	if part == "data" {
		return name
	}
	return name + "." + part
}

// partSpec is how a part of the Compressed form is stored.
func partSpec(name string, p tcast.NamedPart) Spec {
	tn := partTensorName(name, p.Name)
	switch {
	case p.Packed:
		return specOf(tn, safetensors.U8, []int{p.ByteLen()})
	case p.StorageBytes() == 1:
		return specOf(tn, safetensors.U8, slices.Clone(p.Shape))
	case p.StorageBytes() == 2:
		return specOf(tn, safetensors.U16, slices.Clone(p.Shape))
	}
	return specOf(tn, safetensors.U32, slices.Clone(p.Shape))
}

// describe returns the stored tensors and the metadata entry of weight name,
// whose Compressed form c may have no bytes.
func describe(name string, c *tcast.Tensor) ([]Spec, map[string]string, error) {
	info := WeightInfo{DataType: c.DataType.Code(), Name: c.DataType.Name(), Shape: c.Shape, Axis: c.Axis,
		ScaleMode: c.Mode.String(), Bits: c.BitsPerValue(), Parts: map[string]PartInfo{}}
	var specs []Spec
	for _, p := range c.Parts() {
		sp := partSpec(name, p)
		pi := PartInfo{Tensor: sp.Name, Bits: p.Bits, Shape: p.Shape, Packed: p.Packed}
		if p.Format != nil {
			pi.Format = p.Format.Name()
		}
		info.Parts[p.Name] = pi
		specs = append(specs, sp)
	}
	js, err := json.Marshal(info)
	if err != nil {
		return nil, nil, err
	}
	return specs, map[string]string{KeyWeightPrefix + name: string(js), KeyFormat: FormatVersion}, nil
}

func (tcastLayout) Specs(name string, shape []int, dt *tcast.DataType, axis int) ([]Spec, map[string]string, error) {
	c, err := tcast.Describe(shape, dt, tcast.Compressed, &tcast.Options{Axis: axisOpt(axis)})
	if err != nil {
		return nil, nil, err
	}
	return describe(name, c)
}

// axisOpt returns the tcast.Options.Axis value naming axis index a.
func axisOpt(a int) int {
	if a == 0 {
		return tcast.FirstAxis
	}
	return a
}

func (tcastLayout) Encode(name string, t *tcast.Tensor, meta map[string]string) ([]Tensor, error) {
	c, err := tcast.Compress(t)
	if err != nil {
		return nil, err
	}
	specs, m, err := describe(name, c)
	if err != nil {
		return nil, err
	}
	maps.Copy(meta, m)
	out := make([]Tensor, len(specs))
	for i, p := range c.Parts() {
		out[i] = Tensor{Spec: specs[i], Data: p.Bytes}
	}
	return out, nil
}

// Find lists the weights the metadata describes.
func (tcastLayout) Find(src Source) map[string][]string {
	out := map[string][]string{}
	for k, v := range src.Metadata() {
		name, ok := strings.CutPrefix(k, KeyWeightPrefix)
		if !ok {
			if name, ok = strings.CutPrefix(k, legacyWeightPrefix); !ok {
				continue
			}
		}
		var info WeightInfo
		if json.Unmarshal([]byte(v), &info) != nil {
			out[name] = nil // Decode reports the error
			continue
		}
		for _, p := range []string{"data", "scale", "zero", "tensor_scale", "meta", "mask"} {
			if pi, ok := info.Parts[p]; ok {
				out[name] = append(out[name], pi.Tensor)
			}
		}
	}
	return out
}

// ReadWeightInfo returns the description of converted weight name from
// metadata, and false when there is none.
func ReadWeightInfo(meta map[string]string, name string) (*WeightInfo, bool, error) {
	js, ok := metaValue(meta, KeyWeightPrefix+name, legacyWeightPrefix+name)
	if !ok {
		return nil, false, nil
	}
	var info WeightInfo
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		return nil, true, &FormatError{Layout: "tcast", Weight: name, Msg: fmt.Sprintf("metadata %s%s: %v", KeyWeightPrefix, name, err)}
	}
	return &info, true, nil
}

// Describe returns the datatype and shape the metadata records for weight
// name.
func (tcastLayout) Describe(name string, src Source) (*tcast.DataType, []int, error) {
	info, ok, err := ReadWeightInfo(src.Metadata(), name)
	switch {
	case err != nil:
		return nil, nil, err
	case !ok:
		return nil, nil, &FormatError{Layout: "tcast", Weight: name, Msg: "no description in the metadata"}
	}
	dt, err := infoDataType(info)
	if err != nil {
		return nil, nil, &FormatError{Layout: "tcast", Weight: name, Err: err}
	}
	for _, p := range info.Parts {
		if _, _, ok := src.Tensor(p.Tensor); !ok {
			return nil, nil, &FormatError{Layout: "tcast", Weight: name, Msg: fmt.Sprintf("stored tensor %q is missing", p.Tensor)}
		}
	}
	// The recorded shape is what a converter plans its output with: the
	// stored tensors must hold the parts it implies (as Decode checks), or a
	// record could claim terabytes over a few stored bytes. Sizes only:
	// nothing is read (the mask is checked when decoded).
	want, err := tcast.Describe(info.Shape, dt, tcast.Compressed, &tcast.Options{Axis: axisOpt(info.Axis)})
	if err != nil {
		return nil, nil, &FormatError{Layout: "tcast", Weight: name, Err: fmt.Errorf("shape %v: %w", info.Shape, err)}
	}
	for _, np := range want.Parts() {
		if np.Name == "mask" {
			continue
		}
		rec, ok := info.Parts[np.Name]
		if !ok {
			return nil, nil, &FormatError{Layout: "tcast", Weight: name, Msg: fmt.Sprintf("no %s part for datatype %s", np.Name, dt.Name())}
		}
		ti, _, _ := src.Tensor(rec.Tensor)
		if nb := np.Part.ByteLen(); ti.Size != int64(nb) {
			return nil, nil, &FormatError{Layout: "tcast", Weight: name, Msg: fmt.Sprintf("%s part: stored tensor %q holds %d bytes; a %s weight of shape %v needs %d",
				np.Name, rec.Tensor, ti.Size, dt.Name(), info.Shape, nb)}
		}
	}
	return dt, slices.Clone(info.Shape), nil
}

// infoDataType returns the datatype a description names: its registered name
// when that is the recorded code's datatype, else the code's.
func infoDataType(info *WeightInfo) (*tcast.DataType, error) {
	dt, err := tcast.Lookup(info.DataType)
	if err != nil {
		return nil, err
	}
	if named, err := tcast.Lookup(info.Name); err == nil && named.Code() == dt.Code() {
		dt = named
	}
	return dt, nil
}

func (tcastLayout) Decode(name string, src Source) (*tcast.Tensor, bool, error) {
	info, ok, err := ReadWeightInfo(src.Metadata(), name)
	if !ok || err != nil {
		return nil, ok, err
	}
	fail := func(format string, args ...any) (*tcast.Tensor, bool, error) {
		return nil, true, &FormatError{Layout: "tcast", Weight: name, Err: fmt.Errorf(format, args...)}
	}
	dt, err := infoDataType(info)
	if err != nil {
		return fail("%w", err)
	}
	mode, err := scale.ParseMode(info.ScaleMode)
	if err != nil {
		return fail("%w", err)
	}
	t := &tcast.Tensor{DataType: dt, Form: tcast.Compressed, Shape: slices.Clone(info.Shape), Axis: info.Axis, Mode: mode}
	var maskPart *tcast.Part
	slots := map[string]**tcast.Part{"data": &t.Data, "scale": &t.Scale, "zero": &t.Zero,
		"tensor_scale": &t.TensorScale, "meta": &t.Meta, "mask": &maskPart}
	for pname, pi := range info.Parts {
		slot, ok := slots[pname]
		if !ok {
			return fail("unknown part %q", pname)
		}
		_, b, ok := src.Tensor(pi.Tensor)
		if !ok {
			return fail("part %s: tensor %q is missing", pname, pi.Tensor)
		}
		p := &tcast.Part{Bits: pi.Bits, Shape: slices.Clone(pi.Shape), Packed: pi.Packed, Bytes: b}
		if pi.Format != "" {
			if p.Format, err = dtype.Parse(pi.Format); err != nil {
				return fail("part %s: %w", pname, err)
			}
		}
		*slot = p
	}
	if maskPart != nil {
		if t.Mask, err = maskPart.Mask(); err != nil {
			return fail("part mask: %w", err)
		}
	}
	// dtype.Parse returns one *Format per canonical name, so the parts' formats
	// compare equal to the datatype's in Validate. The parts are views of
	// src's bytes: the Compressed form is returned as stored.
	if err := tcast.Validate(t); err != nil {
		return fail("%w", err)
	}
	return t, true, nil
}

func (tcastLayout) Files(*tcast.DataType, []Converted, []string, []byte) (map[string][]byte, error) {
	return nil, nil
}
