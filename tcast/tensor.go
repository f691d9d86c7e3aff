package tcast

import (
	"fmt"

	"github.com/tensorcast-go/tensorcast/dtype"
	"github.com/tensorcast-go/tensorcast/kernels"
	"github.com/tensorcast-go/tensorcast/mask"
	"github.com/tensorcast-go/tensorcast/scale"
)

// Form is how a [Tensor] holds its values (docs/TENSORCAST.md §4).
type Form uint8

// The three forms.
const (
	// Virtual holds the dequantized float32 values, in the input's shape (fake
	// quantization), plus the scales that produced them.
	Virtual Form = iota
	// Actual holds one code per element (1, 2 or 4 little-endian bytes each,
	// the narrowest that fits the format) and one per scale, zero point and
	// meta field; the mask one bool per byte.
	Actual
	// Compressed holds the same codes bit-packed: codes of up to 8 bits as an
	// LSB-first bit stream (4-bit: element 2k in bits 3:0; 6-bit: 4 codes in 3
	// bytes), wider codes as in Actual, the mask 8 flags per byte.
	Compressed
)

var formNames = [...]string{"virtual", "actual", "compressed"}

// String returns the form's name as ParseForm accepts it.
func (f Form) String() string {
	if int(f) < len(formNames) {
		return formNames[f]
	}
	return fmt.Sprintf("Form(%d)", uint8(f))
}

// ParseForm returns the form of a name.
func ParseForm(s string) (Form, error) {
	for i, n := range formNames {
		if n == s {
			return Form(i), nil
		}
	}
	return 0, fmt.Errorf("tcast: unknown form %q (want virtual, actual or compressed)", s)
}

// Part is one array of a tensor: its data codes, scales, zero points, tensor
// scale, meta fields or mask.
type Part struct {
	// Format is the number format of each entry; nil for the mask, whose entries
	// are flags (true = keep).
	Format *dtype.Format
	// Bits is the width of one entry: Format.Bits(), or 1 for the mask, or the
	// offset width for subtile offsets (meta).
	Bits int
	// Shape is the logical shape: one entry per element, block or subtile.
	Shape []int
	// Packed reports whether Bytes is an LSB-first bit stream of Bits-wide
	// entries (Compressed form, Bits ≤ 8); otherwise each entry takes
	// StorageBytes() little-endian bytes.
	Packed bool
	// Bytes holds the entries.
	Bytes []byte
}

// Len returns the number of entries (the product of Shape).
func (p *Part) Len() int {
	n, _ := product(p.Shape)
	return n
}

// StorageBytes returns the bytes one entry takes when not packed: 1, 2 or 4.
func (p *Part) StorageBytes() int { return storageBytes(p.Bits) }

func storageBytes(bits int) int {
	switch {
	case bits <= 8:
		return 1
	case bits <= 16:
		return 2
	}
	return 4
}

// Storage names how entries are stored: "uint8", "uint16" or "uint32" for one
// code per entry (an unpacked mask holds 0 or 1 per byte), or "packed<Bits>" for
// a bit stream.
func (p *Part) Storage() string {
	if p.Packed {
		return fmt.Sprintf("packed%d", p.Bits)
	}
	return fmt.Sprintf("uint%d", 8*p.StorageBytes())
}

// wantBytes is the byte length Bytes must have.
func (p *Part) wantBytes() (int, error) {
	n, err := product(p.Shape)
	if err != nil {
		return 0, err
	}
	if p.Packed {
		return kernels.PackedLen(n, uint(p.Bits)), nil
	}
	return n * p.StorageBytes(), nil
}

// Codes returns the entries as codes, one uint32 each (unpacking if needed).
func (p *Part) Codes() ([]uint32, error) {
	want, err := p.wantBytes()
	if err != nil {
		return nil, err
	}
	if len(p.Bytes) != want {
		return nil, fmt.Errorf("%d bytes, want %d for %d %s entries of shape %v", len(p.Bytes), want, p.Len(), p.Storage(), p.Shape)
	}
	n := p.Len()
	out := make([]uint32, n)
	switch {
	case p.Packed:
		u := make([]uint8, n)
		kernels.UnpackBits(u, p.Bytes, uint(p.Bits))
		for i, c := range u {
			out[i] = uint32(c)
		}
	default:
		readCodes(out, p.Bytes, p.StorageBytes())
	}
	return out, nil
}

