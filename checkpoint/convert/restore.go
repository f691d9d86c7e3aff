package convert

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// Converted is an opened converted checkpoint: the input plus which of its
// tensors hold which converted weight.
type Converted struct {
	*Input
	Layout  layout.Layout
	Weights map[string][]string // converted weight → output tensors
	parts   map[string]string   // output tensor → its weight
	swapped map[string]bool     // weights stored with their last two axes swapped
}

// OpenConverted opens a checkpoint written by Convert.
func OpenConverted(path string) (*Converted, error) {
	in, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	meta := in.Metadata()
	c := &Converted{Input: in, parts: map[string]string{}}
	name, ok := meta[MetaLayout]
	if !ok {
		in.Close()
		return nil, fmt.Errorf("convert: %s: no %q in __metadata__: not written by tcast convert", path, MetaLayout)
	}
	if c.Layout, err = layout.Get(name); err != nil {
		in.Close()
		return nil, fmt.Errorf("convert: %s: %v", path, err)
	}
	if err := json.Unmarshal([]byte(meta[MetaWeights]), &c.Weights); err != nil {
		in.Close()
		return nil, fmt.Errorf("convert: %s: __metadata__ %s: %v", path, MetaWeights, err)
	}
	c.swapped = map[string]bool{}
	if js, ok := meta[MetaTransposed]; ok {
		var names []string
		if err := json.Unmarshal([]byte(js), &names); err != nil {
			in.Close()
			return nil, fmt.Errorf("convert: %s: __metadata__ %s: %v", path, MetaTransposed, err)
		}
		for _, n := range names {
			c.swapped[n] = true
		}
	}
	for w, ts := range c.Weights {
		for _, t := range ts {
			c.parts[t] = w
		}
	}
	return c, nil
}

// Weight returns the dequantized values of converted weight name.
func (c *Converted) Weight(name string) ([]float32, *tcast.Tensor, error) {
	t, ok, err := c.Layout.Decode(name, c.Input)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("convert: %s: weight %s: %v", c.Path, name, err)
	case !ok:
		return nil, nil, fmt.Errorf("convert: %s: weight %s: not found in the %s layout", c.Path, name, c.Layout.Name())
	}
	v, err := tcast.Decompress(t)
	if err != nil {
		return nil, nil, fmt.Errorf("convert: %s: weight %s: %v", c.Path, name, err)
	}
	return v, t, nil
}

// Names returns the checkpoint's logical tensors: converted weights under their
// source names and the kept tensors, in file order of their first tensor.
func (c *Converted) Names() []string {
	var out []string
	done := map[string]bool{}
	for _, t := range c.Tensors() {
		n := t.Name
		if w, ok := c.parts[n]; ok {
			n = w
		}
		if !done[n] {
			done[n] = true
			out = append(out, n)
		}
	}
	return out
}

// Values returns the float32 values and shape of logical tensor name, in the
// source's orientation.
func (c *Converted) Values(name string) ([]float32, []int, error) {
	if _, ok := c.Weights[name]; ok {
		v, t, err := c.Weight(name)
		if err != nil {
			return nil, nil, err
		}
		if c.swapped[name] && len(t.Shape) >= 2 {
			v, shape := layout.TransposeLast2(v, t.Shape)
			return v, shape, nil
		}
		return v, t.Shape, nil
	}
	info, _, ok := c.Tensor(name)
	if !ok {
		return nil, nil, fmt.Errorf("convert: %s: no tensor %s", c.Path, name)
	}
	v, err := c.Float32s(name)
	return v, info.Shape, err
}

// VerifyResult compares one tensor of a converted checkpoint with its source.
type VerifyResult struct {
	Name      string   `json:"name"`
	Converted bool     `json:"converted"`
	SQNR      *float64 `json:"sqnr_db"` // nil: exact, or an all-zero source
	MSE       float64  `json:"mse"`
	MaxAbsErr float64  `json:"max_abs_error"`
	// Lost counts finite source values that came back NaN or infinite; any is
	// a failure whatever the SQNR.
	Lost int `json:"nonfinite_outputs"`
}

