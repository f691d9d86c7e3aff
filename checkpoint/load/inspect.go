package load

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
)

// Report describes a checkpoint: its stored tensors, its quantized weights,
// value statistics and totals. Inspect builds it; `tcast inspect` prints it.
type Report struct {
	File   string   `json:"file"`
	Shards []string `json:"shards,omitempty"`
	Layout string   `json:"layout"`
	// Metadata is the __metadata__ without this module's own keys; for a
	// GGUF file, every key/value with its value as gguf.Value.Summary
	// formats it (strings as they are, scalars as their number or bool,
	// arrays as [N]type and their first elements).
	Metadata map[string]string `json:"metadata,omitempty"`
	// MetadataTypes gives the GGUF value type of each key of Metadata
	// ("uint32", "string", "[392]string"); nil for safetensors.
	MetadataTypes map[string]string `json:"metadata_types,omitempty"`
	// ScaleSearch says that the converted weights' block scales were
	// chosen by the scale search (tcast.Options.ScaleSearch; the
	// tcast.scale_search key) rather than by their datatypes' rule.
	ScaleSearch bool           `json:"scale_search,omitempty"`
	Tensors     []StoredTensor `json:"tensors"`
	Converted   []Weight       `json:"converted,omitempty"`
	Totals      Totals         `json:"totals"`
}

// StoredTensor describes one stored tensor.
type StoredTensor struct {
	Name   string  `json:"name"`
	DType  string  `json:"dtype"` // safetensors dtype or ggml type
	Shape  []int   `json:"shape"`
	Bytes  int64   `json:"bytes"`
	Shard  string  `json:"shard,omitempty"`
	PartOf *PartOf `json:"part_of,omitempty"`
	Stats  *Stats  `json:"stats,omitempty"`
	// Density is the fraction of kept flags of a mask part.
	Density *float64 `json:"density,omitempty"`
}

// PartOf names the quantized weight a stored tensor is a part of.
type PartOf struct {
	Weight   string `json:"weight"`
	DataType string `json:"datatype"`
	Part     string `json:"part"` // data, scale, zero, tensor_scale, meta, mask, or the tensor's suffix
}

// Weight describes one quantized weight.
type Weight struct {
	Name         string            `json:"name"`
	DataType     string            `json:"datatype"`      // registered name
	Code         string            `json:"datatype_code"` // the code tcast.Lookup accepts
	Shape        []int             `json:"shape"`         // in the module's orientation
	Axis         int               `json:"axis"`          // the scaled axis, as stored
	ScaleMode    string            `json:"scale_mode"`
	BitsPerValue float64           `json:"bits_per_value"`
	Parts        map[string]string `json:"parts"` // part → stored tensor
	// Rotation is the rotation the weight's values had before the cast
	// ("hadamard:32"; Info.Rotation), which reading them undoes; "" for none.
	Rotation string `json:"rotation,omitempty"`
	// Stats are those of the dequantized weight.
	Stats   *Stats   `json:"dequantized,omitempty"`
	Density *float64 `json:"mask_density,omitempty"`
}

// Totals sums the report. Parameters counts the elements of the logical
// tensors.
type Totals struct {
	Tensors    int   `json:"tensors"`
	Bytes      int64 `json:"bytes"`      // tensor data
	FileBytes  int64 `json:"file_bytes"` // whole files, headers included
	Parameters int64 `json:"parameters"`
	Converted  int   `json:"converted_weights"`
}

// Stats summarizes float values. Min, Max, Mean and Std are over the finite
// values (null when there are none); Zeros is the fraction of all values
// that are ±0.
type Stats struct {
	Count int64    `json:"count"`
	Min   *float64 `json:"min"`
	Max   *float64 `json:"max"`
	Mean  *float64 `json:"mean"`
	Std   *float64 `json:"std"`
	Zeros float64  `json:"zeros"`
	NaN   int64    `json:"nan"`
	Inf   int64    `json:"inf"`
}

// computeStats returns the statistics of v.
func computeStats(v []float32) *Stats {
	s := &Stats{Count: int64(len(v))}
	lo, hi := math.Inf(1), math.Inf(-1)
	var sum float64
	var zeros, finite int64
	for _, x := range v {
		switch {
		case x != x:
			s.NaN++
			continue
		case math.IsInf(float64(x), 0):
			s.Inf++
			continue
		case x == 0:
			zeros++
		}
		finite++
		f := float64(x)
		sum += f
		lo, hi = min(lo, f), max(hi, f)
	}
	if len(v) > 0 {
		s.Zeros = float64(zeros) / float64(len(v))
	}
	if finite == 0 {
		return s
	}
	mean := sum / float64(finite)
	var ss float64
	for _, x := range v {
		if d := float64(x) - mean; !math.IsNaN(d) && !math.IsInf(d, 0) {
			ss += d * d
		}
	}
	std := math.Sqrt(ss / float64(finite))
	s.Min, s.Max, s.Mean, s.Std = &lo, &hi, &mean, &std
	return s
}

