package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/tensorcast-go/tensorcast/checkpoint/convert"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/scale"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

const decompressUsage = "tcast decompress -o OUT.npy [-to f32|f16|bf16] [-force] DIR\n" +
	"tcast decompress -o OUT.safetensors|OUTDIR [-to f32|f16|bf16] [-force] CHECKPOINT\n\n" +
	"With a checkpoint in any layout tcast reads (tcast convert's output in every layout, GGUF, and\n" +
	"compressed-tensors, gpt-oss, ModelOpt or fp8-block files written by other tools), writes a plain\n" +
	"safetensors checkpoint: quantized weights dequantized, other tensors as they are.\n" +
	"Rebuilds the values of a tensor from a directory written by tcast cast, using only its\n" +
	"info.json, packed.npy and part files (scale.npy, zero.npy, tensor_scale.npy, meta.npy,\n" +
	"mask.npy and the *_codes.npy of parts wider than 8 bits). With -to f32 the output equals\n" +
	"DIR/dequant.npy bit for bit. -to bf16 writes the bfloat16 bit patterns as a uint16 array\n" +
	"(NumPy has no bfloat16; view them with ml_dtypes: a.view(ml_dtypes.bfloat16))"

// storedInfo is the part of info.json that tcast decompress reads.
type storedInfo struct {
	DataType struct {
		Name string `json:"name"`
		Code string `json:"code"`
	} `json:"datatype"`
	Shape     *[]int     `json:"shape"`
	Axis      *int       `json:"axis"`
	ScaleMode string     `json:"scale_mode"`
	Form      string     `json:"form"`
	Parts     []partInfo `json:"parts"`
}

// isCastDir reports whether path should be read as a directory written by tcast
// cast rather than a converted checkpoint: anything but a file or a directory
// holding .safetensors files or an index.
func isCastDir(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return err != nil
	}
	if _, err := os.Stat(filepath.Join(path, "info.json")); err == nil {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(path, "*.safetensors"))
	j, _ := filepath.Glob(filepath.Join(path, "*.safetensors.index.json"))
	return len(m)+len(j) == 0
}

