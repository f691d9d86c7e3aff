package castdir

import (
	"encoding/json"
	"math"
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/internal/fileerr"
)

// The fixed file names of a cast directory. Part files are named in
// [Info.Parts]; Write names them "<part>.npy" and "<part>_codes.npy".
const (
	InfoFile    = "info.json"
	CodesFile   = "codes.npy"
	DequantFile = "dequant.npy"
	PackedFile  = "packed.npy"
)

// Info is the content of info.json. The package comment describes each field.
type Info struct {
	// Format is the element format, or a codebook datatype's codebook.
	Format     FormatInfo   `json:"format"`
	DataType   DataTypeInfo `json:"datatype"`
	Input      string       `json:"input"`
	InputDType string       `json:"input_dtype"`
	Keep       string       `json:"keep,omitempty"`
	Shape      []int        `json:"shape"`
	CodesDType string       `json:"codes_dtype"`
	Axis       int          `json:"axis"`
	ScaleMode  string       `json:"scale_mode"`
	Rounding   string       `json:"rounding"`
	Overflow   string       `json:"overflow"`
	Seed       *uint64      `json:"seed,omitempty"`
	FullRange  bool         `json:"full_range,omitempty"`
	// ScaleSearch says that the block scales were chosen by the scale search
	// (tcast.Options.ScaleSearch) rather than by the datatype's rule; the
	// parts decode the same either way.
	ScaleSearch bool `json:"scale_search,omitempty"`
	// BitsPerValue is the exact storage cost of this tensor: every part's bits
	// over the number of elements (tcast.Tensor.BitsPerValue).
	BitsPerValue float64 `json:"bits_per_value"`
	// Form is the form the parts are described in: always "compressed".
	Form  string     `json:"form"`
	Parts []PartInfo `json:"parts"`
	Stats Stats      `json:"stats"`
}

// FormatInfo describes what the elements are: a number format (Number), or
// for a codebook datatype its codebook (Codebook); one of them is set. Its
// JSON is that of the one set, a codebook's with the kind "codebook".
type FormatInfo struct {
	Number   *dtype.Info
	Codebook *CodebookInfo
}

// CodebookInfo describes the codebook of a codebook datatype: its elements
// are indices into tables of entries, one table chosen per subtile (or tile).
type CodebookInfo struct {
	Name string `json:"name"` // the codebook's name (nf4, icb44fi_e2m3fnuz, ...)
	Kind string `json:"kind"` // "codebook"
	// Bits is the width of an element's code; Index names it as a number
	// format (uint4).
	Bits  int    `json:"bits"`
	Index string `json:"index"`
	// MetaBits is the width of a table choice (0 with one table).
	MetaBits int `json:"meta_bits"`
	// Compute is the number format the entries lie on, when there is one.
	Compute string `json:"compute,omitempty"`
	// MaxAbs is the largest entry magnitude.
	MaxAbs float32 `json:"max_abs"`
	// Tables holds each table's entries by code.
	Tables [][]float32 `json:"tables"`
}

// MarshalJSON writes the description that is set.
func (f FormatInfo) MarshalJSON() ([]byte, error) {
	if f.Codebook != nil {
		return json.Marshal(f.Codebook)
	}
	return json.Marshal(f.Number)
}

// UnmarshalJSON reads a codebook's description (kind "codebook") or a
// number format's.
func (f *FormatInfo) UnmarshalJSON(b []byte) error {
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &kind); err != nil {
		return err
	}
	*f = FormatInfo{}
	if kind.Kind == codebookKind {
		f.Codebook = new(CodebookInfo)
		return json.Unmarshal(b, f.Codebook)
	}
	f.Number = new(dtype.Info)
	return json.Unmarshal(b, f.Number)
}

// codebookKind is the kind of a codebook's description.
const codebookKind = "codebook"

// DataTypeInfo describes the datatype of a cast.
type DataTypeInfo struct {
	Name    string   `json:"name"`
	Code    string   `json:"code"`
	Aliases []string `json:"aliases,omitempty"`
	Note    string   `json:"note,omitempty"`
	Scaled  bool     `json:"scaled"`
	// BitsPerValue is the datatype's nominal cost (tcast.DataType.BitsPerValue).
	BitsPerValue float64 `json:"bits_per_value"`
}