// maskDensity returns the fraction of set flags among the n logical elements
// of a mask part: LSB-first bits when packed, one byte per flag otherwise.
func maskDensity(b []byte, n int, packed bool) (float64, error) {
	if n < 0 {
		return 0, fmt.Errorf("mask of %d flags", n)
	}
	if n == 0 {
		return 0, nil
	}
	var set int
	if packed {
		if len(b) < (n+7)/8 {
			return 0, fmt.Errorf("mask holds %d bytes, want %d for %d flags", len(b), (n+7)/8, n)
		}
		for _, x := range b[:n/8] {
			set += bits.OnesCount8(x)
		}
		if r := n % 8; r != 0 {
			set += bits.OnesCount8(b[n/8] & (1<<r - 1))
		}
	} else {
		if len(b) < n {
			return 0, fmt.Errorf("mask holds %d bytes, want %d", len(b), n)
		}
		for _, x := range b[:n] {
			if x != 0 {
				set++
			}
		}
	}
	return float64(set) / float64(n), nil
}

// InspectOptions control Inspect; the zero value reads the headers only.
type InspectOptions struct {
	// Stats computes value statistics of every float tensor and dequantized
	// weight (reads every tensor, on all cores).
	Stats bool
}

// Inspect builds the report of checkpoint c.
func Inspect(c *Checkpoint, opts InspectOptions) (*Report, error) {
	rep := &Report{File: c.File(), Shards: c.Shards(), Layout: c.Layout(), Metadata: layout.WithoutMetaKeys(c.meta),
		ScaleSearch: c.meta[layout.KeyScaleSearch] == layout.ScaleSearchOn}
	if c.gf != nil {
		all, types := map[string]string{}, map[string]string{}
		for _, kv := range c.gf.KV {
			all[kv.Key] = kv.Value.Summary()
			types[kv.Key] = kv.Value.Type().String()
			if kv.Value.Type() == gguf.ValueArray {
				types[kv.Key] = fmt.Sprintf("[%d]%v", kv.Value.Len(), kv.Value.Elem())
			}
		}
		rep.Metadata, rep.MetadataTypes = layout.WithoutMetaKeys(all), map[string]string{}
		for k := range rep.Metadata {
			rep.MetadataTypes[k] = types[k]
		}
	}
	if len(rep.Metadata) == 0 {
		rep.Metadata, rep.MetadataTypes = nil, nil
	}
	partOf := map[string]*PartOf{}
	var masks []maskPart
	var bitmasks []bitmaskPart
	for _, info := range c.tensors {
		if info.DataType == nil {
			continue
		}
		w := Weight{Name: info.Name, DataType: info.DataType.Name(), Code: info.DataType.Code(), Shape: slices.Clone(info.Shape),
			BitsPerValue: info.DataType.BitsPerValue(), Parts: map[string]string{}, Rotation: info.Rotation}
		parts := map[string]string{} // stored tensor → part
		if wi, ok, err := layout.ReadWeightInfo(c.meta, info.Name); ok && err == nil {
			w.Axis, w.ScaleMode, w.BitsPerValue = wi.Axis, wi.ScaleMode, wi.Bits
			for pn, pi := range wi.Parts {
				parts[pi.Tensor] = pn
				if pn == "mask" {
					masks = append(masks, maskPart{tensor: pi.Tensor, shape: pi.Shape, packed: pi.Packed})
				}
			}
		} else {
			w.Axis = len(info.Shape) - 1
			w.ScaleMode = "floor"
		}
		prefix := strings.TrimSuffix(info.Name, ".weight")
		for _, s := range info.Stored {
			p, ok := parts[s]
			if !ok {
				p = strings.TrimLeft(strings.TrimPrefix(s, prefix), "._")
				if p == "" {
					p = "data"
				}
			}
			w.Parts[p] = s
			partOf[s] = &PartOf{Weight: info.Name, DataType: w.DataType, Part: p}
		}
		if b, ok := w.Parts["bitmask"]; ok && c.lay != nil && c.lay.Name() == "compressed-tensors" {
			// A pruned weight (sparse-bitmask, sparse-24-bitmask): what it
			// stores per element, and the density of its bitmask, whose rows'
			// padding bits Open found clear.
			n, stored := int64(1), int64(0)
			for _, d := range info.Shape {
				n *= int64(d)
			}
			for _, s := range info.Stored {
				if i, ok := c.sindex[s]; ok {
					stored += c.stored[i].Size
				}
			}
			if n > 0 {
				w.BitsPerValue = float64(8*stored) / float64(n)
			}
			bitmasks = append(bitmasks, bitmaskPart{tensor: b, elements: n})
		}
		rep.Converted = append(rep.Converted, w)
	}
	rep.Totals = Totals{Tensors: len(c.stored), FileBytes: c.size, Converted: len(rep.Converted)}
	for _, st := range c.stored {
		typ, shard := c.StoredType(st.Name)
		t := StoredTensor{Name: st.Name, DType: typ, Shape: slices.Clone(st.Shape), Bytes: st.Size, Shard: shard, PartOf: partOf[st.Name]}
		if t.Shape == nil {
			t.Shape = []int{}
		}
		rep.Tensors = append(rep.Tensors, t)
		rep.Totals.Bytes += st.Size
	}
	for _, info := range c.tensors {
		n := int64(1)
		for _, d := range info.Shape {
			n *= int64(d)
		}
		rep.Totals.Parameters += n
	}
	slices.SortFunc(rep.Converted, func(a, b Weight) int { return naturalCompare(a.Name, b.Name) })
	byName := map[string]int{}
	for i, t := range rep.Tensors {
		byName[t.Name] = i
	}
	// setDensity gives the stored tensor and the weight whose part it is
	// their density.
	setDensity := func(tensor, part string, d float64) {
		if i, ok := byName[tensor]; ok {
			rep.Tensors[i].Density = &d
		}
		for i := range rep.Converted {
			if rep.Converted[i].Parts[part] == tensor {
				rep.Converted[i].Density = &d
			}
		}
	}
	// Mask densities need only the (small) mask bytes: always computed.
	for _, m := range masks {
		b, err := c.storedBytes(m.tensor)
		if err != nil {
			return nil, err
		}
		n := 1
		for _, d := range m.shape {
			if d < 0 || (d > 0 && n > len(b)*8/d+1) {
				n = -1 // a shape that no mask of these bytes has
				break
			}
			n *= d
		}
		d, err := maskDensity(b, n, m.packed)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", c.file, m.tensor, err)
		}
		setDensity(m.tensor, "mask", d)
	}
	for _, m := range bitmasks {
		b, err := c.storedBytes(m.tensor)
		if err != nil {
			return nil, err
		}
		set := int64(0)
		for _, x := range b {
			set += int64(bits.OnesCount8(x))
		}
		d := 0.0
		if m.elements > 0 {
			d = float64(set) / float64(m.elements)
		}
		setDensity(m.tensor, "bitmask", d)
	}
	if opts.Stats {
		if err := c.stats(rep, byName); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(rep.Tensors, func(a, b StoredTensor) int { return naturalCompare(a.Name, b.Name) })
	return rep, nil
}

