package castdir

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tensorcast-go/tensorcast/checkpoint/npy"
	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
	"github.com/tensorcast-go/tensorcast/internal/inputfile"
	"github.com/tensorcast-go/tensorcast/internal/shape"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/scale"
	tc "github.com/tensorcast-go/tensorcast/tcast"
)

// Dir is an opened cast directory: its info.json, checked, and the datatype
// it names. The part files are read by [Dir.Part], [Dir.Tensor] and
// [Dir.Float32], which check them against info.json.
type Dir struct {
	// Path is the directory.
	Path string
	// Info is info.json as read.
	Info Info
	// DataType is the datatype of the cast: from info.json's datatype code,
	// under its name when the name means the same datatype. It is nil for a
	// number format that is no tcast datatype (integer and exponent formats
	// cast without a scale).
	DataType *tc.DataType
	// Format is the element format.
	Format *dtype.Format
	// Mode is the scale-selection mode (floor when info.json names none).
	Mode scale.Mode

	n     int                 // elements
	parts map[string]*tc.Part // by name, as Compressed holds them, without bytes
	infos map[string]PartInfo
}

// partNames are the parts a directory can hold, in the order of tcast.Tensor.Parts.
var partNames = []string{"data", "scale", "zero", "tensor_scale", "meta", "mask"}

// Open reads and checks dir/info.json. A missing directory or info.json is
// the operating system's *fs.PathError (errors.Is(err, fs.ErrNotExist));
// content that is not a valid description is a *FormatError.
func Open(dir string) (*Dir, error) {
	raw, err := inputfile.ReadFile(filepath.Join(dir, InfoFile))
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: dir, parts: map[string]*tc.Part{}, infos: map[string]PartInfo{}}
	if err := d.readInfo(raw); err != nil {
		return nil, err
	}
	if err := d.readDataType(); err != nil {
		return nil, err
	}
	for _, pi := range d.Info.Parts {
		if err := d.addPart(pi); err != nil {
			return nil, err
		}
	}
	if d.parts["data"] == nil {
		return nil, d.bad("no data part")
	}
	return d, nil
}

// bad is the *FormatError of an info.json that is no valid description.
func (d *Dir) bad(format string, args ...any) error {
	return fileErr(d.Path, InfoFile, nil, fmt.Sprintf(format, args...))
}

// readInfo decodes info.json from raw into d.Info and checks its required
// fields, shape, axis and scale mode.
func (d *Dir) readInfo(raw []byte) error {
	var present struct {
		Axis *int `json:"axis"`
	}
	if err := json.Unmarshal(raw, &d.Info); err != nil {
		return fileErr(d.Path, InfoFile, err, "malformed")
	}
	json.Unmarshal(raw, &present) // cannot fail where the first succeeded
	in := &d.Info
	switch {
	case in.DataType.Code == "":
		return d.bad("no datatype code")
	case in.Shape == nil:
		return d.bad("no shape")
	case present.Axis == nil:
		return d.bad("no axis")
	case in.Form != tc.Compressed.String():
		return d.bad("form %q, want %q", in.Form, tc.Compressed.String())
	}
	var err error
	if d.n, err = checkedProduct(in.Shape); err != nil {
		return d.bad("shape: %v", err)
	}
	if in.Axis < 0 || in.Axis >= max(len(in.Shape), 1) {
		return d.bad("axis %d out of range for shape %v", in.Axis, in.Shape)
	}
	if in.ScaleMode != "" {
		if d.Mode, err = scale.ParseMode(in.ScaleMode); err != nil {
			return d.bad("%v", err)
		}
	}
	return nil
}

// readDataType sets d.DataType and d.Format from info.json's datatype
// code, under its name when the name means the same datatype; a code that
// is only a number format leaves d.DataType nil.
func (d *Dir) readDataType() error {
	in := &d.Info
	dt, err := tc.Lookup(in.DataType.Code)
	if err != nil {
		f, perr := dtype.Parse(in.DataType.Code)
		if perr != nil {
			why := err.Error()
			if le := (*tc.LookupError)(nil); errors.As(err, &le) {
				why = le.Detail() // without tcast's name, which the message's start gives
			}
			return d.bad("datatype code %q: %s", in.DataType.Code, why)
		}
		d.Format = f
		return nil
	}
	if named, err := tc.Lookup(in.DataType.Name); err == nil && named.Code() == dt.Code() {
		dt = named
	}
	d.DataType, d.Format = dt, dt.Elem()
	return nil
}

// addPart checks the info.json entry of a part, which must be a part of
// the datatype listed once with files in the directory, and adds it.
func (d *Dir) addPart(pi PartInfo) error {
	switch {
	case !slices.Contains(partNames, pi.Name):
		return d.bad("unknown part %q", pi.Name)
	case d.parts[pi.Name] != nil:
		return d.bad("part %q listed twice", pi.Name)
	}
	f, has := d.partFormat(pi.Name)
	if !has {
		return d.bad("part %q: datatype %s has none", pi.Name, d.Info.DataType.Code)
	}
	p, err := newStoredPart(pi, f)
	if err != nil {
		return d.bad("part %q: %v", pi.Name, err)
	}
	if !localName(pi.File) || (pi.CodesFile != "" && !localName(pi.CodesFile)) {
		return d.bad("part %q: file names must name files in the directory", pi.Name)
	}
	d.parts[pi.Name], d.infos[pi.Name] = p, pi
	return nil
}