func runDecompress(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("decompress", flag.ContinueOnError)
	out := fs.String("o", "", "output `OUT.npy`")
	to := fs.String("to", "f32", "output type: f32 (float32), f16 (float16) or bf16 (bfloat16; bits as uint16 in .npy)")
	force := fs.Bool("force", false, "replace an existing output checkpoint")
	pos, err := parseArgs(fs, decompressUsage, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return usagef("want exactly one input DIR, got %d", len(pos))
	case *out == "":
		return usagef("-o OUT.npy is required")
	}
	var toFormat *dtype.Format
	switch *to {
	case "f32":
	case "f16":
		toFormat, _ = dtype.Parse("float16")
	case "bf16":
		toFormat, _ = dtype.Parse("bfloat16")
	default:
		return usagef("-to %q: want f32, f16 or bf16", *to)
	}
	dir := pos[0]
	if !isCastDir(dir) {
		// A checkpoint: back to plain safetensors.
		if strings.EqualFold(filepath.Ext(*out), ".npy") {
			return usagef("-o %s: %s is a checkpoint, which decompresses to safetensors: give a .safetensors file or a directory", *out, dir)
		}
		return convert.Decompress(dir, *out, convert.DecompressOptions{To: toFormat, Force: *force})
	}
	d, err := loadDir(dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	outType := "float32"
	if toFormat == nil {
		err = npy.WriteSlice(&b, d.shape, d.values)
	} else {
		h := make([]uint16, len(d.values))
		dtype.EncodeSlice(toFormat, h, d.values, dtype.Options{Overflow: dtype.OverflowIEEE})
		if *to == "f16" {
			outType = "float16"
			err = npy.WriteFloat16(&b, d.shape, h)
		} else {
			outType = "bfloat16 bits as uint16"
			err = npy.WriteSlice(&b, d.shape, h)
		}
	}
	if err != nil {
		return err
	}
	if err := writeAll(filepath.Dir(*out), []outFile{{filepath.Base(*out), b.Bytes()}}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d values %v of %s (%.4g bits per value) → %s (%s)\n",
		dir, len(d.values), d.shape, d.name, d.bitsPerValue, *out, outType)
	return nil
}

// loaded is a tensor rebuilt from a cast directory.
type loaded struct {
	name         string
	shape        []int
	values       []float32
	bitsPerValue float64
}

// loadDir reads info.json and the part files of dir and decompresses them.
func loadDir(dir string) (*loaded, error) {
	infoPath := filepath.Join(dir, "info.json")
	raw, err := os.ReadFile(infoPath)
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", infoPath, fmt.Sprintf(format, args...))
	}
	var in storedInfo
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, bad("malformed: %v", err)
	}
	switch {
	case in.DataType.Code == "":
		return nil, bad("no datatype code")
	case in.Shape == nil:
		return nil, bad("no shape")
	case in.Axis == nil:
		return nil, bad("no axis")
	case in.Form != tc.Compressed.String():
		return nil, bad("form %q, want %q", in.Form, tc.Compressed.String())
	}
	shape := *in.Shape
	n, err := checkedProduct(shape)
	if err != nil {
		return nil, bad("shape: %v", err)
	}
	mode := scale.Floor
	if in.ScaleMode != "" {
		if mode, err = scale.ParseMode(in.ScaleMode); err != nil {
			return nil, bad("%v", err)
		}
	}
	// The datatype comes from its code; the name is kept when it means the same.
	var plain *dtype.Format
	dt, err := tc.Lookup(in.DataType.Code)
	if err != nil {
		f, perr := dtype.Parse(in.DataType.Code)
		if perr != nil {
			return nil, bad("datatype code %q: %s", in.DataType.Code, strings.TrimPrefix(err.Error(), "tcast: "))
		}
		plain = f
	} else if named, err := tc.Lookup(in.DataType.Name); err == nil && named.Code() == dt.Code() {
		dt = named
	}

	t := &tc.Tensor{DataType: dt, Form: tc.Compressed, Shape: slices.Clone(shape), Axis: *in.Axis, Mode: mode}
	slots := map[string]**tc.Part{"data": &t.Data, "scale": &t.Scale, "zero": &t.Zero,
		"tensor_scale": &t.TensorScale, "meta": &t.Meta, "mask": &t.Mask}
	for _, pi := range in.Parts {
		slot, ok := slots[pi.Name]
		switch {
		case !ok:
			return nil, bad("unknown part %q", pi.Name)
		case *slot != nil:
			return nil, bad("part %q listed twice", pi.Name)
		}
		f, has := partFormat(dt, plain, pi.Name)
		if !has {
			return nil, bad("part %q: datatype %s has none", pi.Name, in.DataType.Code)
		}
		p, err := newStoredPart(pi, f)
		if err != nil {
			return nil, bad("part %q: %v", pi.Name, err)
		}
		if !localName(pi.File) || (pi.CodesFile != "" && !localName(pi.CodesFile)) {
			return nil, bad("part %q: file names must name files in %s", pi.Name, dir)
		}
		if pi.Name == "data" {
			err = readPacked(dir, pi, p)
		} else {
			err = readPart(dir, pi, p)
		}
		if err != nil {
			return nil, err
		}
		*slot = p
	}
	if t.Data == nil {
		return nil, bad("no data part")
	}
	res := &loaded{shape: shape}
	if plain != nil {
		// A number format that is no tcast datatype (an integer or exponent
		// format cast unscaled): decode the codes directly.
		if !slices.Equal(t.Data.Shape, partShape(shape)) {
			return nil, bad("data part has shape %v, want %v", t.Data.Shape, partShape(shape))
		}
		res.name, res.bitsPerValue = plain.Name(), float64(plain.Bits())
		res.values, err = decodePlain(plain, t.Data, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, "packed.npy"), err)
		}
		return res, nil
	}
	if err := tc.Validate(t); err != nil {
		return nil, bad("%s", strings.TrimPrefix(err.Error(), "tcast: "))
	}
	if res.values, err = tc.Decompress(t); err != nil {
		return nil, bad("%s", strings.TrimPrefix(err.Error(), "tcast: "))
	}
	res.name, res.bitsPerValue = dt.Name(), t.BitsPerValue()
	return res, nil
}