// Tensor is a cast tensor: the data and its scales, zero points, tensor scale,
// meta fields and mask, in one of three forms. Parts a datatype does not use are
// nil.
type Tensor struct {
	DataType *DataType
	Form     Form
	// Shape is the shape of the input (and of Values and Data).
	Shape []int
	// Axis is the scaled axis, in 0..len(Shape)-1.
	Axis int
	// Mode is the scale-selection mode the scales were chosen with.
	Mode scale.Mode
	// Values holds the dequantized values (Virtual form only).
	Values []float32
	// Data holds the element codes (Actual and Compressed forms).
	Data *Part
	// Scale, Zero and TensorScale hold the block scales, zero points and the
	// second-level tensor scale as codes of their formats. Meta holds the
	// subtile exponent offsets.
	Scale, Zero, TensorScale, Meta *Part
	// Mask holds the keep mask given to Cast, broadcast to the tensor's
	// shape (to [1] for a rank-0 tensor), or nil. It is the same in every
	// form; Parts gives it as a part: one byte (0 or 1) per flag in the
	// Virtual and Actual forms, 8 flags per byte in the Compressed form.
	Mask *mask.Mask
	// maskShape, set by Describe for a sparse datatype, makes Parts list a
	// mask part of this shape (without bytes) while Mask is nil.
	maskShape []int
}

// Parts returns the tensor's parts by name: "data", "scale", "zero",
// "tensor_scale", "meta", "mask", skipping absent ones.
func (t *Tensor) Parts() []NamedPart {
	var out []NamedPart
	for _, np := range []NamedPart{{"data", t.Data}, {"scale", t.Scale}, {"zero", t.Zero},
		{"tensor_scale", t.TensorScale}, {"meta", t.Meta}, {"mask", t.maskPart()}} {
		if np.Part != nil {
			out = append(out, np)
		}
	}
	return out
}

// maskPart returns the mask as a part in the tensor's form: a new part whose
// bytes are the packed bits (Compressed) or one flag byte per element, or nil
// without a mask.
func (t *Tensor) maskPart() *Part {
	if t.Mask == nil {
		if t.maskShape != nil {
			return &Part{Bits: 1, Shape: append([]int(nil), t.maskShape...), Packed: t.Form == Compressed}
		}
		return nil
	}
	p := &Part{Bits: 1, Shape: t.Mask.Shape()}
	if t.Form == Compressed {
		p.Packed, p.Bytes = true, t.Mask.Bytes()
	} else {
		p.Bytes = t.Mask.Flags()
	}
	return p
}

// Mask returns the flags of a mask part (no Format, 1-bit entries) as a
// mask of the part's shape: from its packed bits when Packed, else from one
// byte per flag, 0 or 1. Another part, or bytes that do not fit the shape
// (a wrong length, a flag byte above 1, set padding bits after the last
// packed flag), is an error; the mask errors match mask.ErrShape and
// mask.ErrDecode.
func (p *Part) Mask() (*mask.Mask, error) {
	switch {
	case p.Format != nil:
		return nil, fmt.Errorf("tcast: a %s part is no mask", p.Format.Name())
	case p.Bits != 1:
		return nil, fmt.Errorf("tcast: a part of %d-bit entries is no mask", p.Bits)
	case p.Packed:
		return mask.FromBytes(p.Shape, p.Bytes)
	}
	return mask.FromFlags(p.Shape, p.Bytes)
}

// NamedPart is a part with its name.
type NamedPart struct {
	Name string
	*Part
}

// BitsPerValue returns the exact storage bits per element of the tensor: every
// part's entries times their width, over the number of elements (the mask
// included). It is 0 for an empty tensor.
func (t *Tensor) BitsPerValue() float64 {
	n, _ := product(t.Shape)
	if n == 0 {
		return 0
	}
	total := 0
	if t.Data == nil {
		total = n * t.DataType.elem.Bits()
	}
	for _, p := range t.Parts() {
		total += p.Len() * p.Bits
	}
	return float64(total) / float64(n)
}
