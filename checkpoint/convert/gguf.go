package convert

import (
	"encoding/json"
	"fmt"
	"github.com/tensorcast-go/tensorcast/internal/ordered"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tensorcast-go/tensorcast/checkpoint/gguf"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/scale"
	"github.com/tensorcast-go/tensorcast/tcast"
)

// GGUFTypes are the -dtype values of the gguf layout: MXFP4 through our OCP MX
// cast, Q8_0 and Q4_0 through ggml's own quantizers.
var GGUFTypes = map[string]gguf.Type{"mxfp4": gguf.TypeMXFP4, "q8_0": gguf.TypeQ8_0, "q4_0": gguf.TypeQ4_0}

// keptGGUFType maps a kept tensor's dtype to the GGUF type holding it as is.
var keptGGUFType = map[safetensors.DType]gguf.Type{
	safetensors.F32: gguf.TypeF32, safetensors.F16: gguf.TypeF16, safetensors.BF16: gguf.TypeBF16,
	safetensors.F64: gguf.TypeF64, safetensors.I8: gguf.TypeI8, safetensors.I16: gguf.TypeI16,
	safetensors.I32: gguf.TypeI32, safetensors.I64: gguf.TypeI64,
}

// ToGGUF converts the checkpoint at inPath to a GGUF v3 file at out, casting the
// chosen weights to typ ("mxfp4", "q8_0" or "q4_0") along their last
// (innermost) axis and keeping the other tensors in their own type. The
// architecture key comes from config.json's model_type when present. The file
// is streamed through a temporary file and renamed, with at most Workers+1
// tensors in memory, as for the safetensors layouts.
func ToGGUF(inPath, out, typ string, opts Options) (*Result, error) {
	start := time.Now()
	gt, ok := GGUFTypes[typ]
	if !ok {
		return nil, fmt.Errorf("convert: gguf layout: -dtype %q: want mxfp4, q8_0 or q4_0", typ)
	}
	if opts.ShardSize > 0 {
		return nil, fmt.Errorf("convert: gguf layout: -shard-size applies to safetensors output only")
	}
	if opts.Mode != scale.Floor && gt != gguf.TypeMXFP4 {
		return nil, fmt.Errorf("convert: gguf layout: -scale-mode applies to mxfp4 only; q8_0 and q4_0 use ggml's own scales")
	}
	if opts.Axis != -1 {
		return nil, fmt.Errorf("convert: gguf layout: blocks run along the innermost axis; -axis must be -1")
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if strings.HasSuffix(out, string(os.PathSeparator)) || !strings.HasSuffix(out, ".gguf") {
		out = filepath.Join(out, "model.gguf")
	}
	if !opts.Force && exists(out) {
		return nil, fmt.Errorf("convert: %s exists (use -force to replace it)", out)
	}
	in, err := OpenInput(inPath)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	res := &Result{Input: inPath, Output: out, Layout: "gguf", DataType: typ}
	tensors := in.Tensors()
	results := make([]TensorResult, len(tensors))
	data := make([][]byte, len(tensors))
	types := make([]gguf.Type, len(tensors))
	cast := make([]bool, len(tensors))
	var dt *tcast.DataType
	if gt == gguf.TypeMXFP4 {
		dt = tcast.MustLookup("mxfp4")
	}
	var w gguf.Writer
	arch := "tcast"
	var cfg struct {
		ModelType string `json:"model_type"`
	}
	if in.config != nil && json.Unmarshal(in.config, &cfg) == nil && cfg.ModelType != "" {
		arch = cfg.ModelType
	}
	for _, kv := range []struct {
		k string
		v gguf.Value
	}{{"general.architecture", gguf.String(arch)}, {"general.name", gguf.String(filepath.Base(inPath))},
		{"tcast.datatype", gguf.String(typ)}} {
		if err := w.AddKV(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	// Plan: every tensor's GGUF type, declared before any data is written.
	for i, ti := range tensors {
		results[i] = TensorResult{Name: ti.Name, Shape: ti.Shape, Source: ti.DType.String(), BytesIn: ti.Size}
		res.BytesIn += ti.Size
		if len(ti.Name) > gguf.MaxNameLen {
			return nil, fmt.Errorf("convert: %s: tensor %s: GGUF names hold at most %d bytes", inPath, ti.Name, gguf.MaxNameLen)
		}
		cast[i], _ = decideGGUF(ti, &opts)
		types[i] = gt
		if cast[i] {
			results[i].DataType = typ
		} else {
			kt, ok := keptGGUFType[ti.DType]
			if !ok {
				return nil, fmt.Errorf("convert: %s: tensor %s: no GGUF type holds %s", inPath, ti.Name, ti.DType)
			}
			types[i] = kt
			results[i].Bits = float64(ti.DType.BitSize())
		}
		if err := w.DeclareTensor(ti.Name, types[i], ti.Shape); err != nil {
			return nil, fmt.Errorf("convert: %s: tensor %s: %v", inPath, ti.Name, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("convert: %v", err)
	}
	stream, err := w.Create(out)
	if err != nil {
		return nil, err
	}
	var bytesDone int64
	err = ordered.Run(len(tensors), opts.Workers, opts.Workers+1, func(i int) error {
		ti := tensors[i]
		var err error
		if cast[i] {
			data[i], err = castGGUF(in, ti, gt, dt, opts.Mode, &results[i])
		} else {
			data[i], err = in.Bytes(ti.Name)
		}
		if err != nil {
			return fmt.Errorf("convert: %s: tensor %s: %v", inPath, ti.Name, err)
		}
		return nil
	}, func(i int) error {
		if err := stream.WriteTensor(tensors[i].Name, data[i]); err != nil {
			return err
		}
		results[i].BytesOut = int64(len(data[i]))
		data[i] = nil
		in.Release(tensors[i].Name)
		res.Tensors = append(res.Tensors, results[i])
		res.BytesOut += results[i].BytesOut
		bytesDone += tensors[i].Size
		if opts.Progress != nil {
			opts.Progress(Progress{Tensors: i + 1, TotalTensors: len(tensors), Bytes: bytesDone, TotalBytes: res.BytesIn, Elapsed: time.Since(start)})
		}
		return nil
	})
	if err != nil {
		stream.Abort()
		return nil, err
	}
	if err := stream.Close(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// decideGGUF is Decide for the gguf layout: blocks of 32 along the innermost
// axis, so that axis must be a multiple of 32.
func decideGGUF(t safetensors.TensorInfo, opts *Options) (bool, string) {
	if ok, why := decideBase(t, opts, 32); !ok {
		return false, why
	}
	if t.Shape[len(t.Shape)-1]%32 != 0 {
		return false, "innermost axis not a multiple of 32"
	}
	if len(t.Shape) > gguf.MaxDims {
		return false, "more than 4 dimensions"
	}
	return true, ""
}

// castGGUF quantizes one tensor to a GGUF block type and fills in its report.
func castGGUF(in *Input, ti safetensors.TensorInfo, gt gguf.Type, dt *tcast.DataType, mode scale.Mode, r *TensorResult) ([]byte, error) {
	x, err := in.Float32s(ti.Name)
	if err != nil {
		return nil, err
	}
	n := len(x)
	size, ok := gt.Size(int64(n))
	if !ok {
		return nil, fmt.Errorf("%d elements do not fill whole %v blocks", n, gt)
	}
	out := make([]byte, size)
	var back []float32
	switch gt {
	case gguf.TypeMXFP4:
		t, err := tcast.Cast(x, ti.Shape, dt, &tcast.Options{Form: tcast.Actual, Axis: -1, Mode: mode})
		if err != nil {
			return nil, err
		}
		gguf.PackMXFP4(out, t.Data.Bytes, t.Scale.Bytes)
		if back, err = tcast.Decompress(t); err != nil {
			return nil, err
		}
	case gguf.TypeQ8_0:
		back = make([]float32, n)
		gguf.QuantizeQ8_0(out, x)
		gguf.DequantizeQ8_0(back, out)
	case gguf.TypeQ4_0:
		back = make([]float32, n)
		gguf.QuantizeQ4_0(out, x)
		gguf.DequantizeQ4_0(back, out)
	}
	r.Bits = float64(len(out)) * 8 / float64(n)
	r.BytesOut = int64(len(out))
	r.setErrors(Compare(x, back))
	return out, nil
}