// bitmaskPart is the bitmask of a pruned compressed-tensors weight of
// elements elements.
type bitmaskPart struct {
	tensor   string
	elements int64
}

type maskPart struct {
	tensor string
	shape  []int
	packed bool
}

// stats fills in the statistics of float tensors and quantized weights.
func (c *Checkpoint) stats(rep *Report, byName map[string]int) error {
	type job struct {
		name string
		dst  **Stats
	}
	var jobs []job
	for _, info := range c.tensors {
		if info.DataType != nil || !info.Float {
			continue
		}
		if i, ok := byName[info.Name]; ok {
			jobs = append(jobs, job{info.Name, &rep.Tensors[i].Stats})
		}
	}
	for i := range rep.Converted {
		jobs = append(jobs, job{rep.Converted[i].Name, &rep.Converted[i].Stats})
	}
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(jobs), 1)) {
		wg.Go(func() {
			for i := range next {
				v, _, err := c.Float32(jobs[i].name)
				if err != nil {
					errs[i] = err
					continue
				}
				*jobs[i].dst = computeStats(v)
				c.Release(jobs[i].name)
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// naturalCompare orders names with their digit runs compared as numbers, so
// model.layers.2 comes before model.layers.10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			i, j := digitRun(a), digitRun(b)
			da, db := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
			if c := len(da) - len(db); c != 0 {
				return c
			}
			if c := strings.Compare(da, db); c != 0 {
				return c
			}
			if c := i - j; c != 0 { // equal values: fewer leading zeros first
				return c
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