// PartInfo describes one part of the compressed tensor and where the
// directory holds it.
type PartInfo struct {
	Name    string `json:"name"`  // data, scale, zero, tensor_scale, meta, mask
	Shape   []int  `json:"shape"` // logical shape: one entry per element, block or subtile
	Storage string `json:"storage"`
	Format  string `json:"format,omitempty"` // empty for meta and mask
	Bits    int    `json:"bits"`
	Bytes   int    `json:"bytes"` // compressed size
	// File holds the part: packed.npy for the data (the compressed bytes), else
	// the codes (uint8, int8 for signed integers, bool for the mask) or, for
	// formats wider than 8 bits, the decoded float32 values, with the exact
	// codes in CodesFile.
	File       string `json:"file"`
	FileDType  string `json:"file_dtype"`
	CodesFile  string `json:"codes_file,omitempty"`
	CodesDType string `json:"codes_dtype,omitempty"`
}

// Stats compares the dequantized values with the input.
type Stats struct {
	Count       int     `json:"count"`
	NaNInputs   int     `json:"nan_inputs"`
	Clipped     int     `json:"clipped"` // finite inputs beyond ±max finite (unscaled formats only)
	MaxAbsError float64 `json:"max_abs_error"`
	// SQNR in dB over finite inputs with finite outputs; nil when it is not a
	// number (no error at all, or an all-zero input).
	SQNR *float64 `json:"sqnr_db"`
	// Lost counts finite inputs whose dequantized value is NaN or infinite
	// (an input cast with WriteOptions.AllowNonFinite, whose NaN made its
	// block NaN). Any makes the error infinite, as tcast.Errors has it:
	// MaxAbsError +Inf and SQNR −Inf, which info.json gives as
	// "max_abs_error": null and "sqnr_db": null beside
	// "nonfinite_outputs" (omitted when 0).
	Lost int `json:"nonfinite_outputs,omitempty"`
}

// statsJSON is Stats as info.json holds it, for a cast that lost values:
// the error figures, infinite, are null (JSON has no infinities).
type statsJSON struct {
	Count       int      `json:"count"`
	NaNInputs   int      `json:"nan_inputs"`
	Clipped     int      `json:"clipped"`
	MaxAbsError *float64 `json:"max_abs_error"`
	SQNR        *float64 `json:"sqnr_db"`
	Lost        int      `json:"nonfinite_outputs,omitempty"`
}

// MarshalJSON writes s; with Lost > 0 its infinite error figures are null.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats
	if s.Lost == 0 {
		return json.Marshal(plain(s))
	}
	return json.Marshal(statsJSON{Count: s.Count, NaNInputs: s.NaNInputs, Clipped: s.Clipped, Lost: s.Lost})
}

// UnmarshalJSON reads s; with Lost > 0 the error figures are infinite
// (MaxAbsError +Inf, SQNR −Inf), as Write measured them.
func (s *Stats) UnmarshalJSON(b []byte) error {
	type plain Stats
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = Stats(p)
	if s.Lost > 0 {
		inf := math.Inf(-1)
		s.MaxAbsError, s.SQNR = math.Inf(1), &inf
	}
	return nil
}

// FormatError reports a cast directory whose content is not what the format
// allows: info.json, or a part file that disagrees with it. Its fields are
// Format ("castdir"), Path (the file: DIR/info.json, DIR/scale.npy), Offset
// (in a part file that is no valid .npy array; -1 otherwise), Reason and
// Err (a tcast error for inconsistent parts), and its message reads
// "castdir: out/info.json: axis 5 out of range for shape [4 64]". Errors
// opening or reading a file are returned as the *fs.PathError of the
// operating system, so errors.Is(err, fs.ErrNotExist) reports a missing
// directory or file.
//
// It is the one error type of the module's file readers (an alias of the
// same type in package gguf, safetensors, npy and imatrix), so errors.As
// with a *castdir.FormatError also finds another reader's error: Format
// says which reader it is.
type FormatError = fileerr.FormatError

// formatName is the Format of this package's errors.
const formatName = "castdir"

// fileErr returns a *FormatError about file of directory dir.
func fileErr(dir, file string, err error, reason string) *FormatError {
	return &FormatError{Format: formatName, Path: filepath.Join(dir, file), Offset: -1,
		Reason: reason, Err: err}
}