// Is reports whether path is a directory holding an info.json, as a cast
// directory does. It does not check the content; [Open] does.
func Is(path string) bool {
	st, err := os.Stat(filepath.Join(path, InfoFile))
	return err == nil && st.Mode().IsRegular()
}

// Shape returns the tensor's shape ([] for a 0-d tensor).
func (d *Dir) Shape() []int { return slices.Clone(d.Info.Shape) }

// Name returns the datatype's name, or the element format's for a number
// format that is no tcast datatype.
func (d *Dir) Name() string {
	if d.DataType != nil {
		return d.DataType.Name()
	}
	return d.Format.Name()
}

// Files returns the names of the files the directory holds by info.json, in
// the order [Write] writes them: codes.npy, dequant.npy, every part's files,
// info.json.
func (d *Dir) Files() []string {
	names := []string{CodesFile, DequantFile}
	for _, pi := range d.Info.Parts {
		names = append(names, pi.File)
		if pi.CodesFile != "" {
			names = append(names, pi.CodesFile)
		}
	}
	return append(names, InfoFile)
}

// Part reads one part ("data", "scale", "zero", "tensor_scale", "meta" or
// "mask") from its files and returns it as the Compressed form holds it:
// entries of up to 8 bits bit-packed. It returns nil and no error when the
// directory has no such part.
func (d *Dir) Part(name string) (*tc.Part, error) {
	tmpl, ok := d.parts[name]
	if !ok {
		return nil, nil
	}
	p := *tmpl
	p.Shape = slices.Clone(tmpl.Shape)
	var err error
	if name == "data" {
		err = d.readPacked(d.infos[name].File, &p)
	} else {
		err = d.readPart(d.infos[name], &p)
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Tensor rebuilds the tensor, in the Compressed form, from packed.npy and the
// part files (scale.npy, zero.npy, tensor_scale.npy, meta.npy, mask.npy and
// the *_codes.npy of parts wider than 8 bits) and checks it with
// tcast.Validate. For a number format that is no tcast datatype the tensor's
// DataType is nil and it holds only Data; tcast.Decompress does not take it,
// [Dir.Float32] does.
func (d *Dir) Tensor() (*tc.Tensor, error) {
	t := &tc.Tensor{DataType: d.DataType, Form: tc.Compressed, Shape: d.Shape(), Axis: d.Info.Axis, Mode: d.Mode}
	var maskPart *tc.Part
	slots := []**tc.Part{&t.Data, &t.Scale, &t.Zero, &t.TensorScale, &t.Meta, &maskPart}
	for i, name := range partNames {
		p, err := d.Part(name)
		if err != nil {
			return nil, err
		}
		*slots[i] = p
	}
	if maskPart != nil {
		m, err := maskPart.Mask()
		if err != nil {
			return nil, fileErr(d.Path, d.infos["mask"].File, err, "mask")
		}
		t.Mask = m
	}
	if d.DataType == nil {
		if !slices.Equal(t.Data.Shape, partShape(t.Shape)) {
			return nil, fileErr(d.Path, InfoFile, nil,
				fmt.Sprintf("data part has shape %v, want %v", t.Data.Shape, partShape(t.Shape)))
		}
		return t, nil
	}
	if err := tc.Validate(t); err != nil {
		return nil, fileErr(d.Path, InfoFile, err, "")
	}
	return t, nil
}

// Float32 returns the dequantized values and their shape, rebuilt as
// [Dir.Tensor] does. They equal dequant.npy bit for bit.
func (d *Dir) Float32() ([]float32, []int, error) {
	t, err := d.Tensor()
	if err != nil {
		return nil, nil, err
	}
	var v []float32
	if d.DataType == nil {
		v, err = decodePlain(d.Format, t.Data, d.n)
		if err != nil {
			return nil, nil, fileErr(d.Path, d.infos["data"].File, err, "")
		}
	} else if v, err = tc.Decompress(t); err != nil {
		return nil, nil, fileErr(d.Path, InfoFile, err, "")
	}
	return v, t.Shape, nil
}

// localName reports whether name is a file name without directories.
func localName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.Base(name) == name && !strings.ContainsAny(name, `/\`)
}

// checkedProduct returns the number of elements of shape, rejecting negative
// dimensions and counts too large to address.
func checkedProduct(dims []int) (int, error) {
	n, neg, ok := shape.Elements(dims)
	switch {
	case neg >= 0:
		return 0, fmt.Errorf("negative dimension in %v", dims)
	case !ok:
		return 0, fmt.Errorf("%v has too many elements", dims)
	}
	return n, nil
}

// partFormat returns the number format of a part of the datatype (nil for meta
// and mask) and whether the datatype can have the part at all.
func (d *Dir) partFormat(name string) (*dtype.Format, bool) {
	if d.DataType == nil {
		return d.Format, name == "data"
	}
	spec := d.DataType.Spec()
	switch name {
	case "data":
		return d.Format, true
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
func newStoredPart(pi PartInfo, f *dtype.Format) (*tc.Part, error) {
	if pi.Shape == nil {
		return nil, errors.New("no shape")
	}
	if _, err := checkedProduct(pi.Shape); err != nil {
		return nil, fmt.Errorf("shape: %v", err)
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
	if n := p.ByteLen(); pi.Bytes != n {
		return nil, fmt.Errorf("bytes %d, but its shape and bits take %d", pi.Bytes, n)
	}
	return p, nil
}

// readArray reads one .npy file of the directory. A file that cannot be
// opened is its *fs.PathError; one that is no .npy array, or has another dtype
// or (with shape not nil) another shape, is a *FormatError.
func (d *Dir) readArray(file string, want npy.DType, shape []int) (*npy.Array, error) {
	arr, err := npy.ReadFile(filepath.Join(d.Path, file))
	if err != nil {
		var pe *fs.PathError
		var fe *npy.FormatError
		switch {
		case errors.As(err, &fe):
			// The part file's own error, as the cast directory's: a
			// part that is no .npy array leaves the directory damaged.
			e := fileErr(d.Path, file, fe.Err, fe.Reason)
			e.Offset = fe.Offset
			if fe.Kind == fileerr.Truncated {
				e.Kind = fe.Kind
			}
			return nil, e
		case errors.As(err, &pe):
			return nil, pe
		}
		return nil, fileErr(d.Path, file, err, "")
	}
	bad := func(format string, args ...any) error {
		return fileErr(d.Path, file, nil, fmt.Sprintf(format, args...))
	}
	switch {
	case arr.DType != want:
		return nil, bad("%s array, want %s", arr.DType, want)
	case arr.Fortran && len(arr.Shape) > 1:
		return nil, bad("Fortran-order arrays are not supported")
	case shape != nil && !slices.Equal(arr.Shape, shape):
		return nil, bad("shape %v, but info.json says %v", arr.Shape, shape)
	}
	return arr, nil
}

// readPacked reads the compressed data bytes from file (packed.npy).
func (d *Dir) readPacked(file string, p *tc.Part) error {
	arr, err := d.readArray(file, npy.Uint8, nil)
	if err != nil {
		return err
	}
	if len(arr.Shape) != 1 {
		return fileErr(d.Path, file, nil, fmt.Sprintf("uint8 array of shape %v, want a 1-D uint8 array", arr.Shape))
	}
	n, want := p.Len(), p.ByteLen()
	if len(arr.Data) != want {
		return fileErr(d.Path, file, nil,
			fmt.Sprintf("%d bytes, but info.json's %d %s entries of shape %v take %d", len(arr.Data), n, p.Storage(), p.Shape, want))
	}
	p.Bytes = arr.Data
	return nil
}

// readPart reads a scale, zero, tensor scale, meta or mask part in the layout
// Write stores it in, and keeps it as the Compressed form holds it.
func (d *Dir) readPart(pi PartInfo, p *tc.Part) error {
	if p.Bits <= 8 {
		ft := fileDType(pi.Name, p)
		arr, err := d.readArray(pi.File, ft, p.Shape)
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
				return fileErr(d.Path, pi.File, nil,
					fmt.Sprintf("entry %d (%d) does not fit %d-bit %s codes", i, b, k, partKind(pi.Name, p)))
			}
		}
		p.Bytes = make([]byte, kernels.PackedLen(len(codes), k))
		kernels.PackBits(p.Bytes, codes, k)
		return nil
	}
	if pi.CodesFile == "" {
		return fileErr(d.Path, InfoFile, nil,
			fmt.Sprintf("part %q of %d-bit %s needs a codes_file", pi.Name, p.Bits, p.Format.Name()))
	}
	carr, err := d.readArray(pi.CodesFile, codesDType(p.StorageBytes()), p.Shape)
	if err != nil {
		return err
	}
	varr, err := d.readArray(pi.File, npy.Float32, p.Shape)
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
			return fileErr(d.Path, pi.CodesFile, nil,
				fmt.Sprintf("entry %d (%#x) does not fit %d-bit %s codes", i, c, p.Bits, p.Format.Name()))
		}
		v := math.Float32frombits(binary.LittleEndian.Uint32(varr.Data[4*i:]))
		dv := p.Format.Decode(c)
		if math.Float32bits(v) != math.Float32bits(dv) && !(v != v && dv != dv) {
			return fileErr(d.Path, pi.File, nil,
				fmt.Sprintf("entry %d is %g, but %s holds code %#x, which is %g", i, v, pi.CodesFile, c, dv))
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

// decodePlain decodes the n codes of the data part of a number format cast
// without a datatype.
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
