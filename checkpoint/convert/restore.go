package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/layout"
	"github.com/tensorcast-go/tensorcast/checkpoint/load"
	"github.com/tensorcast-go/tensorcast/checkpoint/safetensors"
	"github.com/tensorcast-go/tensorcast/dtype"
)

// DecompressOptions control Decompress. The zero value writes float32 and
// refuses to replace an existing output.
type DecompressOptions struct {
	// To is the float format of dequantized tensors: float32 (nil),
	// float16 or bfloat16.
	To *dtype.Format
	// Force replaces an existing output.
	Force bool
}

// DecompressResult reports what Decompress wrote.
type DecompressResult struct {
	Input, Output string
	Layout        string // the input's layout
	Tensors       int    // tensors written
	Dequantized   int    // of which dequantized
}

// Decompress writes a plain safetensors checkpoint at out (a .safetensors
// file, or a directory for model.safetensors and the input's config.json
// without its quantization_config) holding every logical tensor of
// the checkpoint in (any layout load.Open reads): quantized tensors
// dequantized to opts.To, the others as they are.
func Decompress(in, out string, opts DecompressOptions) (*DecompressResult, error) {
	st, err := decompressDType(opts.To)
	if err != nil {
		return nil, err
	}
	dest, isDir, err := decompressDest(out)
	if err != nil {
		return nil, err
	}
	c, err := load.Open(in)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := checkOutput(dest, c.Files(), in); err != nil {
		return nil, err
	}
	specs, err := plainSpecs(in, c.Tensors(), st)
	if err != nil {
		return nil, err
	}
	stage, err := beginOutput(dest, isDir, opts.Force)
	if err != nil {
		return nil, err
	}
	defer stage.Abort()
	path := stage.Path()
	if isDir {
		path = filepath.Join(path, "model.safetensors")
	}
	if err := writePlain(c, specs, path); err != nil {
		return nil, err
	}
	if isDir && c.Config() != nil {
		// A directory output is a loadable checkpoint: its config without
		// the quantization the weights no longer have.
		cfg, err := layout.PlainConfig(c.Config())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in, err)
		}
		if err := writeNew(filepath.Join(stage.Path(), "config.json"), cfg); err != nil {
			return nil, err
		}
	}
	if err := stage.Commit(); err != nil {
		return nil, err
	}
	res := &DecompressResult{Input: in, Output: dest, Layout: c.Layout(), Tensors: len(specs)}
	for _, info := range c.Tensors() {
		if info.DType == 0 {
			res.Dequantized++
		}
	}
	return res, nil
}

// decompressDType returns the safetensors dtype of DecompressOptions.To.
func decompressDType(to *dtype.Format) (safetensors.DType, error) {
	if to == nil {
		return safetensors.F32, nil
	}
	switch to.Name() {
	case "float32":
		return safetensors.F32, nil
	case "float16":
		return safetensors.F16, nil
	case "bfloat16":
		return safetensors.BF16, nil
	}
	return 0, fmt.Errorf("convert: DecompressOptions.To is %s; want float32, float16 or bfloat16", to.Name())
}

// decompressDest returns where Decompress writes out, and whether that is
// a directory: a .safetensors file, else a directory.
func decompressDest(out string) (string, bool, error) {
	switch ext := strings.ToLower(filepath.Ext(out)); {
	case ext == ".safetensors":
		return out, false, nil
	case fileExts[ext] && !strings.HasSuffix(out, string(os.PathSeparator)):
		return "", false, &OutputError{Path: out, Layout: "safetensors", Reason: "names a " + ext + " file, " +
			"and Decompress writes safetensors", Want: "a directory or a .safetensors file"}
	}
	return out, true, nil
}

// plainSpecs declares the plain output of every tensor: quantized ones as
// st, the others as they are stored.
func plainSpecs(in string, infos []load.Info, st safetensors.DType) ([]safetensors.TensorSpec, error) {
	specs := make([]safetensors.TensorSpec, len(infos))
	for i, info := range infos {
		specs[i] = safetensors.TensorSpec{Name: info.Name, DType: info.DType, Shape: info.Shape}
		if info.DType == 0 {
			if !info.Float {
				return nil, fmt.Errorf("%s: tensor %s (%s) cannot be dequantized", in, info.Name, info.Type)
			}
			specs[i].DType = st
		}
	}
	return specs, nil
}

// writePlain writes the tensors of c as specs declares them to the
// safetensors file path, one at a time.
func writePlain(c *load.Checkpoint, specs []safetensors.TensorSpec, path string) error {
	meta := layout.WithoutMetaKeys(c.Metadata())
	if c.GGUF() != nil {
		meta = nil // GGUF key/values are not safetensors metadata
	}
	w, err := safetensors.Create(path, specs, meta)
	if err != nil {
		return err
	}
	for i, info := range c.Tensors() {
		var data []byte
		if info.DType != 0 {
			data, err = c.Bytes(info.Name)
		} else {
			var v []float32
			if v, _, err = c.Float32(info.Name); err == nil {
				data = floatBytes(v, specs[i].DType)
			}
		}
		if err == nil {
			err = w.Write(info.Name, data)
		}
		if err != nil {
			w.Abort()
			return err
		}
		c.Release(info.Name)
	}
	return w.Close()
}

// floatBytes encodes v little-endian as d (F32, F16 or BF16), rounding to
// nearest even and keeping overflow as infinity.
func floatBytes(v []float32, d safetensors.DType) []byte {
	if d == safetensors.F32 {
		return float32Bytes(v)
	}
	f := dtype.MustParse("float16")
	if d == safetensors.BF16 {
		f = dtype.MustParse("bfloat16")
	}
	codes := make([]uint16, len(v))
	dtype.EncodeSlice(f, codes, v, dtype.Options{Overflow: dtype.OverflowIEEE})
	out := make([]byte, 2*len(v))
	for i, c := range codes {
		out[2*i], out[2*i+1] = byte(c), byte(c>>8)
	}
	return out
}
