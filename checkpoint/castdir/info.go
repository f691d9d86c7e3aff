package castdir

import (
	"path/filepath"

	"github.com/tensorcast-go/tensorcast/dtype"
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
	// Format is the element format.
	Format     dtype.Info   `json:"format"`
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
	// BitsPerValue is the exact storage cost of this tensor: every part's bits
	// over the number of elements (tcast.Tensor.BitsPerValue).
	BitsPerValue float64 `json:"bits_per_value"`
	// Form is the form the parts are described in: always "compressed".
	Form  string     `json:"form"`
	Parts []PartInfo `json:"parts"`
	Stats Stats      `json:"stats"`
}

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
}

// FormatError reports a cast directory whose content is not what the format
// allows: info.json, or a part file that disagrees with it. Errors opening or
// reading a file are returned as the *fs.PathError of the operating system,
// so errors.Is(err, fs.ErrNotExist) reports a missing directory or file.
type FormatError struct {
	// Dir is the directory and File the file in it ("info.json", "scale.npy").
	Dir, File string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying error, if any (a *npy.FormatError for a file that
	// is no valid .npy array, a tcast error for inconsistent parts).
	Err error
}

// Error returns "DIR/FILE: MSG".
func (e *FormatError) Error() string {
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return filepath.Join(e.Dir, e.File) + ": " + msg
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }
