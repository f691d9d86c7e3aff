package layout

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// FormatVersion is the version of the tcast layout, in __metadata__["tcast.format"].
const FormatVersion = "1"

// MetaPrefix starts the __metadata__ key that describes a converted weight:
// "tcast:" + the weight's name.
const MetaPrefix = "tcast:"

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

func init() { Register(tcastLayout{}) }

func (tcastLayout) Name() string { return "tcast" }

func (tcastLayout) Check(*tcast.DataType, int, int) error { return nil }

// partTensorName is where a part of weight name is stored: the data under the
// weight's own name, the others under name + "." + part.
func partTensorName(name, part string) string {
	if part == "data" {
		return name
	}
	return name + "." + part
}

func (tcastLayout) Encode(name string, t *tcast.Tensor, meta map[string]string) ([]safetensors.Tensor, error) {
	c, err := tcast.Compress(t)
	if err != nil {
		return nil, err
	}
	info := WeightInfo{DataType: c.DataType.Code(), Name: c.DataType.Name(), Shape: c.Shape, Axis: c.Axis,
		ScaleMode: c.Mode.String(), Bits: c.BitsPerValue(), Parts: map[string]PartInfo{}}
	var out []safetensors.Tensor
	for _, p := range c.Parts() {
		tn := partTensorName(name, p.Name)
		pi := PartInfo{Tensor: tn, Bits: p.Bits, Shape: p.Shape, Packed: p.Packed}
		if p.Format != nil {
			pi.Format = p.Format.Name()
		}
		info.Parts[p.Name] = pi
		st := safetensors.Tensor{Name: tn, Data: p.Bytes}
		switch {
		case p.Packed:
			st.DType, st.Shape = safetensors.U8, []int{len(p.Bytes)}
		case p.StorageBytes() == 1:
			st.DType, st.Shape = safetensors.U8, p.Shape
		case p.StorageBytes() == 2:
			st.DType, st.Shape = safetensors.U16, p.Shape
		default:
			st.DType, st.Shape = safetensors.U32, p.Shape
		}
		out = append(out, st)
	}
	js, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	meta[MetaPrefix+name] = string(js)
	meta["tcast.format"] = FormatVersion
	return out, nil
}

// ReadWeightInfo returns the description of converted weight name from
// metadata, and false when there is none.
func ReadWeightInfo(meta map[string]string, name string) (*WeightInfo, bool, error) {
	js, ok := meta[MetaPrefix+name]
	if !ok {
		return nil, false, nil
	}
	var info WeightInfo
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		return nil, true, fmt.Errorf("layout: metadata %s%s: %v", MetaPrefix, name, err)
	}
	return &info, true, nil
}

func (tcastLayout) Decode(name string, src Source) (*tcast.Tensor, bool, error) {
	info, ok, err := ReadWeightInfo(src.Metadata(), name)
	if !ok || err != nil {
		return nil, ok, err
	}
	fail := func(format string, args ...any) (*tcast.Tensor, bool, error) {
		return nil, true, fmt.Errorf("layout: weight %s: %s", name, fmt.Sprintf(format, args...))
	}
	dt, err := tcast.Lookup(info.DataType)
	if err != nil {
		return fail("%v", err)
	}
	mode, err := scale.ParseMode(info.ScaleMode)
	if err != nil {
		return fail("%v", err)
	}
	t := &tcast.Tensor{DataType: dt, Form: tcast.Compressed, Shape: slices.Clone(info.Shape), Axis: info.Axis, Mode: mode}
	slots := map[string]**tcast.Part{"data": &t.Data, "scale": &t.Scale, "zero": &t.Zero,
		"tensor_scale": &t.TensorScale, "meta": &t.Meta, "mask": &t.Mask}
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
				return fail("part %s: %v", pname, err)
			}
		}
		*slot = p
	}
	// dtype.Parse returns one *Format per canonical name, so the parts' formats
	// compare equal to the datatype's in Validate.
	a, err := tcast.Expand(t)
	if err != nil {
		return fail("%v", err)
	}
	return a, true, nil
}

func (tcastLayout) Files(*tcast.DataType, []Converted, []string, []byte) (map[string][]byte, error) {
	return nil, nil
}