// localName reports whether name is a file name without directories.
func localName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.Base(name) == name && !strings.ContainsAny(name, `/\`)
}

// checkedProduct returns the number of elements of shape, rejecting negative
// dimensions and counts too large to address.
func checkedProduct(shape []int) (int, error) {
	p := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension in %v", shape)
		}
		if d != 0 && p > (1<<56)/d {
			return 0, fmt.Errorf("%v has too many elements", shape)
		}
		p *= d
	}
	return p, nil
}

// partFormat returns the number format of a part of the datatype (nil for meta
// and mask) and whether the datatype can have the part at all.
func partFormat(dt *tc.DataType, plain *dtype.Format, name string) (*dtype.Format, bool) {
	if dt == nil {
		return plain, name == "data"
	}
	spec := dt.Spec()
	switch name {
	case "data":
		return dt.Elem(), true
	case "scale":
		return spec.Scale, spec != nil
	case "zero":
		return spec.Zero, spec != nil && spec.Zero != nil
	case "tensor_scale":
		return spec.TensorScale, spec != nil && spec.TensorScale != nil
	case "meta", "mask":
		return nil, spec != nil
	}
	return nil, false
}

// newStoredPart checks a part's description against its format and returns the
// part, empty of bytes, as the Compressed form holds it.
func newStoredPart(pi partInfo, f *dtype.Format) (*tc.Part, error) {
	if _, err := checkedProduct(pi.Shape); err != nil {
		return nil, fmt.Errorf("shape: %v", err)
	}
	if pi.Shape == nil {
		return nil, fmt.Errorf("no shape")
	}
	bits := pi.Bits
	switch {
	case f != nil:
		if pi.Format != f.Name() {
			return nil, fmt.Errorf("format %q, but the datatype's is %s", pi.Format, f.Name())
		}
		bits = f.Bits()
	case pi.Format != "":
		return nil, fmt.Errorf("format %q, but the part holds no numbers", pi.Format)
	case pi.Name == "mask":
		bits = 1
	}
	if pi.Bits != bits || bits < 1 || bits > 32 || (f == nil && bits > 8) {
		return nil, fmt.Errorf("%d-bit entries, want %d", pi.Bits, bits)
	}
	p := &tc.Part{Format: f, Bits: bits, Shape: slices.Clone(pi.Shape), Packed: bits <= 8}
	if s := p.Storage(); pi.Storage != s {
		return nil, fmt.Errorf("storage %q, want %q", pi.Storage, s)
	}
	return p, nil
}

// readArray reads one .npy file of a part and checks its type and shape.
func readArray(path string, want npy.DType, shape []int) (*npy.Array, error) {
	arr, err := npy.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch {
	case arr.DType != want:
		return nil, fmt.Errorf("%s: %s array, want %s", path, arr.DType, want)
	case arr.Fortran && len(arr.Shape) > 1:
		return nil, fmt.Errorf("%s: Fortran-order arrays are not supported", path)
	case !slices.Equal(arr.Shape, shape):
		return nil, fmt.Errorf("%s: shape %v, but info.json says %v", path, arr.Shape, shape)
	}
	return arr, nil
}

// readPacked reads the compressed data bytes from packed.npy.
func readPacked(dir string, pi partInfo, p *tc.Part) error {
	path := filepath.Join(dir, pi.File)
	arr, err := npy.ReadFile(path)
	if err != nil {
		return err
	}
	if arr.DType != npy.Uint8 || len(arr.Shape) != 1 {
		return fmt.Errorf("%s: %s array of shape %v, want a 1-D uint8 array", path, arr.DType, arr.Shape)
	}
	n, _ := checkedProduct(p.Shape)
	want := n * p.StorageBytes()
	if p.Packed {
		want = kernels.PackedLen(n, uint(p.Bits))
	}
	if len(arr.Data) != want {
		return fmt.Errorf("%s: %d bytes, but info.json's %d %s entries of shape %v take %d", path, len(arr.Data), n, p.Storage(), p.Shape, want)
	}
	p.Bytes = arr.Data
	return nil
}

// readPart reads a scale, zero, tensor scale, meta or mask part in the layout
// partFiles writes, and stores it as the Compressed form holds it.
func readPart(dir string, pi partInfo, p *tc.Part) error {
	path := filepath.Join(dir, pi.File)
	if p.Bits <= 8 {
		ft := fileDType(pi.Name, p)
		arr, err := readArray(path, ft, p.Shape)
		if err != nil {
			return err
		}
		codes := arr.Data
		k := uint(p.Bits)
		for i, b := range codes {
			ok := true
			switch ft {
			case npy.Bool:
				ok = b <= 1
			case npy.Int8:
				v := int(int8(b))
				ok = v >= -(1<<(k-1)) && v < 1<<(k-1)
			default:
				ok = uint(b) < 1<<k
			}
			if !ok {
				return fmt.Errorf("%s: entry %d (%d) does not fit %d-bit %s codes", path, i, b, k, partKind(pi.Name, p))
			}
		}
		p.Bytes = make([]byte, kernels.PackedLen(len(codes), k))
		kernels.PackBits(p.Bytes, codes, k)
		return nil
	}
	if pi.CodesFile == "" {
		return fmt.Errorf("%s: info.json: part %q of %d-bit %s needs a codes_file", filepath.Join(dir, "info.json"), pi.Name, p.Bits, p.Format.Name())
	}
	cpath := filepath.Join(dir, pi.CodesFile)
	carr, err := readArray(cpath, codesNpyDType(p.StorageBytes()), p.Shape)
	if err != nil {
		return err
	}
	varr, err := readArray(path, npy.Float32, p.Shape)
	if err != nil {
		return err
	}
	w := p.StorageBytes()
	for i := 0; i < len(carr.Data)/w; i++ {
		var c uint32
		if w == 2 {
			c = uint32(binary.LittleEndian.Uint16(carr.Data[2*i:]))
		} else {
			c = binary.LittleEndian.Uint32(carr.Data[4*i:])
		}
		if p.Bits < 32 && c >= 1<<p.Bits {
			return fmt.Errorf("%s: entry %d (%#x) does not fit %d-bit %s codes", cpath, i, c, p.Bits, p.Format.Name())
		}
		v := math.Float32frombits(binary.LittleEndian.Uint32(varr.Data[4*i:]))
		d := p.Format.Decode(c)
		if math.Float32bits(v) != math.Float32bits(d) && !(v != v && d != d) {
			return fmt.Errorf("%s: entry %d is %g, but %s holds code %#x, which is %g", path, i, v, pi.CodesFile, c, d)
		}
	}
	p.Bytes = carr.Data
	return nil
}

func partKind(name string, p *tc.Part) string {
	if p.Format != nil {
		return p.Format.Name()
	}
	return name
}

// decodePlain decodes the data part of a number format cast unscaled.
func decodePlain(f *dtype.Format, p *tc.Part, n int) ([]float32, error) {
	codes := make([]uint32, n)
	if p.Packed {
		u := make([]uint8, n)
		kernels.UnpackBits(u, p.Bytes, uint(p.Bits))
		for i, c := range u {
			codes[i] = uint32(c)
		}
	} else {
		w := p.StorageBytes()
		for i := range codes {
			if w == 2 {
				codes[i] = uint32(binary.LittleEndian.Uint16(p.Bytes[2*i:]))
			} else {
				codes[i] = binary.LittleEndian.Uint32(p.Bytes[4*i:])
			}
			if f.Bits() < 32 && codes[i] >= 1<<f.Bits() {
				return nil, fmt.Errorf("code %d (%#x) does not fit %d-bit %s", i, codes[i], f.Bits(), f.Name())
			}
		}
	}
	out := make([]float32, n)
	dtype.DecodeSlice(f, out, codes)
	return out, nil
}