// Verify dequantizes every tensor of the converted checkpoint conv and compares
// it with the same tensor of orig. Non-float tensors must match byte for byte.
func Verify(orig, conv string) ([]VerifyResult, error) {
	src, err := OpenInput(orig)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	c, err := OpenConverted(conv)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []VerifyResult
	have := map[string]bool{}
	for _, n := range c.Names() {
		have[n] = true
	}
	for _, ti := range src.Tensors() {
		if !have[ti.Name] {
			return nil, fmt.Errorf("convert: verify: %s has tensor %s, %s does not", orig, ti.Name, conv)
		}
		_, isWeight := c.Weights[ti.Name]
		r := VerifyResult{Name: ti.Name, Converted: isWeight}
		if !isFloat(ti.DType) {
			a, _ := src.Bytes(ti.Name)
			_, b, _ := c.Tensor(ti.Name)
			if !slices.Equal(a, b) {
				return nil, fmt.Errorf("convert: verify: tensor %s differs between %s and %s", ti.Name, orig, conv)
			}
			out = append(out, r)
			continue
		}
		want, err := src.Float32s(ti.Name)
		if err != nil {
			return nil, err
		}
		got, shape, err := c.Values(ti.Name)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(shape, ti.Shape) {
			return nil, fmt.Errorf("convert: verify: tensor %s has shape %v in %s and %v in %s", ti.Name, ti.Shape, orig, shape, conv)
		}
		e := Compare(want, got)
		r.SQNR, r.MSE, r.MaxAbsErr, r.Lost = e.SQNR, e.MSE, e.MaxAbs, e.Lost
		out = append(out, r)
	}
	return out, nil
}

// Decompress writes a plain safetensors checkpoint at out holding every
// logical tensor of the converted checkpoint in: converted weights dequantized
// to to (float32, float16 or bfloat16), kept tensors as they are.
func Decompress(in, out string, to *dtype.Format, force bool) error {
	if to == nil {
		return fmt.Errorf("convert: decompress: no target format (want float32, float16 or bfloat16)")
	}
	c, err := OpenConverted(in)
	if err != nil {
		return err
	}
	defer c.Close()
	var st safetensors.DType
	switch to.Name() {
	case "float32":
		st = safetensors.F32
	case "float16":
		st = safetensors.F16
	case "bfloat16":
		st = safetensors.BF16
	default:
		return fmt.Errorf("convert: decompress to %s: want float32, float16 or bfloat16", to.Name())
	}
	if !force && exists(out) {
		return fmt.Errorf("convert: %s exists (use -force to replace it)", out)
	}
	names := c.Names()
	var specs []safetensors.TensorSpec
	for _, n := range names {
		if _, ok := c.Weights[n]; ok {
			info, ok, err := layout.ReadWeightInfo(c.Metadata(), n)
			var shape []int
			if err == nil && ok && !c.swapped[n] {
				shape = info.Shape
			} else {
				// Other layouts: the decoded parts give the shape (no dequantizing).
				t, ok, err := c.Layout.Decode(n, c.Input)
				if err == nil && !ok {
					err = fmt.Errorf("weight %s not found in the %s layout", n, c.Layout.Name())
				}
				if err != nil {
					return fmt.Errorf("convert: %s: %v", in, err)
				}
				shape = t.Shape
				if c.swapped[n] {
					shape = layout.SwapLast2(shape)
				}
			}
			specs = append(specs, safetensors.TensorSpec{Name: n, DType: st, Shape: shape})
			continue
		}
		info, _, _ := c.Tensor(n)
		specs = append(specs, safetensors.TensorSpec{Name: info.Name, DType: info.DType, Shape: info.Shape})
	}
	meta := map[string]string{}
	for k, v := range c.Metadata() {
		if k != MetaLayout && k != MetaWeights && k != MetaDataType && k != "tcast.format" && !strings.HasPrefix(k, layout.MetaPrefix) {
			meta[k] = v
		}
	}
	w, err := safetensors.Create(out, specs, meta)
	if err != nil {
		return err
	}
	for _, n := range names {
		var data []byte
		if _, ok := c.Weights[n]; ok {
			v, _, err := c.Values(n)
			if err != nil {
				w.Abort()
				return err
			}
			data = floatBytes(v, to)
		} else {
			_, data, _ = c.Tensor(n)
		}
		if err := w.Write(n, data); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// floatBytes encodes v little-endian in float32, float16 or bfloat16.
func floatBytes(v []float32, to *dtype.Format) []byte {
	if to.Bits() == 32 {
		out := make([]byte, 4*len(v))
		for i, x := range v {
			b := math.Float32bits(x)
			out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
		}
		return out
	}
	codes := make([]uint16, len(v))
	dtype.EncodeSlice(to, codes, v, dtype.Options{Overflow: dtype.OverflowIEEE})
	out := make([]byte, 2*len(v))
	for i, c := range codes {
		out[2*i], out[2*i+1] = byte(c), byte(c>>8)
	}
	return out
}
