package safetensors

import (
	"fmt"
	"math/bits"
	"strconv"
)

// DType is the element type of a tensor, as named in the "dtype" field of a
// safetensors header. The zero value is not a valid DType.
//
// The constants are declared in the order of the upstream Rust Dtype enum,
// which is the order of increasing alignment: comparing two valid DType
// values with < compares that order. The writer sorts tensors by descending
// DType, then by name, as the reference implementation does.
type DType uint8

// The dtypes of the safetensors format, in upstream (alignment) order. The
// comment after each constant gives its header spelling and its size in
// bits per element.
const (
	Bool       DType = iota + 1 // "BOOL", 8
	F4                          // "F4", 4: OCP FP4 E2M1
	F6E2M3                      // "F6_E2M3", 6: OCP FP6 E2M3
	F6E3M2                      // "F6_E3M2", 6: OCP FP6 E3M2
	U8                          // "U8", 8
	I8                          // "I8", 8
	F8E5M2                      // "F8_E5M2", 8: torch float8_e5m2
	F8E4M3                      // "F8_E4M3", 8: torch float8_e4m3fn
	F8E8M0                      // "F8_E8M0", 8: torch float8_e8m0fnu
	F8E4M3FNUZ                  // "F8_E4M3FNUZ", 8: torch float8_e4m3fnuz
	F8E5M2FNUZ                  // "F8_E5M2FNUZ", 8: torch float8_e5m2fnuz
	I16                         // "I16", 16
	U16                         // "U16", 16
	F16                         // "F16", 16: IEEE half precision
	BF16                        // "BF16", 16: bfloat16
	I32                         // "I32", 32
	U32                         // "U32", 32
	F32                         // "F32", 32
	C64                         // "C64", 64: complex with float32 parts
	F64                         // "F64", 64
	I64                         // "I64", 64
	U64                         // "U64", 64

	maxDType = U64
)

var dtypeInfos = [...]struct {
	name string
	bits int
}{
	Bool:       {"BOOL", 8},
	F4:         {"F4", 4},
	F6E2M3:     {"F6_E2M3", 6},
	F6E3M2:     {"F6_E3M2", 6},
	U8:         {"U8", 8},
	I8:         {"I8", 8},
	F8E5M2:     {"F8_E5M2", 8},
	F8E4M3:     {"F8_E4M3", 8},
	F8E8M0:     {"F8_E8M0", 8},
	F8E4M3FNUZ: {"F8_E4M3FNUZ", 8},
	F8E5M2FNUZ: {"F8_E5M2FNUZ", 8},
	I16:        {"I16", 16},
	U16:        {"U16", 16},
	F16:        {"F16", 16},
	BF16:       {"BF16", 16},
	I32:        {"I32", 32},
	U32:        {"U32", 32},
	F32:        {"F32", 32},
	C64:        {"C64", 64},
	F64:        {"F64", 64},
	I64:        {"I64", 64},
	U64:        {"U64", 64},
}

// dtypeByName maps header spellings to DTypes.
var dtypeByName = func() map[string]DType {
	m := make(map[string]DType, len(dtypeInfos))
	for d := Bool; d <= maxDType; d++ {
		m[dtypeInfos[d].name] = d
	}
	return m
}()

// DTypes returns every valid DType in upstream (alignment) order.
func DTypes() []DType {
	ds := make([]DType, 0, maxDType)
	for d := Bool; d <= maxDType; d++ {
		ds = append(ds, d)
	}
	return ds
}

// Valid reports whether d is one of the declared dtypes.
func (d DType) Valid() bool { return d >= Bool && d <= maxDType }

// Float reports whether d is a floating-point dtype, whose elements
// File.Float32s converts (F64, F32, F16, BF16 and the 8-bit floats).
func (d DType) Float() bool { return canFloat32(d) }

// String returns the header spelling of d, such as "F8_E4M3", or "DType(n)"
// if d is not valid.
func (d DType) String() string {
	if !d.Valid() {
		return "DType(" + strconv.Itoa(int(d)) + ")"
	}
	return dtypeInfos[d].name
}

// BitSize returns the number of bits per element: 4 for F4, 6 for the F6
// types, 8 for BOOL and the byte-sized types, 64 for C64 (two float32
// parts), and so on. It returns 0 if d is not valid.
func (d DType) BitSize() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfos[d].bits
}

// ParseDType returns the DType whose header spelling is s. The match is
// exact and case-sensitive, as in the reference reader; an unknown name is
// an error.
func ParseDType(s string) (DType, error) {
	if d, ok := dtypeByName[s]; ok {
		return d, nil
	}
	return 0, fmt.Errorf("safetensors: unknown dtype %s", strconv.Quote(clip(s)))
}

// byteSize returns the number of elements of shape and their size in bytes
// as dtype d, checking for overflow exactly as the reference reader does:
// the element count is the running product of the dimensions in order, and
// element count × bits must be a multiple of 8.
func byteSize(d DType, shape []uint64) (nelem, nbytes uint64, err error) {
	nelem = 1
	for _, dim := range shape {
		hi, lo := bits.Mul64(nelem, dim)
		if hi != 0 {
			return 0, 0, fmt.Errorf("shape %s overflows the element count", clip(formatShape(shape)))
		}
		nelem = lo
	}
	hi, nbits := bits.Mul64(nelem, uint64(d.BitSize()))
	if hi != 0 {
		return 0, 0, fmt.Errorf("shape %s of %v overflows the size in bits", clip(formatShape(shape)), d)
	}
	if nbits%8 != 0 {
		return 0, 0, fmt.Errorf("shape %s of %v is %d bits, not a whole number of bytes",
			clip(formatShape(shape)), d, nbits)
	}
	return nelem, nbits / 8, nil
}
